//! A generator of random *executable* modules, for differential tests of the passes
//! (interpreter before vs after). Where `generate` covers every syntactic corner, this one
//! aims at programs that mostly run to completion with defined behaviour, so that
//! comparing results means something: structured control flow (if/else with merge
//! parameters, counted loops with carried values, some with a second exit, nested),
//! integer and float arithmetic,
//! scalar stack slots (mem2reg's food), 64-byte buffers (pointer parameters and array
//! allocas) accessed through masked `ptradd` offsets, calls to earlier functions (no
//! recursion, so everything terminates) and to libm.
//!
//! Undefined behaviour is rare but deliberate (a division that may overflow, an unmasked
//! offset, an uninitialized buffer), and so are traps (`abort`, `exit`), so that tests
//! also see how passes treat errors.
//! Driven by the same `Choices` stream as `generate`: shrinking the list shrinks the
//! program. The output is text, so a failure prints a reproducer as it is.

use std::fmt::Write;

use super::Choices;

/// Bytes of every buffer a generated function may access through a pointer; the test
/// harness passes pointer arguments to buffers of this size.
pub const BUFFER_BYTES: u64 = 64;

/// The types generated programs compute with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    I1,
    I32,
    I64,
    F64,
    /// A pointer to a `BUFFER_BYTES` buffer.
    Ptr,
}

impl Scalar {
    pub fn text(self) -> &'static str {
        match self {
            Scalar::I1 => "i1",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F64 => "f64",
            Scalar::Ptr => "ptr",
        }
    }
}

/// The signature of one generated function.
#[derive(Clone, Debug)]
pub struct ProgramFunc {
    pub name: String,
    pub params: Vec<Scalar>,
    pub ret: Option<Scalar>,
}

/// A generated module: its text and its functions (every one of them external, so passes
/// keep them and tests can call each).
#[derive(Clone)]
pub struct Program {
    pub text: String,
    pub funcs: Vec<ProgramFunc>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\n{}", self.text)
    }
}

/// Random executable modules.
pub fn program_strategy() -> impl proptest::strategy::Strategy<Value = Program> {
    use proptest::prelude::*;
    prop::collection::vec(any::<u32>(), 0..1500).prop_map(|choices| program(&choices))
}

/// Builds a module from `choices`.
pub fn program(choices: &[u32]) -> Program {
    let c = &mut Choices::new(choices);
    let mut text = String::from(
        "declare @sin(f64) -> f64 readnone nounwind\ndeclare @cos(f64) -> f64 readnone nounwind\n\
         declare @abort() noreturn nounwind\ndeclare @exit(i32) noreturn nounwind\n",
    );
    let mut funcs: Vec<ProgramFunc> = Vec::new();
    let n = 1 + c.below(3) as usize;
    for i in 0..n {
        let params: Vec<Scalar> = (0..c.below(5))
            .map(|_| c.pick(&[Scalar::I64, Scalar::Ptr, Scalar::F64, Scalar::I32, Scalar::I64]))
            .collect();
        let ret = c.pick(&[Some(Scalar::I64), Some(Scalar::F64), None, Some(Scalar::I32)]);
        let sig = ProgramFunc { name: format!("f{i}"), params, ret };
        let body = FuncGen::new(c, &funcs, &sig).generate();
        text.push('\n');
        text.push_str(&body);
        funcs.push(sig);
    }
    Program { text, funcs }
}

/// A value in scope.
#[derive(Clone)]
struct Val {
    name: String,
    ty: Scalar,
}

struct FuncGen<'c, 'd, 'f> {
    c: &'c mut Choices<'d>,
    callees: &'f [ProgramFunc],
    sig: &'f ProgramFunc,
    out: String,
    next: usize,
    /// Values usable at the current position (a stack: scopes truncate it).
    avail: Vec<Val>,
    /// Pointers to `BUFFER_BYTES` buffers, all defined in the entry block.
    buffers: Vec<String>,
    /// 8-byte stack slots (`alloca i64` / `alloca f64`), all defined in the entry block.
    slots: Vec<Val>,
    /// Statements left to generate in this function.
    budget: u32,
}

