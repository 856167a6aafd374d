//! The fuzzer's program model and its random generator.
//!
//! A program is one differentiated function `f` (plus helpers) over parameters of the
//! shapes real code has: arrays, a struct with a pointer field (`M *`), a pointer to a
//! pointer (`T **`), row pointers (`T *rows[K]`) and scalars, with the trip count `n` and
//! an index table `idx` (repeated entries) as constant integer arguments. Invariants the
//! generator keeps so that every program is defined and differentiable:
//! - every index is in bounds: loop variables run to `n` (= `len`) or to `rows <= len`,
//!   `idx` entries are below `len`, constants are below the length they index;
//! - local, heap and file-scope (`static`) arrays are initialized in full at the start of
//!   every call (so no state crosses calls), and so are the blocks a fresh-block helper
//!   mallocs and returns (the caller frees them);
//! - logarithms, roots and powers take `c + e*e` (positive), divisions divide by
//!   `c + e*e`; kinks (`fabs`, branches on data) are checked at run time by the probe
//!   copy of the program, which rejects input points too close to one;
//! - a pointer parameter that is written is `Dup` in every mode (only read-only memory
//!   may be `Const`), so no derivative depends on memory that AD is told to ignore.
//!
//! Parameters, locals, helpers and accumulators that no statement uses are not rendered,
//! so shrinking only removes statements and simplifies expressions.

use super::rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Prec {
    F32,
    F64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// `T *aK`, `len` elements.
    Array,
    /// `M *mK` with `M = { int n; T *coef; T s; }`, `coef` of `len` elements.
    Struct,
    /// `T **ppK`, `*ppK` of `len` elements.
    PtrPtr,
    /// `T **rowsK`, `rows` row pointers of `len` elements each.
    Rows,
    /// `T xK` by value.
    Scalar,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Reverse,
    Forward,
    Split,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Reverse => "reverse",
            Mode::Forward => "forward",
            Mode::Split => "split",
        }
    }
}

/// What a derivative request says of one parameter: `Dup` (pointers) / `Active`
/// (scalars: `enzyme_out` in reverse mode, a tangent in forward mode) or `Const`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Act {
    Diff,
    Const,
}

#[derive(Clone, Debug)]
pub struct Request {
    pub mode: Mode,
    /// One per parameter; written pointers are differentiated whatever this says.
    pub acts: Vec<Act>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// `0..n`, the run-time trip count.
    N,
    /// `0..ROWS`, the number of row pointers.
    Rows,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// The loop variable at this nesting depth.
    Var(usize),
    /// `idx[var]`: a gather or scatter with repeated entries.
    Gather(usize),
    /// `n - 1 - var` (only for variables bounded by `n`).
    Reversed(usize),
    Const(usize),
}

