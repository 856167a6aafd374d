//! Renders a [`Program`] as one self-checking C file.
//!
//! The file holds the function under test `f` (and its helpers), a probe copy `f_probe`
//! that records how close the input point comes to a kink (`fabs`, a branch threshold),
//! for f32 programs a double copy `f_ref` whose differences are the reference, a `Frame`
//! struct with every buffer the arguments point to, and a `main` that checks
//! each derivative request against central finite differences of `f` in double:
//! - every memory element reachable through a parameter is a *slot*; all are in/out;
//! - reverse and split mode: seeds `w` go into the shadows of the differentiated memory
//!   (and `wret` on the result); with L = wret * f + sum w_s * final_s, the shadow of slot
//!   s afterwards must equal dL/d initial_s, and an active scalar's returned adjoint its
//!   dL/dx;
//! - forward mode: tangent `v` on every differentiated input; each shadow afterwards must
//!   equal the directional derivative of its final value, the returned tangent that of f;
//! - after every derivative call, the primal memory must hold what `f` leaves (a shadow
//!   store into primal memory shows up there).
//!
//! `main` prints `FAIL <mode> <what>: got .. want ..` per mismatch, then `checks N` and
//! `failures M`, and returns 1 when any check failed and 3 when the probe rejects the
//! point (`SKIP`). With `-DFUZZ_PROBE_ONLY` it runs the probe alone (no AD calls), so
//! clang alone can screen a point.

use std::fmt::Write;

use super::program::{
    Act, Base, BinOp, Bound, Expr, Fun, HelperKind, Index, Mode, Op, ParamKind, Placement, Prec,
    Program, Scalar, Stmt,
};
use super::rng::Rng;

/// What the program uses, found by walking it (unused parts are not rendered).
struct Usage {
    params: Vec<bool>,
    written: Vec<bool>,
    locals: Vec<bool>,
    accs: Vec<bool>,
    helpers: Vec<bool>,
}

impl Usage {
    fn of(p: &Program) -> Usage {
        let mut u = Usage {
            params: vec![false; p.params.len()],
            written: vec![false; p.params.len()],
            locals: vec![false; p.locals.len()],
            accs: vec![false; p.accs.len()],
            helpers: vec![false; p.helpers.len()],
        };
        for s in &p.body {
            u.stmt(s);
        }
        u.expr(&p.ret);
        // Locals read only earlier locals: walk the inits from the last one down.
        for k in (0..p.locals.len()).rev() {
            if u.locals[k] {
                u.expr(&p.locals[k].init);
            }
        }
        u
    }

    fn base(&mut self, b: &Base, write: bool) {
        match b {
            Base::Param(k) | Base::Coef(k) => {
                self.params[*k] = true;
                self.written[*k] |= write;
            }
            Base::Row(k, _) => {
                self.params[*k] = true;
                self.written[*k] |= write;
            }
            Base::Local(k) => self.locals[*k] = true,
        }
    }

    fn scalar(&mut self, s: &Scalar, write: bool) {
        match s {
            Scalar::Param(k) => self.params[*k] = true,
            Scalar::StructField(k) => {
                self.params[*k] = true;
                self.written[*k] |= write;
            }
            Scalar::Acc(k) => self.accs[*k] = true,
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Lit(_) | Expr::Arg(_) => {}
            Expr::Load(b, _) => self.base(b, false),
            Expr::Scalar(s) => self.scalar(s, false),
            Expr::Bin(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Fun(_, a) => self.expr(a),
            Expr::Call(h, a, b) => {
                self.helpers[*h] = true;
                self.expr(a);
                self.expr(b);
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Store { base, op, value, .. } => {
                self.base(base, true);
                if *op != Op::Set {
                    self.base(base, false);
                }
                self.expr(value);
            }
            Stmt::SetScalar { dst, value, .. } => {
                self.scalar(dst, true);
                self.expr(value);
            }
            Stmt::Loop { body, .. } => body.iter().for_each(|s| self.stmt(s)),
            Stmt::If { cond, then, otherwise, .. } => {
                self.expr(cond);
                then.iter().chain(otherwise).for_each(|s| self.stmt(s));
            }
            Stmt::CallArray { helper, dst, src, scale } => {
                self.helpers[*helper] = true;
                self.base(dst, true);
                self.base(src, false);
                self.expr(scale);
            }
            Stmt::CallStruct { helper, param, scale } => {
                self.helpers[*helper] = true;
                self.params[*param] = true;
                self.written[*param] = true;
                self.expr(scale);
            }
        }
    }
}

/// One input/output element: its lvalue in a `Frame`, and whether it is memory (its
/// final value is observable) or a by-value scalar.
pub struct Slot {
    pub lvalue: String,
    pub label: String,
    pub param: usize,
    pub memory: bool,
}

fn slots(p: &Program, used: &Usage) -> Vec<Slot> {
    let mut out = Vec::new();
    let mut push = |lvalue: String, label: String, param: usize, memory: bool| {
        out.push(Slot { lvalue, label, param, memory })
    };
    for (k, kind) in p.params.iter().enumerate() {
        if !used.params[k] {
            continue;
        }
        match kind {
            ParamKind::Array => {
                for i in 0..p.len {
                    push(format!("a{k}[{i}]"), format!("a{k}[{i}]"), k, true);
                }
            }
            ParamKind::Struct => {
                for i in 0..p.len {
                    push(format!("m{k}_coef[{i}]"), format!("m{k}->coef[{i}]"), k, true);
                }
                push(format!("m{k}.s"), format!("m{k}->s"), k, true);
            }
            ParamKind::PtrPtr => {
                for i in 0..p.len {
                    push(format!("pp{k}_buf[{i}]"), format!("(*pp{k})[{i}]"), k, true);
                }
            }
            ParamKind::Rows => {
                for r in 0..p.rows {
                    for i in 0..p.len {
                        let lvalue = format!("rows{k}_buf[{r}][{i}]");
                        push(lvalue, format!("rows{k}[{r}][{i}]"), k, true);
                    }
                }
            }
            ParamKind::Scalar => push(format!("x{k}"), format!("x{k}"), k, false),
        }
    }
    if out.is_empty() {
        // C has no empty arrays: a program without parameters gets one inert slot.
        out.push(Slot {
            lvalue: "pad".into(),
            label: "pad".into(),
            param: NO_PARAM,
            memory: false,
        });
    }
    out
}

/// The parameter of the inert slot of a program without parameters.
const NO_PARAM: usize = usize::MAX;

/// A value drawn from the slot's name, so that what remains of a shrunk program keeps its
/// inputs. Multiples of 2^-10 are exact in float, and `x ± h v` is exact in double.
fn draw(seed: u64, salt: &str, name: &str, lo: f64, hi: f64, grid: f64) -> f64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in salt.bytes().chain(name.bytes()) {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = Rng::new(seed ^ hash);
    let x = rng.range(lo, hi);
    (x * grid).round() / grid
}

fn sign_weight(seed: u64, salt: &str, name: &str) -> f64 {
    let w = draw(seed, salt, name, 0.5, 1.5, 8.0);
    if draw(seed, "sign", name, 0.0, 1.0, 1.0) > 0.5 {
        -w
    } else {
        w
    }
}

struct Writer<'p> {
    p: &'p Program,
    /// Appended to helper and function names (`_probe` in the probe copy).
    suffix: &'static str,
    probe: bool,
    /// The precision of the libm calls: the program's own, or double in the reference
    /// copy of an f32 program (see `REFERENCE_TYPES`).
    math: Prec,
}

impl Writer<'_> {
    fn lit(&self, x: f64) -> String {
        let mut s = format!("{x:?}");
        if self.p.prec == Prec::F32 {
            s.push('f');
        }
        if x < 0.0 {
            format!("({s})")
        } else {
            s
        }
    }