const INT_OPS: &[&str] = &[
    "add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "smin", "smax", "umin", "umax",
    "udiv", "urem", "sdiv", "srem", "add", "sub", "mul",
];
const FLOAT_OPS: &[&str] =
    &["fadd", "fsub", "fmul", "fdiv", "fminnum", "fmaxnum", "copysign", "fadd", "fmul", "frem"];
const INT_CCS: &[&str] = &["eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"];
const FLOAT_CCS: &[&str] = &["oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ult", "une"];

impl<'c, 'd, 'f> FuncGen<'c, 'd, 'f> {
    fn new(c: &'c mut Choices<'d>, callees: &'f [ProgramFunc], sig: &'f ProgramFunc) -> Self {
        FuncGen {
            c,
            callees,
            sig,
            out: String::new(),
            next: 0,
            avail: Vec::new(),
            buffers: Vec::new(),
            slots: Vec::new(),
            budget: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn line(&mut self, s: &str) {
        self.out.push_str("  ");
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// Emits `%v = rhs` and makes the result available.
    fn def(&mut self, ty: Scalar, rhs: &str) -> String {
        let name = self.fresh("%v");
        self.line(&format!("{name} = {rhs}"));
        self.avail.push(Val { name: name.clone(), ty });
        name
    }

    fn generate(mut self) -> String {
        let params: Vec<String> = self
            .sig
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("%a{i}: {}", t.text()))
            .collect();
        let ret = self.sig.ret.map(|t| format!(" -> {}", t.text())).unwrap_or_default();
        let mut header =
            format!("func @{}({}){ret} {{\n^entry:\n", self.sig.name, params.join(", "));
        for (i, t) in self.sig.params.iter().enumerate() {
            let name = format!("%a{i}");
            if *t == Scalar::Ptr {
                self.buffers.push(name);
            } else {
                self.avail.push(Val { name, ty: *t });
            }
        }
        // Stack memory, all in the entry block so that it dominates every use.
        for _ in 0..self.c.below(3) {
            let elem = self.c.pick(&["i64", "f64"]);
            let p = self.fresh("%buf");
            self.line(&format!("{p} = alloca [8 x {elem}], align 8"));
            if !self.c.one_in(10) {
                let byte = self.c.pick(&[0, 0x3f, 0x41, 0xff, 7]);
                let b = self.def(Scalar::I64, &format!("const i64 {byte}"));
                let b8 = self.fresh("%v");
                self.line(&format!("{b8} = trunc {b} to i8"));
                let len = self.def(Scalar::I64, &format!("const i64 {BUFFER_BYTES}"));
                self.line(&format!("memset {p}, {b8}, {len}"));
            }
            self.buffers.push(p);
        }
        if self.buffers.is_empty() {
            // Every memory statement needs a buffer: a zeroed one in the entry block
            // dominates all of them.
            let p = self.fresh("%buf");
            self.line(&format!("{p} = alloca [8 x i64], align 8"));
            let zero = self.def(Scalar::I64, "const i64 0");
            let z8 = self.fresh("%v");
            self.line(&format!("{z8} = trunc {zero} to i8"));
            let len = self.def(Scalar::I64, &format!("const i64 {BUFFER_BYTES}"));
            self.line(&format!("memset {p}, {z8}, {len}"));
            self.buffers.push(p);
        }
        for _ in 0..self.c.below(4) {
            let ty = self.c.pick(&[Scalar::I64, Scalar::F64]);
            let p = self.fresh("%slot");
            self.line(&format!("{p} = alloca {}, align 8", ty.text()));
            if !self.c.one_in(10) {
                let v = self.value(ty);
                self.line(&format!("store {v}, {p}, align 8"));
            }
            self.slots.push(Val { name: p, ty });
        }
        self.budget = 4 + self.c.below(30);
        self.block(0);
        // Mostly, everything still in scope flows into the result, so that a wrong value
        // anywhere is seen; sometimes one value alone, so that dead code stays for dce.
        let checksum = !self.c.one_in(4);
        match self.sig.ret {
            Some(t) => {
                let v = if checksum { self.checksum(t) } else { self.value(t) };
                self.line(&format!("ret {v}"));
            }
            None => {
                if checksum {
                    let sum = self.checksum(Scalar::I64);
                    let p = self.buffer();
                    self.line(&format!("store {sum}, {p}, align 8"));
                }
                self.line("ret");
            }
        }
        header.push_str(&self.out);
        header.push_str("}\n");
        header
    }

    /// Every value in scope folded into one value of type `ty` (NaNs made canonical
    /// first: passes may change NaN payloads).
    fn checksum(&mut self, ty: Scalar) -> String {
        let values = self.avail.clone();
        let mut sum = self.def(Scalar::I64, "const i64 0");
        for (i, v) in values.iter().enumerate() {
            let word = match v.ty {
                Scalar::I64 => v.name.clone(),
                Scalar::I1 | Scalar::I32 => {
                    self.def(Scalar::I64, &format!("zext {} to i64", v.name))
                }
                Scalar::F64 => {
                    let nan = self.def(Scalar::I1, &format!("fcmp uno f64 {0}, {0}", v.name));
                    let canon = self.def(Scalar::F64, "const f64 nan");
                    let x =
                        self.def(Scalar::F64, &format!("select f64 {nan}, {canon}, {}", v.name));
                    self.def(Scalar::I64, &format!("bitcast {x} to i64"))
                }
                Scalar::Ptr => continue,
            };
            // Alternate so that equal values do not cancel out.
            let op = if i % 2 == 0 { "xor" } else { "add" };
            let rotated = self.def(Scalar::I64, &format!("const i64 {}", 1 + i % 7));
            let shifted = self.def(Scalar::I64, &format!("shl i64 {sum}, {rotated}"));
            sum = self.def(Scalar::I64, &format!("{op} i64 {shifted}, {word}"));
        }
        match ty {
            Scalar::I64 => sum,
            Scalar::I32 => self.def(Scalar::I32, &format!("trunc {sum} to i32")),
            Scalar::F64 => self.def(Scalar::F64, &format!("bitcast {sum} to f64")),
            Scalar::I1 => self.def(Scalar::I1, &format!("trunc {sum} to i1")),
            Scalar::Ptr => unreachable!("functions do not return pointers"),
        }
    }

    /// A sequence of statements at loop/branch nesting `depth`.
    fn block(&mut self, depth: u32) {
        let n = 1 + self.c.below(6);
        for _ in 0..n {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.statement(depth);
        }
    }

    fn statement(&mut self, depth: u32) {
        match self.c.below(18) {
            0..=3 => self.int_binary(),
            4 | 5 => self.float_op(),
            6 => {
                self.compare();
            }
            7 => self.select(),
            8 => self.cast(),
            9 => self.load(),
            10 => self.store(),
            11 | 12 => self.slot_access(),
            13 => self.call(),
            14 if depth > 0 && self.c.one_in(4) => self.trap(),
            14 => self.bulk_memory(),
            15 if depth < 3 => self.if_else(depth),
            16 | 17 if depth < 3 => self.counted_loop(depth),
            _ => self.int_binary(),
        }
    }

    fn constant(&mut self, ty: Scalar) -> String {
        let literal = match ty {
            Scalar::I1 => self.c.pick(&["true", "false"]).to_string(),
            Scalar::I32 | Scalar::I64 => match self.c.below(6) {
                0 => (i64::from(self.c.below(9)) - 4).to_string(),
                1 => self.c.pick(&["-1", "1", "2", "8", "63", "-2147483648", "255"]).to_string(),
                2 if ty == Scalar::I64 => {
                    self.c.pick(&["-9223372036854775808", "9223372036854775807"]).to_string()
                }
                _ => self.c.below(20).to_string(),
            },
            Scalar::F64 => self
                .c
                .pick(&[
                    "0.0", "-0.0", "1.0", "0.5", "-2.5", "3.0", "0.1", "1e300", "nan", "inf",
                    "-0.0",
                ])
                .to_string(),
            Scalar::Ptr => unreachable!("pointers come from `buffers`"),
        };
        self.def(ty, &format!("const {} {literal}", ty.text()))
    }

    /// A value of type `ty`: an available one, or a new constant.
    fn value(&mut self, ty: Scalar) -> String {
        if ty == Scalar::Ptr {
            return self.buffer();
        }
        let candidates: Vec<String> =
            self.avail.iter().filter(|v| v.ty == ty).map(|v| v.name.clone()).collect();
        if !candidates.is_empty() && !self.c.one_in(4) {
            return self.c.pick(&candidates);
        }
        self.constant(ty)
    }

    /// A pointer to a buffer (there is always one: see `generate`).
    fn buffer(&mut self) -> String {
        let buffers = self.buffers.clone();
        self.c.pick(&buffers)
    }

    fn int_type(&mut self) -> Scalar {
        self.c.pick(&[Scalar::I64, Scalar::I32, Scalar::I64])
    }

    fn int_binary(&mut self) {
        let ty = self.int_type();
        let op = self.c.pick(INT_OPS);
        let a = self.value(ty);
        let mut b = self.value(ty);
        if matches!(op, "udiv" | "urem" | "sdiv" | "srem") {
            // Never zero; INT_MIN / -1 stays possible (and is an error, rarely).
            let one = self.def(ty, &format!("const {} 1", ty.text()));
            b = self.def(ty, &format!("or {} {b}, {one}", ty.text()));
        }
        let flags = match op {
            "add" | "sub" | "mul" | "shl" if self.c.one_in(6) => {
                self.c.pick(&["nsw ", "nuw ", "nsw nuw "])
            }
            _ => "",
        };
        self.def(ty, &format!("{op} {flags}{} {a}, {b}", ty.text()));
    }

    fn float_op(&mut self) {
        match self.c.below(6) {
            0 => {
                let op = self.c.pick(&["fneg", "fabs", "sqrt", "floor", "ceil"]);
                let a = self.value(Scalar::F64);
                self.def(Scalar::F64, &format!("{op} f64 {a}"));
            }
            1 => {
                let [a, b, d] = [(); 3].map(|_| self.value(Scalar::F64));
                self.def(Scalar::F64, &format!("fma f64 {a}, {b}, {d}"));
            }
            2 => {
                let f = self.c.pick(&["sin", "cos"]);
                let a = self.value(Scalar::F64);
                self.def(Scalar::F64, &format!("call @{f}({a})"));
            }
            _ => {
                let op = self.c.pick(FLOAT_OPS);
                let a = self.value(Scalar::F64);
                let b = self.value(Scalar::F64);
                self.def(Scalar::F64, &format!("{op} f64 {a}, {b}"));
            }
        }
    }

    fn compare(&mut self) -> String {
        if self.c.one_in(3) {
            let cc = self.c.pick(FLOAT_CCS);
            let a = self.value(Scalar::F64);
            let b = self.value(Scalar::F64);
            self.def(Scalar::I1, &format!("fcmp {cc} f64 {a}, {b}"))
        } else {
            let ty = self.int_type();
            let cc = self.c.pick(INT_CCS);
            let a = self.value(ty);
            let b = self.value(ty);
            self.def(Scalar::I1, &format!("icmp {cc} {} {a}, {b}", ty.text()))
        }
    }

    fn condition(&mut self) -> String {
        if self.c.one_in(3) {
            self.value(Scalar::I1)
        } else {
            self.compare()
        }
    }

    fn select(&mut self) {
        let ty = self.c.pick(&[Scalar::I64, Scalar::F64, Scalar::I32]);
        let cond = self.condition();
        let a = self.value(ty);
        let b = self.value(ty);
        self.def(ty, &format!("select {} {cond}, {a}, {b}", ty.text()));
    }

    fn cast(&mut self) {
        let (op, from, to) = self.c.pick(&[
            ("sext", Scalar::I32, Scalar::I64),
            ("zext", Scalar::I32, Scalar::I64),
            ("trunc", Scalar::I64, Scalar::I32),
            ("zext", Scalar::I1, Scalar::I64),
            ("sitofp", Scalar::I64, Scalar::F64),
            ("uitofp", Scalar::I32, Scalar::F64),
            ("fptosi", Scalar::F64, Scalar::I64),
            ("fptoui", Scalar::F64, Scalar::I32),
            ("bitcast", Scalar::I64, Scalar::F64),
            ("bitcast", Scalar::F64, Scalar::I64),
        ]);
        let a = self.value(from);
        self.def(to, &format!("{op} {a} to {}", to.text()));
    }

    /// An address inside a buffer, aligned for an access of `size` bytes; rarely not
    /// masked, so that it may fall outside (an out-of-bounds error to preserve).
    fn address(&mut self, size: u64) -> String {
        let base = self.buffer();
        let index = self.value(Scalar::I64);
        let count = BUFFER_BYTES / size;
        let mask = if self.c.one_in(40) { 2 * count - 1 } else { count - 1 };
        let mask = self.def(Scalar::I64, &format!("const i64 {mask}"));
        let masked = self.def(Scalar::I64, &format!("and i64 {index}, {mask}"));
        let scale = self.def(Scalar::I64, &format!("const i64 {size}"));
        let offset = self.def(Scalar::I64, &format!("mul i64 {masked}, {scale}"));
        let p = self.fresh("%p");
        let inbounds = if self.c.one_in(2) { "inbounds " } else { "" };
        self.line(&format!("{p} = ptradd {inbounds}ptr {base}, {offset}"));
        p
    }

    fn load(&mut self) {
        let ty = self.c.pick(&[Scalar::I64, Scalar::F64, Scalar::I32]);
        let size = if ty == Scalar::I32 { 4 } else { 8 };
        let p = self.address(size);
        self.def(ty, &format!("load {}, {p}, align {size}", ty.text()));
    }

    fn store(&mut self) {
        let ty = self.c.pick(&[Scalar::I64, Scalar::F64, Scalar::I32]);
        let size = if ty == Scalar::I32 { 4 } else { 8 };
        let v = self.value(ty);
        let p = self.address(size);
        self.line(&format!("store {v}, {p}, align {size}"));
    }

    fn slot_access(&mut self) {
        if self.slots.is_empty() {
            return self.load();
        }
        let slots = self.slots.clone();
        let slot = self.c.pick(&slots);
        if self.c.one_in(2) {
            self.def(slot.ty, &format!("load {}, {}, align 8", slot.ty.text(), slot.name));
        } else {
            let v = self.value(slot.ty);
            self.line(&format!("store {v}, {}, align 8", slot.name));
        }
    }

    fn bulk_memory(&mut self) {
        let dst = self.buffer();
        let len = self.c.pick(&[8, 16, 32, 64]);
        let len = self.def(Scalar::I64, &format!("const i64 {len}"));
        if self.c.one_in(2) {
            let byte = self.value(Scalar::I32);
            let b8 = self.fresh("%v");
            self.line(&format!("{b8} = trunc {byte} to i8"));
            self.line(&format!("memset {dst}, {b8}, {len}"));
        } else {
            // memmove: source and destination may be the same buffer.
            let src = self.buffer();
            self.line(&format!("memmove {dst}, {src}, {len}"));
        }
    }

    /// `abort()` or `exit(code)`: behaviour every pass must keep (statements after it
    /// stay, dead).
    fn trap(&mut self) {
        if self.c.one_in(2) {
            self.line("call @abort()");
        } else {
            let code = self.value(Scalar::I32);
            self.line(&format!("call @exit({code})"));
        }
    }

    fn call(&mut self) {
        if self.callees.is_empty() {
            return self.float_op();
        }
        let callee = self.c.pick(self.callees);
        let args: Vec<String> = callee.params.iter().map(|t| self.value(*t)).collect();
        let rhs = format!("call @{}({})", callee.name, args.join(", "));
        match callee.ret {
            Some(t) => {
                self.def(t, &rhs);
            }
            None => self.line(&rhs),
        }
    }

    fn merge_type(&mut self) -> Scalar {
        self.c.pick(&[Scalar::I64, Scalar::F64, Scalar::I32])
    }

    /// `brif` to two arms (or one arm and the join), each with its own scope, meeting at a
    /// join block whose parameter merges one value from each side.
    fn if_else(&mut self, depth: u32) {
        let id = self.fresh("");
        let cond = self.condition();
        let ty = self.merge_type();
        let scope = self.avail.len();
        if self.c.one_in(3) {
            // No else arm: the join is reached directly with a value from outside.
            let outside = self.value(ty);
            self.line(&format!("brif {cond}, ^then{id}, ^join{id}({outside})"));
            let _ = writeln!(self.out, "^then{id}:");
            self.block(depth + 1);
            let inside = self.value(ty);
            self.line(&format!("jump ^join{id}({inside})"));
        } else {
            self.line(&format!("brif {cond}, ^then{id}, ^else{id}"));
            let _ = writeln!(self.out, "^then{id}:");
            self.block(depth + 1);
            let a = self.value(ty);
            self.line(&format!("jump ^join{id}({a})"));
            self.avail.truncate(scope);
            let _ = writeln!(self.out, "^else{id}:");
            self.block(depth + 1);
            let b = self.value(ty);
            self.line(&format!("jump ^join{id}({b})"));
        }
        self.avail.truncate(scope);
        let merged = self.fresh("%m");
        let _ = writeln!(self.out, "^join{id}({merged}: {}):", ty.text());
        self.avail.push(Val { name: merged, ty });
    }

    /// `for (i = 0; i < bound; i++) acc = f(acc, ...)` with the bound a small constant or
    /// a masked value, so every loop ends.
    fn counted_loop(&mut self, depth: u32) {
        let id = self.fresh("");
        let bound = if self.c.one_in(2) {
            let n = self.c.below(7);
            self.def(Scalar::I64, &format!("const i64 {n}"))
        } else {
            let v = self.value(Scalar::I64);
            let seven = self.def(Scalar::I64, "const i64 7");
            self.def(Scalar::I64, &format!("and i64 {v}, {seven}"))
        };
        let zero = self.def(Scalar::I64, "const i64 0");
        let ty = self.merge_type();
        let init = self.value(ty);
        self.line(&format!("jump ^head{id}({zero}, {init})"));
        let (i, acc) = (self.fresh("%i"), self.fresh("%acc"));
        let _ = writeln!(self.out, "^head{id}({i}: i64, {acc}: {}):", ty.text());
        self.avail.push(Val { name: i.clone(), ty: Scalar::I64 });
        self.avail.push(Val { name: acc.clone(), ty });
        let scope = self.avail.len();
        let more = self.fresh("%more");
        self.line(&format!("{more} = icmp slt i64 {i}, {bound}"));
        self.line(&format!("brif {more}, ^body{id}, ^exit{id}"));
        let _ = writeln!(self.out, "^body{id}:");
        self.block(depth + 1);
        if self.c.one_in(3) {
            // A second exit (`break`): the loop leaves from the body as well as the header.
            let stop = self.condition();
            self.line(&format!("brif {stop}, ^exit{id}, ^latch{id}"));
            let _ = writeln!(self.out, "^latch{id}:");
        }
        let next_acc = self.value(ty);
        let one = self.def(Scalar::I64, "const i64 1");
        let next_i = self.def(Scalar::I64, &format!("add i64 {i}, {one}"));
        self.line(&format!("jump ^head{id}({next_i}, {next_acc})"));
        self.avail.truncate(scope);
        let _ = writeln!(self.out, "^exit{id}:");
    }
}