/// An array: the base of an element access or a pointer argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    /// `aK` (Array) or `(*ppK)` (PtrPtr).
    Param(usize),
    /// `mK->coef`.
    Coef(usize),
    /// `rowsK[r]`.
    Row(usize, Index),
    /// A local array (`lK`, on the stack) or heap buffer (`hK`, malloc/free).
    Local(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// `xK`, a by-value parameter (assignable: it is the callee's copy).
    Param(usize),
    /// `mK->s`.
    StructField(usize),
    /// `tK`, a local accumulator.
    Acc(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `a / (1.5 + b*b)`.
    SafeDiv,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fun {
    Sin,
    Cos,
    Tanh,
    Exp,
    /// `log(1.2 + e*e)`.
    Log,
    /// `sqrt(0.8 + e*e)`.
    Sqrt,
    /// `pow(1.1 + e*e, 1.5)`.
    Pow,
    /// `fabs(e)`: a kink at 0, watched by the probe.
    Fabs,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(f64),
    Load(Base, Index),
    Scalar(Scalar),
    /// A helper's argument (helper bodies only).
    Arg(usize),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Fun(Fun, Box<Expr>),
    /// A scalar helper `T hK(T, T)`.
    Call(usize, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Set,
    Add,
    Mul,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Store {
        base: Base,
        index: Index,
        op: Op,
        value: Expr,
    },
    SetScalar {
        dst: Scalar,
        op: Op,
        value: Expr,
    },
    Loop {
        bound: Bound,
        body: Vec<Stmt>,
    },
    /// `if (cond > threshold) { then } else { otherwise }`: a branch on data.
    If {
        cond: Expr,
        threshold: f64,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// `hK(dst, src, n, scale)` of an array helper; of a fresh-block helper,
    /// `{ real *fresh = hK(src, n, scale); for (k < n) dst[k] op= fresh[k]; free(fresh); }`
    /// (or `hK(&fresh, src, n, scale)`), see [`HelperKind::Fresh`].
    CallArray {
        helper: usize,
        dst: Base,
        src: Base,
        scale: Expr,
    },
    /// `hK(mP, scale)` of a struct helper.
    CallStruct {
        helper: usize,
        param: usize,
        scale: Expr,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum HelperKind {
    /// `T hK(T a0, T a1) { return body; }`.
    Scalar,
    /// As `Scalar`, but the first argument travels as the bits of an unsigned integer
    /// of its width (`memcpy` on both sides): clang -O2 passes an `i64` that carries the
    /// double's derivative (Enzyme's subdoublestore).
    Bits,
    /// `void hK(T *dst, const T *src, int n, T s)`: for k < n, `dst[k] op= body` with
    /// `Arg(0) = src[k]`, `Arg(1) = s`, `Arg(2) = dst[k]`.
    Array(Op),
    /// `void hK(M *m, T s)`: for k < m->n, `m->coef[k] op= body` with
    /// `Arg(0) = m->coef[k]`, `Arg(1) = s`, `Arg(2) = m->s`; then `m->s = m->s * 0.5 + s`.
    Struct(Op),
    /// `real *hK(const real *src, int n, real s)`: mallocs `n` elements, fills
    /// `p[k] = body` with `Arg(0) = src[k]`, `Arg(1) = s`, and returns the block; with
    /// `out`, `void hK(real **out, const real *src, int n, real s)` stores it to `*out`
    /// instead. The caller (a [`Stmt::CallArray`]) loads from the block, `dst[k] op=
    /// fresh[k]`, and frees it: derivatives flow through memory the callee allocated.
    Fresh { op: Op, out: bool },
}

#[derive(Clone, Debug)]
pub struct Helper {
    /// `static` (inlined by clang at -O2 and by adc's inliner) or `noinline`.
    pub inline: bool,
    pub kind: HelperKind,
    pub body: Expr,
}

/// Where a local array lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    Stack,
    /// malloc/free.
    Heap,
    /// A file-scope `static` array: adc gives it a shadow global in reverse and split mode
    /// (forward mode refuses globals that need one, so such programs have no forward
    /// request). It is initialized in full on every call, like the others.
    Global,
}

#[derive(Clone, Debug)]
pub struct LocalArray {
    pub placement: Placement,
    /// Element `i0` of the initialization loop (`Index::Var(0)` is in scope).
    pub init: Expr,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    /// Seeds the input values, weights and directions (per slot name, so that shrinking
    /// keeps the values of what remains).
    pub value_seed: u64,
    pub prec: Prec,
    pub len: usize,
    pub rows: usize,
    pub params: Vec<ParamKind>,
    pub idx: Vec<usize>,
    pub locals: Vec<LocalArray>,
    pub accs: Vec<f64>,
    pub helpers: Vec<Helper>,
    pub body: Vec<Stmt>,
    pub ret: Expr,
    pub requests: Vec<Request>,
}

struct Gen<'p> {
    rng: Rng,
    params: &'p [ParamKind],
    len: usize,
    rows: usize,
    locals: usize,
    accs: usize,
    scalar_helpers: Vec<usize>,
    /// Array and fresh-block helpers (both called by `Stmt::CallArray`).
    array_helpers: Vec<usize>,
    struct_helpers: Vec<usize>,
    /// Bounds of the loops around the point of generation, outermost first.
    loops: Vec<Bound>,
}

/// Draws the program of `seed`.
pub fn generate(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let prec = if rng.chance(30) { Prec::F32 } else { Prec::F64 };
    let len = 3 + rng.below(4);
    let rows = 2 + rng.below(2.min(len - 1));
    let param_count = 2 + rng.below(4);
    let mut params = Vec::new();
    for _ in 0..param_count {
        params.push(*rng.pick(&[
            ParamKind::Array,
            ParamKind::Array,
            ParamKind::Struct,
            ParamKind::PtrPtr,
            ParamKind::Rows,
            ParamKind::Scalar,
            ParamKind::Scalar,
        ]));
    }
    let idx = (0..len).map(|_| rng.below(len)).collect();
    let mut helpers = Vec::new();
    for _ in 0..rng.below(4) {
        let kind = match rng.below(5) {
            // One draw for both keeps every other choice of a seed as it was.
            0 => HelperKind::Scalar,
            1 => HelperKind::Bits,
            2 => HelperKind::Array(*rng.pick(&[Op::Set, Op::Add, Op::Mul])),
            3 => HelperKind::Struct(*rng.pick(&[Op::Set, Op::Add])),
            _ => {
                let op = *rng.pick(&[Op::Set, Op::Add, Op::Mul]);
                HelperKind::Fresh { op, out: rng.chance(50) }
            }
        };
        helpers.push(Helper { inline: rng.chance(50), kind, body: Expr::Lit(0.0) });
    }
    let has_struct = params.contains(&ParamKind::Struct);
    let local_count = rng.below(3);
    let acc_count = 1 + rng.below(2);
    let accs = (0..acc_count).map(|_| round(rng.range(-0.5, 0.5))).collect();
    let mut g = Gen {
        rng,
        params: &params,
        len,
        rows,
        locals: local_count,
        accs: acc_count,
        scalar_helpers: Vec::new(),
        array_helpers: Vec::new(),
        struct_helpers: Vec::new(),
        loops: Vec::new(),
    };
    // Helper bodies first, without calls (no recursion).
    for h in helpers.iter_mut() {
        let args = match h.kind {
            HelperKind::Scalar | HelperKind::Bits | HelperKind::Fresh { .. } => 2,
            HelperKind::Array(_) | HelperKind::Struct(_) => 3,
        };
        h.body = g.helper_body(args, 2);
    }
    for (k, h) in helpers.iter().enumerate() {
        match h.kind {
            HelperKind::Scalar | HelperKind::Bits => g.scalar_helpers.push(k),
            HelperKind::Array(_) | HelperKind::Fresh { .. } => g.array_helpers.push(k),
            HelperKind::Struct(_) if has_struct => g.struct_helpers.push(k),
            HelperKind::Struct(_) => {}
        }
    }
    let mut locals = Vec::new();
    for _ in 0..local_count {
        g.loops.push(Bound::N);
        let init = g.expr(1);
        g.loops.pop();
        let placement = if g.rng.chance(50) { Placement::Heap } else { Placement::Stack };
        locals.push(LocalArray { placement, init });
    }
    // Locals are initialized in declaration order and may read earlier ones only; the
    // generator let them read any, so drop loads of later locals.
    for (k, l) in locals.iter_mut().enumerate() {
        l.init = drop_later_locals(&l.init, k);
    }
    let mut body = Vec::new();
    for _ in 0..2 + g.rng.below(4) {
        body.push(g.top_stmt());
    }
    let ret = g.expr(2);
    let mut requests = Vec::new();
    for mode in [Mode::Reverse, Mode::Forward, Mode::Split] {
        let acts =
            params.iter().map(|_| if g.rng.chance(75) { Act::Diff } else { Act::Const }).collect();
        requests.push(Request { mode, acts });
    }
    let value_seed = g.rng.next_u64();
    // Drawn last, so that every earlier choice of a seed stays as it was.
    for local in locals.iter_mut() {
        if local.placement == Placement::Stack && g.rng.chance(25) {
            local.placement = Placement::Global;
        }
    }
    if locals.iter().any(|l| l.placement == Placement::Global) {
        requests.retain(|r| r.mode != Mode::Forward);
    }
    Program {
        seed,
        value_seed,
        prec,
        len,
        rows,
        params: params.clone(),
        idx,
        locals,
        accs,
        helpers,
        body,
        ret,
        requests,
    }
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn drop_later_locals(e: &Expr, limit: usize) -> Expr {
    let sub = |x: &Expr| Box::new(drop_later_locals(x, limit));
    match e {
        Expr::Load(Base::Local(k), _) if *k >= limit => Expr::Lit(0.25),
        Expr::Bin(op, a, b) => Expr::Bin(*op, sub(a), sub(b)),
        Expr::Fun(f, a) => Expr::Fun(*f, sub(a)),
        Expr::Call(h, a, b) => Expr::Call(*h, sub(a), sub(b)),
        other => other.clone(),
    }
}

impl Gen<'_> {
    fn lit(&mut self) -> f64 {
        round(self.rng.range(-1.5, 1.5))
    }

    fn helper_body(&mut self, args: usize, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(25) {
            return if self.rng.chance(80) {
                Expr::Arg(self.rng.below(args))
            } else {
                Expr::Lit(self.lit())
            };
        }
        if self.rng.chance(35) {
            let f = self.fun();
            return Expr::Fun(f, Box::new(self.helper_body(args, depth - 1)));
        }
        let op = self.binop();
        Expr::Bin(
            op,
            Box::new(self.helper_body(args, depth - 1)),
            Box::new(self.helper_body(args, depth - 1)),
        )
    }

    fn fun(&mut self) -> Fun {
        *self.rng.pick(&[
            Fun::Sin,
            Fun::Cos,
            Fun::Tanh,
            Fun::Exp,
            Fun::Log,
            Fun::Sqrt,
            Fun::Pow,
            Fun::Fabs,
        ])
    }

    fn binop(&mut self) -> BinOp {
        *self.rng.pick(&[
            BinOp::Add,
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Mul,
            BinOp::SafeDiv,
        ])
    }

    /// An index valid for an array of `len` elements.
    fn index(&mut self) -> Index {
        if self.loops.is_empty() || self.rng.chance(10) {
            return Index::Const(self.rng.below(self.len));
        }
        let var = self.rng.below(self.loops.len());
        match self.rng.below(10) {
            0..=1 => Index::Gather(var),
            2 if self.loops[var] == Bound::N => Index::Reversed(var),
            _ => Index::Var(var),
        }
    }

    /// An index valid for the row pointers.
    fn row_index(&mut self) -> Index {
        let row_vars: Vec<usize> =
            (0..self.loops.len()).filter(|&d| self.loops[d] == Bound::Rows).collect();
        if row_vars.is_empty() || self.rng.chance(15) {
            Index::Const(self.rng.below(self.rows))
        } else {
            Index::Var(*self.rng.pick(&row_vars))
        }
    }

    /// An array of any parameter or local (read or written: every written pointer
    /// parameter becomes `Dup`).
    fn base(&mut self) -> Option<Base> {
        let mut choices = Vec::new();
        for (k, p) in self.params.iter().enumerate() {
            match p {
                ParamKind::Array | ParamKind::PtrPtr => choices.push(4 * k),
                ParamKind::Struct => choices.push(1 + 4 * k),
                ParamKind::Rows => choices.push(2 + 4 * k),
                ParamKind::Scalar => {}
            }
        }
        for l in 0..self.locals {
            choices.push(3 + 4 * l);
        }
        if choices.is_empty() {
            return None;
        }
        let c = *self.rng.pick(&choices);
        Some(match c % 4 {
            0 => Base::Param(c / 4),
            1 => Base::Coef(c / 4),
            2 => {
                let r = self.row_index();
                Base::Row(c / 4, r)
            }
            _ => Base::Local(c / 4),
        })
    }

    fn scalar(&mut self) -> Scalar {
        let mut choices = Vec::new();
        for (k, p) in self.params.iter().enumerate() {
            match p {
                ParamKind::Scalar => choices.push(Scalar::Param(k)),
                ParamKind::Struct => choices.push(Scalar::StructField(k)),
                _ => {}
            }
        }
        for a in 0..self.accs {
            choices.push(Scalar::Acc(a));
        }
        self.rng.pick(&choices).clone()
    }

    fn leaf(&mut self) -> Expr {
        match self.rng.below(10) {
            0..=5 => match self.base() {
                Some(b) => {
                    let i = self.index();
                    Expr::Load(b, i)
                }
                None => Expr::Scalar(self.scalar()),
            },
            6..=8 => Expr::Scalar(self.scalar()),
            _ => Expr::Lit(self.lit()),
        }
    }

    fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(30) {
            return self.leaf();
        }
        match self.rng.below(10) {
            0..=2 => {
                let f = self.fun();
                Expr::Fun(f, Box::new(self.expr(depth - 1)))
            }
            3 if !self.scalar_helpers.is_empty() => {
                let h = *self.rng.pick(&self.scalar_helpers.clone());
                Expr::Call(h, Box::new(self.expr(depth - 1)), Box::new(self.expr(depth - 1)))
            }
            _ => {
                let op = self.binop();
                Expr::Bin(op, Box::new(self.expr(depth - 1)), Box::new(self.expr(depth - 1)))
            }
        }
    }

    fn op(&mut self) -> Op {
        *self.rng.pick(&[Op::Set, Op::Set, Op::Add, Op::Add, Op::Mul])
    }

    fn store(&mut self) -> Stmt {
        match self.base() {
            Some(base) => {
                let index = self.index();
                let op = self.op();
                let value = self.expr(2);
                Stmt::Store { base, index, op, value }
            }
            None => self.set_scalar(),
        }
    }

    fn set_scalar(&mut self) -> Stmt {
        let dst = self.scalar();
        let op = self.op();
        let value = self.expr(2);
        Stmt::SetScalar { dst, op, value }
    }

    fn branch(&mut self, depth: usize) -> Stmt {
        let cond = self.expr(1);
        let threshold = round(self.rng.range(-0.5, 0.5));
        let then = (0..1 + self.rng.below(2)).map(|_| self.inner_stmt(depth)).collect();
        let otherwise = (0..self.rng.below(2)).map(|_| self.inner_stmt(depth)).collect();
        Stmt::If { cond, threshold, then, otherwise }
    }

    fn call(&mut self) -> Option<Stmt> {
        if !self.struct_helpers.is_empty() && self.rng.chance(50) {
            let helper = *self.rng.pick(&self.struct_helpers.clone());
            let structs: Vec<usize> =
                (0..self.params.len()).filter(|&k| self.params[k] == ParamKind::Struct).collect();
            let param = *self.rng.pick(&structs);
            let scale = self.expr(1);
            return Some(Stmt::CallStruct { helper, param, scale });
        }
        if self.array_helpers.is_empty() {
            return None;
        }
        let helper = *self.rng.pick(&self.array_helpers.clone());
        let dst = self.base()?;
        // In place a third of the time.
        let src = if self.rng.chance(33) { dst.clone() } else { self.base()? };
        let scale = self.expr(1);
        Some(Stmt::CallArray { helper, dst, src, scale })
    }

    fn inner_stmt(&mut self, depth: usize) -> Stmt {
        match self.rng.below(10) {
            0..=4 => self.store(),
            5 | 6 => self.set_scalar(),
            7 if depth > 0 => self.branch(depth - 1),
            8 if depth > 0 && self.loops.len() < 2 => self.lp(Bound::N, depth - 1),
            _ => self.store(),
        }
    }

    fn lp(&mut self, bound: Bound, depth: usize) -> Stmt {
        self.loops.push(bound);
        let body = (0..1 + self.rng.below(3)).map(|_| self.inner_stmt(depth)).collect();
        self.loops.pop();
        Stmt::Loop { bound, body }
    }

    fn top_stmt(&mut self) -> Stmt {
        match self.rng.below(12) {
            0..=4 => self.lp(Bound::N, 2),
            5 if self.params.contains(&ParamKind::Rows) => {
                // Row pointers: an outer loop over rows around a loop over columns.
                self.loops.push(Bound::Rows);
                let inner = self.lp(Bound::N, 1);
                let mut body = vec![inner];
                if self.rng.chance(40) {
                    body.push(self.inner_stmt(0));
                }
                self.loops.pop();
                Stmt::Loop { bound: Bound::Rows, body }
            }
            6 | 7 => self.call().unwrap_or_else(|| self.set_scalar()),
            8 => self.branch(1),
            9 => self.store(),
            _ => self.set_scalar(),
        }
    }
}