    fn libm(&self, name: &str) -> String {
        match self.math {
            Prec::F32 => format!("{name}f"),
            Prec::F64 => name.to_string(),
        }
    }

    fn index(&self, i: &Index) -> String {
        match i {
            Index::Var(d) => format!("i{d}"),
            Index::Gather(d) => format!("idx[i{d}]"),
            Index::Reversed(d) => format!("(n - 1 - i{d})"),
            Index::Const(c) => c.to_string(),
        }
    }

    fn base(&self, b: &Base) -> String {
        match b {
            Base::Param(k) if self.p.params[*k] == ParamKind::PtrPtr => format!("(*pp{k})"),
            Base::Param(k) => format!("a{k}"),
            Base::Coef(k) => format!("m{k}->coef"),
            Base::Row(k, r) => format!("rows{k}[{}]", self.index(r)),
            Base::Local(k) => match self.p.locals[*k].placement {
                Placement::Heap => format!("heap{k}"),
                Placement::Stack => format!("l{k}"),
                // Each copy of f (the probe, the double reference) has its own.
                Placement::Global => format!("g{k}{}", self.suffix),
            },
        }
    }

    fn scalar(&self, s: &Scalar) -> String {
        match s {
            Scalar::Param(k) => format!("x{k}"),
            Scalar::StructField(k) => format!("m{k}->s"),
            Scalar::Acc(k) => format!("t{k}"),
        }
    }

    /// `args` names a helper's arguments (empty outside helpers).
    fn expr(&self, e: &Expr, args: &[&str]) -> String {
        match e {
            Expr::Lit(x) => self.lit(*x),
            Expr::Load(b, i) => format!("{}[{}]", self.base(b), self.index(i)),
            Expr::Scalar(s) => self.scalar(s),
            Expr::Arg(k) => args.get(*k).map_or_else(|| self.lit(0.5), |a| a.to_string()),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.expr(a, args), self.expr(b, args));
                match op {
                    BinOp::Add => format!("({a} + {b})"),
                    BinOp::Sub => format!("({a} - {b})"),
                    BinOp::Mul => format!("({a} * {b})"),
                    BinOp::SafeDiv => format!("({a} / ({} + {b} * {b}))", self.lit(1.5)),
                }
            }
            Expr::Fun(f, a) => {
                let a = self.expr(a, args);
                let sq = |c: f64| format!("({} + {a} * {a})", self.lit(c));
                match f {
                    Fun::Sin if self.probe => format!("probe_sin({a})"),
                    Fun::Cos if self.probe => format!("probe_cos({a})"),
                    Fun::Sin => format!("{}({a})", self.libm("sin")),
                    Fun::Cos => format!("{}({a})", self.libm("cos")),
                    Fun::Tanh => format!("{}({a})", self.libm("tanh")),
                    Fun::Exp if self.probe => format!("probe_exp({a})"),
                    Fun::Exp => format!("{}({a})", self.libm("exp")),
                    Fun::Log => format!("{}{}", self.libm("log"), sq(1.2)),
                    Fun::Sqrt => format!("{}{}", self.libm("sqrt"), sq(0.8)),
                    Fun::Pow if self.probe => format!("probe_pow({a})"),
                    Fun::Pow => format!("{}({}, {})", self.libm("pow"), sq(1.1), self.lit(1.5)),
                    Fun::Fabs if self.probe => format!("probe_abs({a})"),
                    Fun::Fabs => format!("{}({a})", self.libm("fabs")),
                }
            }
            Expr::Call(h, a, b) => {
                let a = self.expr(a, args);
                let a = match self.p.helpers[*h].kind {
                    HelperKind::Bits => format!("bits_of({a})"),
                    _ => a,
                };
                format!("h{h}{}({a}, {})", self.suffix, self.expr(b, args))
            }
        }
    }

    fn stmts(&self, out: &mut String, body: &[Stmt], depth: usize, indent: usize) {
        for s in body {
            self.stmt(out, s, depth, indent);
        }
    }

    fn stmt(&self, out: &mut String, s: &Stmt, depth: usize, indent: usize) {
        let pad = "  ".repeat(indent);
        let op = |op: &Op| match op {
            Op::Set => "=",
            Op::Add => "+=",
            Op::Mul => "*=",
        };
        match s {
            Stmt::Store { base, index, op: o, value } => {
                let (b, i, v) = (self.base(base), self.index(index), self.expr(value, &[]));
                let _ = writeln!(out, "{pad}{b}[{i}] {} {v};", op(o));
                if self.probe {
                    let _ = writeln!(out, "{pad}probe_seen({b}[{i}]);");
                }
            }
            Stmt::SetScalar { dst, op: o, value } => {
                let (d, v) = (self.scalar(dst), self.expr(value, &[]));
                let _ = writeln!(out, "{pad}{d} {} {v};", op(o));
                if self.probe {
                    let _ = writeln!(out, "{pad}probe_seen({d});");
                }
            }
            Stmt::Loop { bound, body } => {
                let limit = match bound {
                    Bound::N => "n",
                    Bound::Rows => "ROWS",
                };
                let _ =
                    writeln!(out, "{pad}for (int i{depth} = 0; i{depth} < {limit}; i{depth}++) {{");
                self.stmts(out, body, depth + 1, indent + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If { cond, threshold, then, otherwise } => {
                let (c, t) = (self.expr(cond, &[]), self.lit(*threshold));
                if self.probe {
                    let _ = writeln!(out, "{pad}if (probe_gt({c}, {t})) {{");
                } else {
                    let _ = writeln!(out, "{pad}if ({c} > {t}) {{");
                }
                self.stmts(out, then, depth, indent + 1);
                if !otherwise.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.stmts(out, otherwise, depth, indent + 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::CallArray { helper, dst, src, scale } => {
                let (d, s, c) = (self.base(dst), self.base(src), self.expr(scale, &[]));
                let sfx = self.suffix;
                match self.p.helpers[*helper].kind {
                    HelperKind::Fresh { op: o, out: by_arg } => {
                        // The callee's block, loaded here and freed.
                        let call = if by_arg {
                            format!("real *fresh;\n{pad}  h{helper}{sfx}(&fresh, {s}, n, {c});")
                        } else {
                            format!("real *fresh = h{helper}{sfx}({s}, n, {c});")
                        };
                        let _ = writeln!(
                            out,
                            "{pad}{{\n{pad}  {call}\n{pad}  for (int k = 0; k < n; k++)\n{pad}    \
                             {d}[k] {} fresh[k];\n{pad}  free(fresh);\n{pad}}}",
                            op(&o)
                        );
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}h{helper}{sfx}({d}, {s}, n, {c});");
                    }
                }
            }
            Stmt::CallStruct { helper, param, scale } => {
                let c = self.expr(scale, &[]);
                let _ = writeln!(out, "{pad}h{helper}{}(m{param}, {c});", self.suffix);
            }
        }
    }

    fn helpers(&self, out: &mut String, used: &Usage) {
        for (k, h) in self.p.helpers.iter().enumerate() {
            if !used.helpers[k] {
                continue;
            }
            let attr = if h.inline { "static inline" } else { "__attribute__((noinline)) static" };
            let sfx = self.suffix;
            let op = |o: &Op| match o {
                Op::Set => "=",
                Op::Add => "+=",
                Op::Mul => "*=",
            };
            match &h.kind {
                HelperKind::Scalar => {
                    let body = self.expr(&h.body, &["u0", "u1"]);
                    let _ = writeln!(
                        out,
                        "{attr} real h{k}{sfx}(real u0, real u1) {{\n  return {body};\n}}"
                    );
                }
                HelperKind::Bits => {
                    let body = self.expr(&h.body, &["u0", "u1"]);
                    let _ = writeln!(
                        out,
                        "{attr} real h{k}{sfx}(bits b0, real u1) {{\n  real u0;\n  \
                         memcpy(&u0, &b0, sizeof u0);\n  return {body};\n}}"
                    );
                }
                HelperKind::Array(o) => {
                    let body = self.expr(&h.body, &["src[k]", "s", "dst[k]"]);
                    let _ = writeln!(
                        out,
                        "{attr} void h{k}{sfx}(real *dst, const real *src, int n, real s) {{\n  \
                         for (int k = 0; k < n; k++)\n    dst[k] {} {body};\n}}",
                        op(o)
                    );
                }
                HelperKind::Fresh { out: by_arg, .. } => {
                    let body = self.expr(&h.body, &["src[k]", "s"]);
                    let (ret, first, give) = if *by_arg {
                        ("void ", "real **out, ", "*out = p;")
                    } else {
                        ("real *", "", "return p;")
                    };
                    let _ = writeln!(
                        out,
                        "{attr} {ret}h{k}{sfx}({first}const real *src, int n, real s) {{\n  \
                         real *p = malloc((size_t)n * sizeof(real));\n  \
                         for (int k = 0; k < n; k++)\n    p[k] = {body};\n  {give}\n}}"
                    );
                }
                HelperKind::Struct(o) => {
                    let body = self.expr(&h.body, &["m->coef[k]", "s", "m->s"]);
                    let _ = writeln!(
                        out,
                        "{attr} void h{k}{sfx}(M *m, real s) {{\n  \
                         for (int k = 0; k < m->n; k++)\n    m->coef[k] {} {body};\n  \
                         m->s = m->s * {} + s;\n}}",
                        op(o),
                        self.lit(0.5)
                    );
                }
            }
        }
    }

    /// The file-scope arrays of the locals placed in globals (before `function`).
    fn globals(&self, out: &mut String, used: &Usage) {
        for (k, l) in self.p.locals.iter().enumerate() {
            if used.locals[k] && l.placement == Placement::Global {
                let _ = writeln!(out, "static real {}[LEN];", self.base(&Base::Local(k)));
            }
        }
    }

    fn function(&self, out: &mut String, used: &Usage) {
        let p = self.p;
        let mut params = Vec::new();
        for (k, kind) in p.params.iter().enumerate() {
            if used.params[k] {
                params.push(match kind {
                    ParamKind::Array => format!("real *a{k}"),
                    ParamKind::Struct => format!("M *m{k}"),
                    ParamKind::PtrPtr => format!("real **pp{k}"),
                    ParamKind::Rows => format!("real **rows{k}"),
                    ParamKind::Scalar => format!("real x{k}"),
                });
            }
        }
        params.push("int n".into());
        params.push("const int *idx".into());
        let _ = writeln!(out, "real f{}({}) {{", self.suffix, params.join(", "));
        for (k, init) in p.accs.iter().enumerate() {
            if used.accs[k] {
                let _ = writeln!(out, "  real t{k} = {};", self.lit(*init));
            }
        }
        for (k, l) in p.locals.iter().enumerate() {
            if !used.locals[k] {
                continue;
            }
            let name = self.base(&Base::Local(k));
            match l.placement {
                Placement::Heap => {
                    let _ = writeln!(out, "  real *{name} = malloc(LEN * sizeof(real));");
                }
                Placement::Stack => {
                    let _ = writeln!(out, "  real {name}[LEN];");
                }
                Placement::Global => {}
            }
            let init = self.expr(&l.init, &[]);
            let _ = writeln!(out, "  for (int i0 = 0; i0 < n; i0++)\n    {name}[i0] = {init};");
        }
        self.stmts(out, &p.body, 0, 1);
        let _ = writeln!(out, "  real result = {};", self.expr(&p.ret, &[]));
        for (k, l) in p.locals.iter().enumerate() {
            if used.locals[k] && l.placement == Placement::Heap {
                let _ = writeln!(out, "  free(heap{k});");
            }
        }
        let _ = writeln!(out, "  return result;\n}}");
    }
}

/// The activity a request gives parameter `k`: written pointers are always `Dup`.
fn act(p: &Program, used: &Usage, req: usize, k: usize) -> Act {
    if k == NO_PARAM {
        return Act::Const;
    }
    let written_pointer = used.written[k] && p.params[k] != ParamKind::Scalar;
    if written_pointer {
        Act::Diff
    } else {
        p.requests[req].acts[k]
    }
}

fn frame_arg(p: &Program, k: usize, frame: &str) -> String {
    match p.params[k] {
        ParamKind::Array => format!("{frame}.a{k}"),
        ParamKind::Struct => format!("&{frame}.m{k}"),
        ParamKind::PtrPtr => format!("&{frame}.pp{k}"),
        ParamKind::Rows => format!("{frame}.rows{k}"),
        ParamKind::Scalar => format!("{frame}.x{k}"),
    }
}

/// Numeric settings per precision: FD step, comparison tolerance, kink margin.
struct Numerics {
    step: &'static str,
    tol: &'static str,
    primal_tol: &'static str,
    margin: &'static str,
}

fn numerics(prec: Prec) -> Numerics {
    match prec {
        // x ± h v stays exact on the inputs' grid. Both precisions take their differences
        // in double (`reference`), so f32 programs use the small step too: at 2^-10 the
        // differences of seed 140920 were -13243 for a tangent of -2678.
        Prec::F64 => Numerics { step: "0x1p-20", tol: "1e-6", primal_tol: "1e-9", margin: "1e-3" },
        Prec::F32 => Numerics { step: "0x1p-20", tol: "2e-2", primal_tol: "1e-4", margin: "5e-2" },
    }
}

pub fn render(p: &Program) -> String {
    let used = Usage::of(p);
    let slots = slots(p, &used);
    let (real, bits) = match p.prec {
        Prec::F32 => ("float", "unsigned int"),
        Prec::F64 => ("double", "unsigned long long"),
    };
    let num = numerics(p.prec);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "/* Gradient fuzzer program: seed {}, {} mode(s). Generated by tests/gradient_fuzz;\n \
         main checks every derivative against central finite differences. */",
        p.seed,
        p.requests.len()
    );
    o.push_str(
        "#include <math.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n\
         #include <string.h>\n\n",
    );
    let _ = writeln!(o, "typedef {real} real;");
    let _ = writeln!(o, "typedef {bits} bits;");
    // Written in terms of `real`, `bits` and `M`, so that the reference copy of an f32
    // program can repeat them in double.
    let types = "static inline bits bits_of(real x) {\n  bits b;\n  memcpy(&b, &x, sizeof b);\n  \
                 return b;\n}\ntypedef struct {\n  int n;\n  real *coef;\n  real s;\n} M;\n";
    o.push_str(types);
    let _ = writeln!(o, "#define LEN {}\n#define ROWS {}\n", p.len, p.rows);
    o.push_str(
        "/* ---- The function under test, and the derivative calls (compiled by adc). ---- */\n\
         #ifndef FUZZ_HARNESS\n",
    );
    let test = Writer { p, suffix: "", probe: false, math: p.prec };
    test.helpers(&mut o, &used);
    test.globals(&mut o, &used);
    test.function(&mut o, &used);
    let _ = write!(o, "#ifndef FUZZ_PROBE_ONLY\n{WRAPPERS}#endif\n#endif /* kernel */\n");
    o.push_str(
        "\n/* ---- The checking harness (compiled by clang). ---- */\n#ifndef FUZZ_KERNEL\n",
    );
    let _ = write!(o, "#ifndef FUZZ_PROBE_ONLY\n{PROTOTYPES}#endif\n");
    let proto = Writer { p, suffix: "", probe: false, math: p.prec };
    let mut sig = String::new();
    proto.function(&mut sig, &used);
    let _ = writeln!(o, "{};", sig.lines().next().unwrap_or("").trim_end_matches(" {"));
    let mut probe_src = String::new();
    probe_src.push_str(
        "\n/* ---- The probe copy: how close the point comes to a kink. ---- */\n\
         static double probe_margin = 1e300;\n\
         static void probe_near(double v) {\n  \
           double a = fabs(v);\n  if (!(a >= probe_margin))\n    probe_margin = a == a ? a : 0;\n}\n\
         static int probe_gt(real v, real c) {\n  probe_near((double)v - (double)c);\n  \
           return v > c;\n}\n\
         static real probe_abs(real v) {\n  probe_near(v);\n  return v < 0 ? -v : v;\n}\n",
    );
    // Every value the function stores or sets: one that overflows (a recurrence
    // `t = (a + t) * t` past its fixed point reaches inf, and its derivative is then
    // inf * 0 = NaN in any AD tool; seed 140526) rejects the point like a kink.
    let _ = write!(
        probe_src,
        "static void probe_seen(double v) {{\n  if (!(fabs(v) < {big}))\n    \
         probe_margin = 0;\n}}\n",
        big = if p.prec == Prec::F32 { "1e20" } else { "1e100" }
    );
    // An exponential or a power that overflows, even in a value no output depends on,
    // makes the derivative 0 * inf = NaN (as in any AD tool; seed 100236: a power of a
    // running sum in a loop), and sin/cos of a large argument have derivatives so large
    // that central differences are off: such points are rejected like kinks.
    for (fun, bound) in [("exp", 20), ("sin", 50), ("cos", 50)] {
        let libm = proto.libm(fun);
        let _ = write!(
            probe_src,
            "static real probe_{fun}(real v) {{\n  if (!(fabs((double)v) < {bound}))\n    \
             probe_margin = 0;\n  return {libm}(v);\n}}\n"
        );
    }
    let _ = write!(
        probe_src,
        "static real probe_pow(real v) {{\n  if (!(fabs((double)v) < 1000))\n    \
         probe_margin = 0;\n  return {}(({} + v * v), {});\n}}\n",
        proto.libm("pow"),
        proto.lit(1.1),
        proto.lit(1.5)
    );
    let probe = Writer { p, suffix: "_probe", probe: true, math: p.prec };
    probe.helpers(&mut probe_src, &used);
    probe.globals(&mut probe_src, &used);
    probe.function(&mut probe_src, &used);

    // The frame: every buffer the arguments point to.
    o.push_str("\n/* ---- Inputs: one frame for the primal, one for the shadows. ---- */\n");
    let mut frame = String::from("typedef struct {\n");
    let mut wire = String::new();
    for (k, kind) in p.params.iter().enumerate() {
        if !used.params[k] {
            continue;
        }
        match kind {
            ParamKind::Array => {
                let _ = writeln!(frame, "  real a{k}[LEN];");
            }
            ParamKind::Struct => {
                let _ = writeln!(frame, "  M m{k};\n  real m{k}_coef[LEN];");
                let _ = writeln!(wire, "  fr->m{k}.n = LEN;\n  fr->m{k}.coef = fr->m{k}_coef;");
            }
            ParamKind::PtrPtr => {
                let _ = writeln!(frame, "  real *pp{k};\n  real pp{k}_buf[LEN];");
                let _ = writeln!(wire, "  fr->pp{k} = fr->pp{k}_buf;");
            }
            ParamKind::Rows => {
                let _ = writeln!(frame, "  real *rows{k}[ROWS];\n  real rows{k}_buf[ROWS][LEN];");
                let _ = writeln!(
                    wire,
                    "  for (int r = 0; r < ROWS; r++)\n    fr->rows{k}[r] = fr->rows{k}_buf[r];"
                );
            }
            ParamKind::Scalar => {
                let _ = writeln!(frame, "  real x{k};");
            }
        }
    }
    frame.push_str("  real pad;\n} Frame;\n\n");
    let _ =
        writeln!(frame, "static void wire(Frame *fr) {{\n  memset(fr, 0, sizeof *fr);\n{wire}}}");
    o.push_str(&frame);
    let idx: Vec<String> = p.idx.iter().map(|i| i.to_string()).collect();
    let _ = writeln!(o, "static const int idx_table[LEN] = {{{}}};", idx.join(", "));
    let _ = write!(o, "\n#ifdef FUZZ_DUMP\n{DUMP}#else\n{probe_src}");
    let ns = slots.len().max(1);
    let _ = writeln!(o, "enum {{ NSLOT = {ns} }};");
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "0".to_string()
        } else {
            items.join(",\n  ")
        }
    };
    let offsets = slots.iter().map(|s| format!("offsetof(Frame, {})", s.lvalue)).collect();
    let mut access =
        format!("static const size_t slot_offset[NSLOT] = {{\n  {}}};\n", list(offsets));
    let names = slots.iter().map(|s| format!("\"{}\"", s.label)).collect();
    let _ = writeln!(o, "static const char *const slot_name[NSLOT] = {{\n  {}}};", list(names));
    let memory = slots.iter().map(|s| (s.memory as u8).to_string()).collect();
    let _ = writeln!(o, "static const int slot_memory[NSLOT] = {{{}}};", list(memory));
    let x0_values: Vec<f64> =
        slots.iter().map(|s| draw(p.value_seed, "x", &s.label, -1.0, 1.0, 1024.0)).collect();
    let w_values: Vec<f64> =
        slots.iter().map(|s| sign_weight(p.value_seed, "w", &s.label)).collect();
    let v_values: Vec<f64> =
        slots.iter().map(|s| sign_weight(p.value_seed, "v", &s.label)).collect();
    let x0 = x0_values.iter().map(|x| format!("{x:?}")).collect();
    let _ = writeln!(o, "/* The point of evaluation. */");
    let _ = writeln!(o, "static const double x0[NSLOT] = {{\n  {}}};", list(x0));
    let w = w_values.iter().map(|x| format!("{x:?}")).collect();
    let _ = writeln!(o, "/* Seeds of reverse mode: L = wret * f + sum w_s * final_s. */");
    let _ = writeln!(o, "static const double w[NSLOT] = {{\n  {}}};", list(w));
    let v = v_values.iter().map(|x| format!("{x:?}")).collect();
    let _ = writeln!(o, "/* The direction of forward mode. */");
    let _ = writeln!(o, "static const double v[NSLOT] = {{\n  {}}};", list(v));
    let wret = sign_weight(p.value_seed, "wret", "split");
    let _ = writeln!(o, "static const double wret_split = {wret:?};");
    let _ = writeln!(
        o,
        "#define STEP {}\n#define TOL {}\n#define PRIMAL_TOL {}\n#define MARGIN {}\n",
        num.step, num.tol, num.primal_tol, num.margin
    );

    let args_of = |frame: &str| -> String {
        let mut a: Vec<String> = (0..p.params.len())
            .filter(|&k| used.params[k])
            .map(|k| frame_arg(p, k, frame))
            .collect();
        a.push("LEN".into());
        a.push("idx_table".into());
        a.join(", ")
    };
    access.push_str(
        "static real *slot(Frame *fr, int s) { return (real *)((char *)fr + slot_offset[s]); }\n\
         static void load(Frame *fr, const double *x) {\n  wire(fr);\n  \
           for (int s = 0; s < NSLOT; s++)\n    *slot(fr, s) = (real)x[s];\n}\n",
    );
    o.push_str(&access);
    let evaluate = |name: &str, function: &str| {
        format!(
            "static double {name}(const double *x, double *y) {{\n  Frame fr;\n  load(&fr, x);\n  \
             double r = {function}({});\n  for (int s = 0; s < NSLOT; s++)\n    \
             y[s] = *slot(&fr, s);\n  return r;\n}}\n",
            args_of("fr")
        )
    };
    o.push_str("/* f at x: its result, and the final value of every slot in y. */\n");
    o.push_str(&evaluate("primal", "f"));
    // Finite differences of an f32 program in f32 are off wherever its terms cancel (seed
    // 140920: a product of cancelling differences, -123.3 for a derivative of -23.84);
    // they are taken of a double copy of the same function (same constants, double
    // arithmetic and libm), whose derivative the f32 one must match within TOL.
    match p.prec {
        Prec::F64 => o.push_str("#define reference primal\n"),
        Prec::F32 => {
            let copy = Writer { p, suffix: "_ref", probe: false, math: Prec::F64 };
            let mut functions = String::new();
            copy.helpers(&mut functions, &used);
            copy.globals(&mut functions, &used);
            copy.function(&mut functions, &used);
            let (define, undef): (String, String) = REFERENCE_TYPES
                .iter()
                .map(|(name, double)| {
                    (format!("#define {name} {double}\n"), format!("#undef {name}\n"))
                })
                .unzip();
            let _ = write!(
                o,
                "\n/* ---- The reference: f in double, for the finite differences. ---- */\n\
                 {define}{types}{functions}{frame}{access}{}{undef}",
                evaluate("reference", "f_ref")
            );
        }
    }
    o.push_str(CHECKER);
    let _ = writeln!(
        o,
        "static int probe(void) {{\n  Frame fr;\n  load(&fr, x0);\n  double r = f_probe({});\n  \
         if (probe_margin < MARGIN) {{\n    printf(\"SKIP a kink is %g from the point\\n\", probe_margin);\n    \
         return 0;\n  }}\n  int ok = fabs(r) < 1e3;\n  for (int s = 0; s < NSLOT; s++)\n    \
         ok &= fabs((double)*slot(&fr, s)) < 1e3;\n  if (!ok)\n    \
         printf(\"SKIP values too large (or not finite) at the point\\n\");\n  return ok;\n}}",
        args_of("fr")
    );

    let mut wrappers = String::from("extern int enzyme_dup, enzyme_const, enzyme_out;\n");
    let mut prototypes = String::new();
    let mut checks = Vec::new();
    let mut dump = String::new();
    o.push_str("\n#ifndef FUZZ_PROBE_ONLY\n");
    let used_params: Vec<usize> = (0..p.params.len()).filter(|&k| used.params[k]).collect();
    for (r, req) in p.requests.iter().enumerate() {
        let name = req.mode.name();
        let actives: Vec<usize> = used_params
            .iter()
            .copied()
            .filter(|&k| p.params[k] == ParamKind::Scalar && act(p, &used, r, k) == Act::Diff)
            .collect();
        let diff_table = slots
            .iter()
            .map(|s| ((act(p, &used, r, s.param) == Act::Diff) as u8).to_string())
            .collect();
        let _ = writeln!(o, "static const int diff_{name}[NSLOT] = {{{}}};", list(diff_table));
        // The wrapper `d_<mode>` (compiled by adc with f) takes the primal arguments and
        // the shadows; reverse and split write the adjoints of active scalars to `gout`.
        let mut params = Vec::new();
        let mut harness_args = Vec::new();
        let mut enzyme_args = vec!["(void *)f".to_string()];
        for &k in &used_params {
            let ty = match p.params[k] {
                ParamKind::Array => "real *",
                ParamKind::Struct => "M *",
                ParamKind::PtrPtr | ParamKind::Rows => "real **",
                ParamKind::Scalar => "real ",
            };
            params.push(format!("{ty}p{k}"));
            harness_args.push(frame_arg(p, k, "fr"));
            let a = act(p, &used, r, k);
            let scalar = p.params[k] == ParamKind::Scalar;
            let shadowed = a == Act::Diff && (!scalar || req.mode == Mode::Forward);
            if shadowed {
                params.push(format!("{ty}d{k}"));
                harness_args.push(frame_arg(p, k, "sh"));
            }
            enzyme_args.push(match (a, scalar, req.mode) {
                (Act::Const, _, _) => format!("enzyme_const, p{k}"),
                (Act::Diff, true, Mode::Forward) | (Act::Diff, false, _) => {
                    format!("enzyme_dup, p{k}, d{k}")
                }
                (Act::Diff, true, _) => format!("enzyme_out, p{k}"),
            });
        }
        params.push("const int *idx".into());
        harness_args.push("idx_table".into());
        enzyme_args.push("enzyme_const, LEN, enzyme_const, idx".into());
        if req.mode != Mode::Forward {
            params.push("real *gout".into());
            harness_args.push("g".into());
        }
        if req.mode == Mode::Split {
            params.push("real wret".into());
            params.push("real *primal".into());
            harness_args.push("(real)wret_split".into());
            harness_args.push("&result".into());
        }
        let enzyme_args = enzyme_args.join(", ");
        let ret = if req.mode == Mode::Forward { "real" } else { "void" };
        let signature = format!("{ret} d_{name}({})", params.join(", "));
        let _ = writeln!(prototypes, "{signature};");
        let grads_ty = (!actives.is_empty()).then(|| {
            let fields: Vec<String> = actives.iter().map(|k| format!("real d{k};")).collect();
            let _ = writeln!(wrappers, "typedef struct {{ {} }} grads_{name};", fields.join(" "));
            format!("grads_{name}")
        });
        let grads_decl = grads_ty.clone().unwrap_or_else(|| "void".into());
        let g = if grads_ty.is_some() { format!("{grads_decl} g = ") } else { String::new() };
        let store: String =
            actives.iter().enumerate().map(|(j, k)| format!("  gout[{j}] = g.d{k};\n")).collect();
        let unused = if actives.is_empty() { "  (void)gout;\n" } else { "" };
        match req.mode {
            Mode::Reverse => {
                let _ = writeln!(
                    wrappers,
                    "{grads_decl} __enzyme_autodiff_{name}(void *, ...);\n{signature} {{\n  \
                     {g}__enzyme_autodiff_{name}({enzyme_args});\n{store}{unused}}}"
                );
            }
            Mode::Split => {
                let _ = writeln!(
                    wrappers,
                    "typedef struct {{ void *tape; real primal; }} aug_{name};\n\
                     aug_{name} __enzyme_augmentfwd_{name}(void *, ...);\n\
                     {grads_decl} __enzyme_reverse_{name}(void *, ...);\n{signature} {{\n  \
                     aug_{name} a = __enzyme_augmentfwd_{name}({enzyme_args});\n  \
                     *primal = a.primal;\n  \
                     {g}__enzyme_reverse_{name}({enzyme_args}, wret, a.tape);\n{store}{unused}}}"
                );
            }
            Mode::Forward => {
                let _ = writeln!(
                    wrappers,
                    "real __enzyme_fwddiff_{name}(void *, ...);\n{signature} {{\n  \
                     return __enzyme_fwddiff_{name}({enzyme_args});\n}}"
                );
            }
        }
        // Where each slot's derivative is read after the call.
        let mut collect = String::new();
        for (s, slot) in slots.iter().enumerate() {
            if let Some(j) = actives.iter().position(|&k| k == slot.param && !slot.memory) {
                let _ = writeln!(collect, "  got[{s}] = g[{j}];");
            }
        }
        let call = format!("d_{name}({})", harness_args.join(", "));
        let forward = req.mode == Mode::Forward;
        let _ = writeln!(
            dump,
            "  {{\n    Frame fr, sh;\n    real g[{}];\n    real result = 0;\n    (void)g;\n    \
             (void)result;\n    wire(&fr);\n    wire(&sh);",
            actives.len().max(1)
        );
        for (s, slot) in slots.iter().enumerate() {
            let _ = writeln!(dump, "    fr.{} = {:?};", slot.lvalue, x0_values[s]);
            if act(p, &used, r, slot.param) == Act::Diff {
                let seed = if forward { v_values[s] } else { w_values[s] };
                let _ = writeln!(dump, "    sh.{} = {seed:?};", slot.lvalue);
            }
        }
        let dump_call = call.replace("wret_split", &format!("{wret:?}"));
        let _ = writeln!(dump, "    {}{dump_call};", if forward { "double dret = " } else { "" });
        for (s, slot) in slots.iter().enumerate() {
            if act(p, &used, r, slot.param) != Act::Diff {
                continue;
            }
            if slot.memory {
                let _ = writeln!(
                    dump,
                    "    printf(\"V {name} {s} %a\\n\", (double)sh.{});",
                    slot.lvalue
                );
            } else if let Some(j) = actives.iter().position(|&k| k == slot.param) {
                let _ = writeln!(dump, "    printf(\"V {name} {s} %a\\n\", (double)g[{j}]);");
            }
        }
        if forward {
            let _ = writeln!(dump, "    printf(\"V {name} ret %a\\n\", dret);");
        }
        dump.push_str("  }\n");
        let setup = format!(
            "  Frame fr, sh;\n  real g[{}];\n  real result = 0;\n  (void)g;\n  (void)result;\n  \
             load(&fr, x0);\n  seed(&sh, diff_{name}, {});\n",
            actives.len().max(1),
            if req.mode == Mode::Forward { "v" } else { "w" }
        );
        let _ = match req.mode {
            Mode::Reverse => writeln!(
                o,
                "static void check_{name}(void) {{\n{setup}  {call};\n  \
                 check_primal(\"{name}\", &fr, 0, 0);\n  double got[NSLOT];\n  \
                 take(&sh, got);\n{collect}  check_gradient(\"{name}\", got, diff_{name}, 1.0);\n  \
                 dump(\"{name}\", got, diff_{name}, 0, 0);\n}}"
            ),
            Mode::Split => writeln!(
                o,
                "static void check_{name}(void) {{\n{setup}  {call};\n  \
                 check_primal(\"{name}\", &fr, 1, result);\n  double got[NSLOT];\n  \
                 take(&sh, got);\n{collect}  \
                 check_gradient(\"{name}\", got, diff_{name}, wret_split);\n  \
                 dump(\"{name}\", got, diff_{name}, 0, 0);\n}}"
            ),
            Mode::Forward => writeln!(
                o,
                "static void check_{name}(void) {{\n{setup}  double dret = {call};\n  \
                 check_primal(\"{name}\", &fr, 0, 0);\n  double got[NSLOT];\n  \
                 take(&sh, got);\n  check_tangent(\"{name}\", got, dret, diff_{name});\n  \
                 dump(\"{name}\", got, diff_{name}, 1, dret);\n}}"
            ),
        };
        checks.push(format!("  check_{name}();"));
    }
    o.push_str("#endif\n\nint main(void) {\n  if (!probe())\n    return 3;\n");
    let _ = writeln!(o, "#ifndef FUZZ_PROBE_ONLY\n{}\n#endif", checks.join("\n"));
    o.push_str(
        "  printf(\"checks %d\\nfailures %d\\n\", check_count, check_failures);\n  \
         return check_failures != 0;\n}\n#endif /* dump */\n#endif /* harness */\n",
    );
    let dump = format!(
        "/* Runs each derivative once at the point and prints what it computed (checked \
         against the native program's values). */\nint main(void) {{\n{dump}  return 0;\n}}\n"
    );
    o.replace(WRAPPERS, &wrappers).replace(PROTOTYPES, &prototypes).replace(DUMP, &dump)
}

/// What the reference copy of an f32 program renames: its types become double, and the
/// frame and its accessors get copies of their own.
const REFERENCE_TYPES: [(&str, &str); 9] = [
    ("real", "double"),
    ("bits", "unsigned long long"),
    ("bits_of", "bits_of_ref"),
    ("M", "M_ref"),
    ("Frame", "Frame_ref"),
    ("wire", "wire_ref"),
    ("slot_offset", "slot_offset_ref"),
    ("slot", "slot_ref"),
    ("load", "load_ref"),
];

const WRAPPERS: &str = "@@wrappers@@\n";
const DUMP: &str = "@@dump@@\n";
const PROTOTYPES: &str = "@@prototypes@@\n";

/// The comparison code shared by every program (after `primal`).
const CHECKER: &str = r#"
static int check_count, check_failures;

/* Relative error at most tol (absolute below 1). */
static int close_to(double got, double want, double tol) {
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  return fabs(got - want) <= tol * scale;
}

static void compare(const char *mode, const char *what, const char *slot_label, double got,
                    double want, double tol) {
  check_count++;
  if (close_to(got, want, tol))
    return;
  check_failures++;
  printf("FAIL %s %s %s: got %.17g want %.17g\n", mode, what, slot_label, got, want);
}

/* What rounding alone can make a central difference at 4 STEP wrong by, for an objective
   whose terms add up to `magnitude` in absolute value: a few ulps of it, over the step.
   The differences are always taken in double (`reference`): in f32 they were what
   limited every check (seed 101311: terms of about 290 have an ulp of 3e-5, so
   differences at 2^-10 moved in steps of 0.016 and came out at -0.064 for a derivative
   of 0.014). */
static double fd_noise(double magnitude) {
  return 8 * 0x1p-52 * (fabs(magnitude) + 1) / (2 * 4 * STEP);
}

/* Whether a derivative matches central differences at STEP (fd), STEP/2 (fd_half),
   STEP/4 (fd_quarter) and 4 STEP (fd_wide): a Richardson extrapolation ((4 fd_half - fd)
   / 3, or the same one step finer), whose error is O(STEP^4) (near steep curvature, cos of
   a large product, plain differences are off by more than TOL while the derivative is
   right; seed 100439 needed the finer one: 297, 520 and 585 at the three steps for a
   tangent of 608), or fd_wide, whose rounding error is four times smaller, within TOL
   plus that rounding error (`fd_noise`). */
static int fd_agrees(double got, double fd, double fd_half, double fd_quarter, double fd_wide,
                     double magnitude, double tol) {
  double wide_scale = fabs(fd_wide) > 1.0 ? fabs(fd_wide) : 1.0;
  return close_to(got, (4 * fd_half - fd) / 3, tol) ||
         close_to(got, (4 * fd_quarter - fd_half) / 3, tol) ||
         fabs(got - fd_wide) <= tol * wide_scale + fd_noise(magnitude);
}

/* The Richardson extrapolation of central differences at 16 and 64 STEP, for where the
   finer ones drown in rounding: intermediate values far larger than the objective (seed
   200013: an objective of 786 whose differences at STEP moved by 7e-6 with the step, for
   a derivative of -2.62231742 that Enzyme computes too). Taken only after the finer
   comparisons failed: a kink within 64 STEP makes these differences wrong too, which
   keeps the failure. */
static double coarse_fd(double fd16, double fd64) {
  return (4 * fd16 - fd64) / 3;
}

/* Counts a check of `got`; a mismatch is reported against fd. `coarse` (NAN when the
   finer differences already agreed, see coarse_fd) is a last comparison. */
static void compare_fd(const char *mode, const char *what, const char *slot_label, double got,
                       double fd, double fd_half, double fd_quarter, double fd_wide,
                       double coarse, double magnitude, double tol) {
  if (fd_agrees(got, fd, fd_half, fd_quarter, fd_wide, magnitude, tol) ||
      close_to(got, coarse, tol)) {
    check_count++;
    return;
  }
  compare(mode, what, slot_label, got, fd, tol);
}

/* The shadow frame with `values` on the slots that `diff` marks (seeds or tangents). */
static void seed(Frame *sh, const int *diff, const double *values) {
  wire(sh);
  for (int s = 0; s < NSLOT; s++)
    if (diff[s])
      *slot(sh, s) = (real)values[s];
}

static void take(Frame *sh, double *got) {
  for (int s = 0; s < NSLOT; s++)
    got[s] = *slot(sh, s);
#ifdef FUZZ_SABOTAGE
  /* The fuzzer's self test: derivatives 5% off must fail the checks. */
  for (int s = 0; s < NSLOT; s++)
    got[s] = got[s] * 1.05 + 0.05;
#endif
}

/* After a derivative call the primal memory holds what f leaves there. */
static void check_primal(const char *mode, Frame *fr, int has_result, double result) {
  double y[NSLOT];
  double r = primal(x0, y);
  for (int s = 0; s < NSLOT; s++)
    if (slot_memory[s])
      compare(mode, "primal", slot_name[s], *slot(fr, s), y[s], PRIMAL_TOL);
  if (has_result)
    compare(mode, "primal", "result", result, r, PRIMAL_TOL);
}

/* L = wret * f + sum of w_s * final_s over the seeded (differentiated memory) slots. */
static double objective(const double *x, const int *diff, double wret) {
  double y[NSLOT];
  double l = wret * reference(x, y);
  for (int s = 0; s < NSLOT; s++)
    if (diff[s] && slot_memory[s])
      l += w[s] * y[s];
  return l;
}

/* dL/dx_s by central differences with step h. */
static double gradient_fd(int s, const int *diff, double wret, double h) {
  double xp[NSLOT], xm[NSLOT];
  memcpy(xp, x0, sizeof xp);
  memcpy(xm, x0, sizeof xm);
  xp[s] += h;
  xm[s] -= h;
  return (objective(xp, diff, wret) - objective(xm, diff, wret)) / (2 * h);
}

static void check_gradient(const char *mode, const double *got, const int *diff, double wret) {
  double y[NSLOT];
  double magnitude = fabs(wret * reference(x0, y));
  for (int s = 0; s < NSLOT; s++)
    if (diff[s] && slot_memory[s])
      magnitude += fabs(w[s] * y[s]);
  for (int s = 0; s < NSLOT; s++) {
    if (!diff[s])
      continue;
    double fd = gradient_fd(s, diff, wret, STEP), fd_half = gradient_fd(s, diff, wret, STEP / 2),
           fd_quarter = gradient_fd(s, diff, wret, STEP / 4),
           fd_wide = gradient_fd(s, diff, wret, 4 * STEP), coarse = NAN;
    if (!fd_agrees(got[s], fd, fd_half, fd_quarter, fd_wide, magnitude, TOL))
      coarse = coarse_fd(gradient_fd(s, diff, wret, 16 * STEP),
                         gradient_fd(s, diff, wret, 64 * STEP));
    compare_fd(mode, "dL/d", slot_name[s], got[s], fd, fd_half, fd_quarter, fd_wide, coarse,
               magnitude, TOL);
  }
}

/* The values the interpreter must reproduce (see FUZZ_DUMP). */
static void dump(const char *mode, const double *got, const int *diff, int forward, double dret) {
  for (int s = 0; s < NSLOT; s++)
    if (diff[s] && (slot_memory[s] || !forward))
      printf("V %s %d %a\n", mode, s, got[s]);
  if (forward)
    printf("V %s ret %a\n", mode, dret);
}

/* The tangents of the result (at index NSLOT) and of every slot along v, by central
   differences with step h. */
static void tangent_fd(const int *diff, double h, double *t) {
  double xp[NSLOT], xm[NSLOT], yp[NSLOT], ym[NSLOT];
  for (int s = 0; s < NSLOT; s++) {
    xp[s] = x0[s] + (diff[s] ? h * v[s] : 0);
    xm[s] = x0[s] - (diff[s] ? h * v[s] : 0);
  }
  double rp = reference(xp, yp), rm = reference(xm, ym);
  for (int s = 0; s < NSLOT; s++)
    t[s] = (yp[s] - ym[s]) / (2 * h);
  t[NSLOT] = (rp - rm) / (2 * h);
}

static void check_tangent(const char *mode, const double *got, double dret, const int *diff) {
  double t[NSLOT + 1], t_half[NSLOT + 1], t_quarter[NSLOT + 1], t_wide[NSLOT + 1];
  tangent_fd(diff, STEP, t);
  tangent_fd(diff, STEP / 2, t_half);
  tangent_fd(diff, STEP / 4, t_quarter);
  tangent_fd(diff, 4 * STEP, t_wide);
  double y[NSLOT];
  double r = reference(x0, y);
  /* The coarse differences (coarse_fd), taken only when a finer comparison failed. */
  double coarse[NSLOT + 1];
  int coarse_taken = 0;
  for (int s = 0; s <= NSLOT; s++) {
    int is_result = s == NSLOT;
    if (!is_result && !(diff[s] && slot_memory[s]))
      continue;
    double g = is_result ? dret : got[s], magnitude = is_result ? r : y[s];
    double c = NAN;
    if (!fd_agrees(g, t[s], t_half[s], t_quarter[s], t_wide[s], magnitude, TOL)) {
      if (!coarse_taken) {
        double t16[NSLOT + 1], t64[NSLOT + 1];
        tangent_fd(diff, 16 * STEP, t16);
        tangent_fd(diff, 64 * STEP, t64);
        for (int k = 0; k <= NSLOT; k++)
          coarse[k] = coarse_fd(t16[k], t64[k]);
        coarse_taken = 1;
      }
      c = coarse[s];
    }
    compare_fd(mode, "tangent of", is_result ? "result" : slot_name[s], g, t[s], t_half[s],
               t_quarter[s], t_wide[s], c, magnitude, TOL);
  }
}
"#;
