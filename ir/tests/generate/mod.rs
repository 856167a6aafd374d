//! A generator of random valid modules for property tests, driven by a list of `u32`
//! choices (hypothesis-style): every decision reads the next choice, and a list that runs
//! out reads zeros, which always select the simplest option. Shrinking the list therefore
//! shrinks the program.
//!
//! Validity by construction: values cross blocks only where the definition dominates the
//! use. The CFG is drawn first, its dominators are computed here (independently of the
//! verifier, by the textbook data-flow equations), and blocks are then filled in an order
//! where every dominator comes first. Anything a later block uses comes from a dominator,
//! from its own parameters, or is created on the spot as a `const`.
//!
//! Shared: `adc-passes`'s tests include this directory by path (`#[path]`), and
//! `programs` adds executable programs for differential tests of the passes.

// Each test binary that includes this module uses a different part of it.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fmt;

use adc_ir::builder::FunctionBuilder;
use adc_ir::constant::mask_to_width;
use adc_ir::text::print_module;
use adc_ir::*;
use cranelift_entity::EntityRef;
use proptest::prelude::*;

pub mod programs;

/// A generated module; `Debug` prints its text so that failures are readable.
#[derive(Clone)]
pub struct Generated(pub Module);

impl fmt::Debug for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{}", print_module(&self.0))
    }
}

/// Random valid modules.
pub fn module() -> impl Strategy<Value = Generated> {
    prop::collection::vec(any::<u32>(), 0..3000).prop_map(|choices| Generated(generate(&choices)))
}

/// The decision stream.
pub struct Choices<'a> {
    data: &'a [u32],
    pos: usize,
}

impl<'a> Choices<'a> {
    pub fn new(data: &'a [u32]) -> Choices<'a> {
        Choices { data, pos: 0 }
    }

    /// A number below `n` (0 when `n` is 0 or the stream is exhausted).
    pub fn below(&mut self, n: u32) -> u32 {
        let raw = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        if n == 0 {
            0
        } else {
            raw % n
        }
    }

    pub fn index(&mut self, len: usize) -> usize {
        self.below(len.min(u32::MAX as usize) as u32) as usize
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: u32) -> bool {
        n > 0 && self.below(n) == n - 1
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())].clone()
    }

    pub fn u64(&mut self) -> u64 {
        (u64::from(self.below(u32::MAX)) << 32) | u64::from(self.below(u32::MAX))
    }

    /// Mostly small numbers (positive or negative), sometimes anything.
    pub fn int(&mut self) -> u128 {
        match self.below(4) {
            0 => u128::from(self.below(16)),
            1 => (-(i128::from(self.below(16)) + 1)) as u128,
            2 => u128::from(self.below(100_000)),
            _ => (u128::from(self.u64()) << 64) | u128::from(self.u64()),
        }
    }
}

const INTS: [Type; 6] = [Type::I1, Type::I8, Type::I16, Type::I32, Type::I64, Type::I128];

pub fn int_type(c: &mut Choices) -> Type {
    c.pick(&[Type::I32, Type::I64, Type::I8, Type::I1, Type::I16, Type::I128])
}

pub fn float_type(c: &mut Choices) -> Type {
    c.pick(&[Type::F64, Type::F32])
}

pub fn scalar_type(c: &mut Choices) -> Type {
    match c.below(10) {
        0..=3 => int_type(c),
        4..=6 => float_type(c),
        7 | 8 => Type::PTR,
        _ => Type::Ptr(c.pick(&[1, 3])),
    }
}

fn lanes(c: &mut Choices) -> u32 {
    c.pick(&[2, 4, 1, 3, 8])
}

/// An integer or, sometimes, a vector of integers.
pub fn int_like(c: &mut Choices) -> Type {
    let lane = int_type(c);
    if c.one_in(5) {
        Type::vector(lane, lanes(c))
    } else {
        lane
    }
}

pub fn float_like(c: &mut Choices) -> Type {
    let lane = float_type(c);
    if c.one_in(5) {
        Type::vector(lane, lanes(c))
    } else {
        lane
    }
}

pub fn vector_type(c: &mut Choices) -> Type {
    let lane = scalar_type(c);
    Type::vector(lane, lanes(c))
}

/// Any type, aggregates nested up to `depth`.
pub fn any_type(c: &mut Choices, depth: u32) -> Type {
    match c.below(12) {
        0..=6 => scalar_type(c),
        7 | 8 => vector_type(c),
        9 if depth > 0 => {
            let elem = any_type(c, depth - 1);
            Type::array(elem, u64::from(c.below(4)))
        }
        10 | 11 if depth > 0 => {
            let n = c.below(4);
            let fields = (0..n).map(|_| any_type(c, depth - 1)).collect();
            Type::structure(fields, c.one_in(4))
        }
        _ => scalar_type(c),
    }
}

/// A non-empty struct or array type.
pub fn aggregate_type(c: &mut Choices) -> Type {
    if c.one_in(2) {
        let elem = any_type(c, 1);
        Type::array(elem, 1 + u64::from(c.below(3)))
    } else {
        let n = 1 + c.below(3);
        let fields = (0..n).map(|_| any_type(c, 1)).collect();
        Type::structure(fields, c.one_in(4))
    }
}

/// Interesting float bit patterns of the given width (32 or 64).
fn float_bits(c: &mut Choices, bits32: bool) -> u64 {
    if bits32 {
        let v: u32 = match c.below(8) {
            0 => 0,
            1 => (-0.0f32).to_bits(),
            2 => 1.5f32.to_bits(),
            3 => f32::INFINITY.to_bits(),
            4 => f32::NAN.to_bits(),
            5 => 0x7fc0_1234,
            6 => f32::MIN_POSITIVE.to_bits() >> 3,
            _ => c.below(u32::MAX),
        };
        u64::from(v)
    } else {
        match c.below(8) {
            0 => 0,
            1 => (-0.0f64).to_bits(),
            2 => 0.1f64.to_bits(),
            3 => f64::NEG_INFINITY.to_bits(),
            4 => f64::NAN.to_bits(),
            5 => 0xfff8_0000_0000_0001,
            6 => 1e-310f64.to_bits(),
            _ => c.u64(),
        }
    }
}

/// Symbols an `Address` constant may refer to.
#[derive(Clone, Default)]
pub struct Symbols {
    pub globals: usize,
    pub funcs: usize,
}

pub fn constant(c: &mut Choices, ty: &Type, symbols: &Symbols) -> Constant {
    match c.below(12) {
        1 => return Constant::Zero,
        2 => return Constant::Undef,
        3 => return Constant::Poison,
        _ => {}
    }
    match ty {
        t if t.is_int() => Constant::Int(mask_to_width(c.int(), t.int_bits().unwrap_or(128))),
        Type::F32 => Constant::Float(float_bits(c, true)),
        Type::F64 => Constant::Float(float_bits(c, false)),
        Type::Ptr(_) => {
            let total = symbols.globals + symbols.funcs;
            if total == 0 || c.one_in(3) {
                Constant::Int(0)
            } else {
                let n = c.index(total);
                let symbol = if n < symbols.globals {
                    Symbol::Global(GlobalId::new(n))
                } else {
                    Symbol::Func(FuncId::new(n - symbols.globals))
                };
                let offset = if c.one_in(2) { 0 } else { i64::from(c.below(64)) - 16 };
                Constant::Address { symbol, offset }
            }
        }
        Type::Vector(elem, n) => {
            Constant::Elements((0..*n).map(|_| constant(c, elem, symbols)).collect())
        }
        Type::Array(elem, n) if **elem == Type::I8 && c.one_in(2) => {
            Constant::Bytes((0..*n).map(|_| c.below(256) as u8).collect())
        }
        Type::Array(elem, n) => {
            Constant::Elements((0..*n).map(|_| constant(c, elem, symbols)).collect())
        }
        Type::Struct(s) => {
            Constant::Elements(s.fields.iter().map(|f| constant(c, f, symbols)).collect())
        }
        _ => Constant::Zero,
    }
}

const VALUE_NAMES: &[&str] = &["x", "acc", "i", "tmp.1", "v3", "a b", "\u{fc}ber", "0", "$p", "x"];
const BLOCK_NAMES: &[&str] = &["entry", "loop", "exit", "bb2", "then else", "loop"];
const FUNC_ATTRS: &[FuncAttrs] = &[
    FuncAttrs::READNONE,
    FuncAttrs::READONLY,
    FuncAttrs::NOUNWIND,
    FuncAttrs::NOINLINE,
    FuncAttrs::WILLRETURN,
    FuncAttrs::KERNEL,
];

fn func_attrs(c: &mut Choices) -> FuncAttrs {
    let mut attrs = FuncAttrs::empty();
    while c.one_in(3) {
        attrs.insert(c.pick(FUNC_ATTRS));
    }
    attrs
}

fn param_attrs(c: &mut Choices) -> ParamAttrs {
    let mut attrs = ParamAttrs::empty();
    while c.one_in(4) {
        attrs.insert(ParamAttrs(1 << c.below(7)));
    }
    attrs
}

/// A random subset of `allowed`.
fn flags(c: &mut Choices, allowed: InstFlags) -> InstFlags {
    if c.one_in(2) {
        InstFlags::empty()
    } else if c.one_in(3) {
        allowed
    } else {
        InstFlags(allowed.0 & c.below(1 << 12) as u16)
    }
}

fn signature(c: &mut Choices, varargs: bool) -> Signature {
    let n = c.below(4);
    let params =
        (0..n).map(|_| if c.one_in(6) { any_type(c, 1) } else { scalar_type(c) }).collect();
    let ret = if c.one_in(3) { None } else { Some(any_type(c, 1)) };
    Signature { params, ret, varargs: varargs && c.one_in(3) }
}

/// Builds a module from `choices`.
pub fn generate(choices: &[u32]) -> Module {
    let c = &mut Choices::new(choices);
    let mut module = Module::new();
    if c.one_in(3) {
        module.target = Some(c.pick(&["x86_64-pc-linux-gnu", "nvptx64-nvidia-cuda"]).to_string());
    }
    let n_globals = c.below(4) as usize;
    let n_decls = c.below(4) as usize;
    let n_defs = 1 + c.below(3) as usize;
    let symbols = Symbols { globals: n_globals, funcs: n_decls + n_defs };

    for i in 0..n_decls {
        let name = if i == 1 { "ext func".to_string() } else { format!("decl{i}") };
        let mut f = Function::new(name, signature(c, true));
        f.linkage = if c.one_in(4) { Linkage::ExternWeak } else { Linkage::External };
        f.attrs = func_attrs(c);
        for attrs in &mut f.param_attrs {
            *attrs = param_attrs(c);
        }
        module.add_function(f);
    }
    for i in 0..n_defs {
        let mut f = Function::new(format!("f{i}"), signature(c, false));
        f.linkage = c.pick(&[
            Linkage::External,
            Linkage::Internal,
            Linkage::Private,
            Linkage::Weak,
            Linkage::LinkOnceOdr,
            Linkage::WeakOdr,
        ]);
        f.attrs = func_attrs(c);
        for attrs in &mut f.param_attrs {
            *attrs = param_attrs(c);
        }
        module.add_function(f);
    }
    for i in 0..n_globals {
        let ty =
            if c.one_in(4) { Type::array(Type::I8, u64::from(c.below(6))) } else { any_type(c, 2) };
        let linkage = c.pick(&[
            Linkage::External,
            Linkage::Internal,
            Linkage::Private,
            Linkage::Common,
            Linkage::ExternWeak,
        ]);
        let init =
            (linkage != Linkage::ExternWeak && !c.one_in(4)).then(|| constant(c, &ty, &symbols));
        module.add_global(Global {
            name: if i == 2 { "g\"quoted\"".to_string() } else { format!("g{i}") },
            ty,
            linkage,
            constant: c.one_in(2),
            align: 1 << c.below(5),
            addr_space: c.pick(&[0, 0, 1, 3]),
            init,
        });
    }

    let sigs: Vec<Signature> = module.functions.values().map(|f| f.signature.clone()).collect();
    for i in 0..n_defs {
        let id = FuncId::new(n_decls + i);
        let mut func = std::mem::take(&mut module.functions[id]);
        Body::build(c, &mut func, &sigs, &symbols);
        module.functions[id] = func;
    }
    module
}

/// The terminator drawn for a block before its body exists.
enum Exit {
    Ret,
    Unreachable,
    Jump(usize),
    Brif(usize, usize),
    Switch(Type, usize, Vec<(u128, usize)>),
}

impl Exit {
    fn targets(&self) -> Vec<usize> {
        match self {
            Exit::Ret | Exit::Unreachable => vec![],
            Exit::Jump(t) => vec![*t],
            Exit::Brif(a, b) => vec![*a, *b],
            Exit::Switch(_, d, cases) => {
                std::iter::once(*d).chain(cases.iter().map(|c| c.1)).collect()
            }
        }
    }
}

struct Body<'c, 'd, 'b> {
    c: &'c mut Choices<'d>,
    b: FunctionBuilder<'b>,
    sigs: &'b [Signature],
    symbols: &'b Symbols,
    /// Values usable at the current position.
    avail: Vec<Value>,
}

impl<'c, 'd, 'b> Body<'c, 'd, 'b> {
    fn build(c: &'c mut Choices<'d>, func: &mut Function, sigs: &[Signature], symbols: &Symbols) {
        let callees = |f: FuncId| sigs.get(f.index()).cloned();
        let b = FunctionBuilder::new(func, &callees);
        Body { c, b, sigs, symbols, avail: Vec::new() }.fill();
    }

    fn fill(&mut self) {
        let n = 1 + self.c.below(6) as usize;
        let mut blocks = vec![self.b.create_entry_block()];
        for _ in 1..n {
            let block = self.b.create_block();
            for _ in 0..self.c.below(3) {
                let ty = if self.c.one_in(5) { any_type(self.c, 1) } else { scalar_type(self.c) };
                let param = self.b.append_block_param(block, ty);
                self.maybe_name(param);
            }
            blocks.push(block);
        }
        for &block in &blocks {
            if self.c.one_in(4) {
                let name = self.c.pick(BLOCK_NAMES);
                self.b.func.dfg.set_block_name(block, name);
            }
        }
        for &param in &self.b.func.params().to_vec() {
            self.maybe_name(param);
        }
        let exits: Vec<Exit> = (0..n).map(|i| self.exit(i, n)).collect();

        // Dominators by the iterative data-flow equations, as bit sets (n <= 6).
        let mut reachable = vec![false; n];
        let mut stack = vec![0];
        while let Some(b) = stack.pop() {
            if !std::mem::replace(&mut reachable[b], true) {
                stack.extend(exits[b].targets());
            }
        }
        let all: u64 = (1 << n) - 1;
        let mut dom: Vec<u64> = (0..n).map(|b| if b == 0 { 1 } else { all }).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for b in 1..n {
                let mut meet = all;
                for p in (0..n).filter(|p| reachable[*p] && exits[*p].targets().contains(&b)) {
                    meet &= dom[p];
                }
                let new = meet | (1 << b);
                if new != dom[b] {
                    dom[b] = new;
                    changed = true;
                }
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|b| reachable[*b]).collect();
        order.sort_by_key(|b| dom[*b].count_ones());
        order.extend((0..n).filter(|b| !reachable[*b]));

        let mut defined: Vec<Vec<Value>> = vec![Vec::new(); n];
        for b in order {
            let block = blocks[b];
            self.b.switch_to_block(block);
            self.avail = self.b.func.dfg.block_params(block).to_vec();
            let dominators = if reachable[b] { dom[b] & !(1 << b) } else { 1 & !(1 << b) };
            for (d, values) in defined.iter().enumerate() {
                if dominators & (1 << d) != 0 {
                    self.avail.extend(values.iter().copied());
                }
            }
            let start = self.avail.len();
            for _ in 0..self.c.below(10) {
                self.inst();
            }
            self.terminator(&exits[b], &blocks);
            let mut mine = self.b.func.dfg.block_params(block).to_vec();
            mine.extend_from_slice(&self.avail[start..]);
            defined[b] = mine;
        }
    }

    fn exit(&mut self, i: usize, n: usize) -> Exit {
        let target = |c: &mut Choices| 1 + c.index(n - 1);
        if n == 1 {
            return if self.c.one_in(8) { Exit::Unreachable } else { Exit::Ret };
        }
        match self.c.below(8) {
            0 if i + 1 < n => Exit::Jump(i + 1),
            0 | 1 => Exit::Ret,
            2 => Exit::Jump(target(self.c)),
            3 | 4 => Exit::Brif(target(self.c), target(self.c)),
            5 => {
                let ty = int_type(self.c);
                let bits = ty.int_bits().unwrap_or(64);
                let mut seen = HashSet::new();
                let mut cases = Vec::new();
                for _ in 0..self.c.below(4) {
                    let value = mask_to_width(self.c.int(), bits);
                    if seen.insert(value) {
                        cases.push((value, target(self.c)));
                    }
                }
                Exit::Switch(ty, target(self.c), cases)
            }
            6 if self.c.one_in(3) => Exit::Unreachable,
            _ if i + 1 == n => Exit::Ret,
            _ => Exit::Brif(i + 1, target(self.c)),
        }
    }

    fn block_call(&mut self, block: Block) -> BlockCall {
        let params = self.b.func.dfg.block_params(block).to_vec();
        let args = params.iter().map(|p| {
            let ty = self.b.func.dfg.value_type(*p).clone();
            self.value(&ty)
        });
        BlockCall::new(block, args.collect())
    }

    fn terminator(&mut self, exit: &Exit, blocks: &[Block]) {
        let data = match exit {
            Exit::Ret => {
                let value = self.b.func.signature.ret.clone().map(|ty| self.value(&ty));
                InstructionData::Return { value }
            }
            Exit::Unreachable => InstructionData::Unreachable,
            Exit::Jump(t) => InstructionData::Jump { dest: self.block_call(blocks[*t]) },
            Exit::Brif(a, b) => {
                let cond = self.value(&Type::I1);
                let then_dest = self.block_call(blocks[*a]);
                let else_dest = self.block_call(blocks[*b]);
                InstructionData::Brif { cond, then_dest, else_dest }
            }
            Exit::Switch(ty, default, cases) => {
                let value = self.value(ty);
                let default = self.block_call(blocks[*default]);
                let cases = cases.iter().map(|(v, t)| (*v, self.block_call(blocks[*t]))).collect();
                InstructionData::Switch { value, default, cases }
            }
        };
        self.emit(data);
    }

    fn maybe_name(&mut self, v: Value) {
        if self.c.one_in(6) {
            let name = self.c.pick(VALUE_NAMES);
            self.b.func.dfg.set_value_name(v, name);
        }
    }

    /// Appends an instruction; its result becomes available.
    fn emit(&mut self, data: InstructionData) -> Option<Value> {
        let (inst, result) = self.b.ins(data);
        if self.c.one_in(10) {
            let file = self.c.pick(&["a.c", "dir/x y.c"]);
            let (line, column) = (1 + self.c.below(500), self.c.below(80));
            self.b.func.dfg.debug_locs[inst] = Some(DebugLoc { file: file.into(), line, column });
        }
        if let Some(v) = result {
            self.maybe_name(v);
            self.avail.push(v);
        }
        result
    }

    /// A value of type `ty`: an available one, or a new constant.
    fn value(&mut self, ty: &Type) -> Value {
        let candidates: Vec<Value> =
            self.avail.iter().copied().filter(|v| self.b.func.dfg.value_type(*v) == ty).collect();
        if !candidates.is_empty() && !self.c.one_in(4) {
            return self.c.pick(&candidates);
        }
        let value = constant(self.c, ty, self.symbols);
        let data = InstructionData::Const { ty: ty.clone(), value };
        self.emit(data).expect("a constant has a result")
    }

    /// A type: sometimes that of an available value accepted by `filter`, else `fresh`.
    fn ty(
        &mut self,
        filter: impl Fn(&Type) -> bool,
        fresh: impl FnOnce(&mut Choices) -> Type,
    ) -> Type {
        let dfg = &self.b.func.dfg;
        let types: Vec<Type> =
            self.avail.iter().map(|v| dfg.value_type(*v).clone()).filter(|t| filter(t)).collect();
        if !types.is_empty() && self.c.one_in(2) {
            self.c.pick(&types)
        } else {
            fresh(self.c)
        }
    }

    fn ptr(&mut self) -> Value {
        let ty = self.ty(|t| t.is_ptr(), |_| Type::PTR);
        self.value(&ty)
    }

    fn inst(&mut self) {
        use InstructionData as I;
        let data = match self.c.below(17) {
            0 => {
                let ty = any_type(self.c, 2);
                let value = constant(self.c, &ty, self.symbols);
                I::Const { ty, value }
            }
            1 | 2 => {
                let ty = self.ty(|t| t.lane_type().is_int(), int_like);
                let op = self.c.pick(
                    &BinaryOp::ALL.iter().filter(|o| !o.is_float()).copied().collect::<Vec<_>>(),
                );
                let allowed = match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl => {
                        InstFlags::NUW | InstFlags::NSW
                    }
                    BinaryOp::Udiv | BinaryOp::Sdiv | BinaryOp::Lshr | BinaryOp::Ashr => {
                        InstFlags::EXACT
                    }
                    BinaryOp::Or => InstFlags::DISJOINT,
                    _ => InstFlags::empty(),
                };
                let flags = flags(self.c, allowed);
                I::Binary { op, flags, args: [self.value(&ty), self.value(&ty)] }
            }
            3 => {
                let ty = self.ty(|t| t.lane_type().is_float(), float_like);
                let op = self.c.pick(
                    &BinaryOp::ALL.iter().filter(|o| o.is_float()).copied().collect::<Vec<_>>(),
                );
                let flags = flags(self.c, InstFlags::FAST);
                I::Binary { op, flags, args: [self.value(&ty), self.value(&ty)] }
            }
            4 => {
                let op = self.c.pick(UnaryOp::ALL);
                let ty = if op.is_float() {
                    self.ty(|t| t.lane_type().is_float(), float_like)
                } else if op == UnaryOp::Freeze {
                    self.ty(|_| true, |c| any_type(c, 1))
                } else if op == UnaryOp::Bswap {
                    let lane = self.c.pick(&[Type::I16, Type::I32, Type::I64, Type::I128]);
                    if self.c.one_in(4) {
                        Type::vector(lane, 2)
                    } else {
                        lane
                    }
                } else {
                    self.ty(|t| t.lane_type().is_int(), int_like)
                };
                let flags =
                    if op.is_float() { flags(self.c, InstFlags::FAST) } else { InstFlags::empty() };
                I::Unary { op, flags, arg: self.value(&ty) }
            }
            5 => {
                let ty = self.ty(|t| t.lane_type().is_float(), float_like);
                let flags = flags(self.c, InstFlags::FAST);
                I::Fma { flags, args: [self.value(&ty), self.value(&ty), self.value(&ty)] }
            }
            6 => {
                if self.c.one_in(2) {
                    let ty = self.ty(
                        |t| t.lane_type().is_int() || t.lane_type().is_ptr(),
                        |c| {
                            if c.one_in(4) {
                                Type::PTR
                            } else {
                                int_like(c)
                            }
                        },
                    );
                    I::Icmp {
                        cond: self.c.pick(IntCC::ALL),
                        args: [self.value(&ty), self.value(&ty)],
                    }
                } else {
                    let ty = self.ty(|t| t.lane_type().is_float(), float_like);
                    let flags = flags(self.c, InstFlags::FAST);
                    I::Fcmp {
                        cond: self.c.pick(FloatCC::ALL),
                        flags,
                        args: [self.value(&ty), self.value(&ty)],
                    }
                }
            }
            7 => {
                let ty = self.ty(|_| true, |c| any_type(c, 1));
                let cond_ty = if ty.is_vector() && self.c.one_in(2) {
                    ty.with_lane(Type::I1)
                } else {
                    Type::I1
                };
                let allowed =
                    if ty.lane_type().is_float() { InstFlags::FAST } else { InstFlags::empty() };
                let flags = flags(self.c, allowed);
                I::Select { flags, args: [self.value(&cond_ty), self.value(&ty), self.value(&ty)] }
            }
            8 => {
                let (op, src, dst) = self.cast_types();
                I::Cast { op, arg: self.value(&src), ty: dst }
            }
            9 | 10 => self.memory(),
            11 => self.call(),
            12 => self.vector_op(),
            13 => self.aggregate_op(),
            14 => self.atomic(),
            _ => {
                let ty = self.ty(|_| true, |c| any_type(c, 1));
                let value = constant(self.c, &ty, self.symbols);
                I::Const { ty, value }
            }
        };
        self.emit(data);
    }

    fn cast_types(&mut self) -> (CastOp, Type, Type) {
        let c = &mut *self.c;
        let n = if c.one_in(4) { Some(c.pick(&[2, 4])) } else { None };
        let wrap = |t: Type| match n {
            Some(n) => Type::vector(t, n),
            None => t,
        };
        let lo = c.index(INTS.len() - 1);
        let hi = lo + 1 + c.index(INTS.len() - 1 - lo);
        let op = c.pick(CastOp::ALL);
        let (src, dst) = match op {
            CastOp::Zext | CastOp::Sext => (INTS[lo].clone(), INTS[hi].clone()),
            CastOp::Trunc => (INTS[hi].clone(), INTS[lo].clone()),
            CastOp::Fptoui | CastOp::Fptosi => (float_type(c), int_type(c)),
            CastOp::Uitofp | CastOp::Sitofp => (int_type(c), float_type(c)),
            CastOp::Fpext => (Type::F32, Type::F64),
            CastOp::Fptrunc => (Type::F64, Type::F32),
            CastOp::Ptrtoint => (Type::Ptr(c.pick(&[0, 1])), int_type(c)),
            CastOp::Inttoptr => (int_type(c), Type::Ptr(c.pick(&[0, 3]))),
            CastOp::Addrspacecast => {
                let (a, b) = c.pick(&[(0, 1), (1, 0), (3, 0), (0, 5)]);
                (Type::Ptr(a), Type::Ptr(b))
            }
            CastOp::Bitcast => {
                let groups: [Vec<Type>; 4] = [
                    vec![Type::I8, Type::vector(Type::I1, 8)],
                    vec![
                        Type::I32,
                        Type::F32,
                        Type::vector(Type::I16, 2),
                        Type::vector(Type::I8, 4),
                    ],
                    vec![
                        Type::I64,
                        Type::F64,
                        Type::vector(Type::I32, 2),
                        Type::vector(Type::F32, 2),
                    ],
                    vec![
                        Type::I128,
                        Type::vector(Type::I64, 2),
                        Type::vector(Type::F64, 2),
                        Type::vector(Type::F32, 4),
                    ],
                ];
                if c.one_in(5) {
                    let p = Type::Ptr(c.pick(&[0, 1]));
                    return (op, p.clone(), p);
                }
                let group = &groups[c.index(groups.len())];
                return (op, c.pick(group), c.pick(group));
            }
        };
        (op, wrap(src), wrap(dst))
    }

    fn align(&mut self) -> u32 {
        1 << self.c.below(5)
    }

    fn memory(&mut self) -> InstructionData {
        use InstructionData as I;
        match self.c.below(7) {
            0 => {
                let ty = any_type(self.c, 2);
                let count = if self.c.one_in(3) {
                    let ty = self.c.pick(&[Type::I64, Type::I32]);
                    Some(self.value(&ty))
                } else {
                    None
                };
                I::Alloca { ty, count, align: self.align() }
            }
            1 => {
                let ptr = self.ptr();
                let ty = any_type(self.c, 1);
                I::Load { ty, ptr, align: self.align(), volatile: self.c.one_in(5) }
            }
            2 => {
                let ty = self.ty(|_| true, |c| any_type(c, 1));
                let value = self.value(&ty);
                I::Store { value, ptr: self.ptr(), align: self.align(), volatile: self.c.one_in(5) }
            }
            3 => {
                let ptr = self.ptr();
                let ty = self.c.pick(&[Type::I64, Type::I32, Type::I64]);
                let offset = self.value(&ty);
                I::PtrAdd { flags: flags(self.c, InstFlags::INBOUNDS), ptr, offset }
            }
            4 => {
                let (dst, src) = (self.ptr(), self.ptr());
                let len = self.value(&Type::I64);
                I::MemCopy {
                    dst,
                    src,
                    len,
                    may_overlap: self.c.one_in(2),
                    volatile: self.c.one_in(5),
                }
            }
            5 => {
                let dst = self.ptr();
                let byte = self.value(&Type::I8);
                let len_ty = self.c.pick(&[Type::I64, Type::I32]);
                let len = self.value(&len_ty);
                I::MemSet { dst, byte, len, volatile: self.c.one_in(5) }
            }
            _ => {
                let ty = self.ty(|t| t.is_ptr(), |_| Type::PTR);
                let ptr = self.value(&ty);
                let offset = self.value(&Type::I64);
                I::PtrAdd { flags: InstFlags::empty(), ptr, offset }
            }
        }
    }

    fn call(&mut self) -> InstructionData {
        let attrs = func_attrs(self.c);
        if self.c.one_in(4) {
            // Through a pointer: the address of a function of this signature, or any ptr.
            let callee_id = self.c.index(self.sigs.len());
            let sig = self.sigs[callee_id].clone();
            let callee = if self.c.one_in(2) {
                let symbol = Symbol::Func(FuncId::new(callee_id));
                let value = Constant::Address { symbol, offset: 0 };
                self.emit(InstructionData::Const { ty: Type::PTR, value }).expect("const result")
            } else {
                self.ptr()
            };
            let args = self.args(&sig);
            return InstructionData::CallIndirect { sig: Box::new(sig), callee, args, attrs };
        }
        let id = self.c.index(self.sigs.len());
        let sig = self.sigs[id].clone();
        let args = self.args(&sig);
        InstructionData::Call { callee: FuncId::new(id), args, attrs }
    }

    fn args(&mut self, sig: &Signature) -> Vec<Value> {
        let mut args: Vec<Value> = sig.params.iter().map(|t| self.value(t)).collect();
        if sig.varargs {
            for _ in 0..self.c.below(3) {
                let ty = scalar_type(self.c);
                args.push(self.value(&ty));
            }
        }
        args
    }

    fn vector_op(&mut self) -> InstructionData {
        use InstructionData as I;
        match self.c.below(4) {
            0 => {
                let ty = self.ty(|t| t.is_vector(), vector_type);
                let index_ty = self.c.pick(&[Type::I32, Type::I64]);
                I::ExtractLane { vector: self.value(&ty), index: self.value(&index_ty) }
            }
            1 => {
                let ty = self.ty(|t| t.is_vector(), vector_type);
                let vector = self.value(&ty);
                let value = self.value(&ty.lane_type().clone());
                I::InsertLane { vector, value, index: self.value(&Type::I32) }
            }
            2 => {
                let ty = self.ty(|t| t.is_vector(), vector_type);
                let limit = 2 * ty.lanes();
                let len = 1 + self.c.below(8);
                let mut mask = Vec::new();
                for _ in 0..len {
                    let undef = self.c.one_in(6);
                    mask.push(if undef { None } else { Some(self.c.below(limit)) });
                }
                I::Shuffle { args: [self.value(&ty), self.value(&ty)], mask }
            }
            _ => {
                let op = self.c.pick(ReduceOp::ALL);
                let ty = if op.is_float() {
                    self.ty(
                        |t| t.is_vector() && t.lane_type().is_float(),
                        |c| {
                            let lane = float_type(c);
                            Type::vector(lane, lanes(c))
                        },
                    )
                } else {
                    self.ty(
                        |t| t.is_vector() && t.lane_type().is_int(),
                        |c| {
                            let lane = int_type(c);
                            Type::vector(lane, lanes(c))
                        },
                    )
                };
                let mut args = vec![self.value(&ty)];
                if op.has_start() {
                    args.push(self.value(&ty.lane_type().clone()));
                }
                let allowed = if op.is_float() { InstFlags::FAST } else { InstFlags::empty() };
                I::Reduce { op, flags: flags(self.c, allowed), args }
            }
        }
    }

    fn aggregate_op(&mut self) -> InstructionData {
        let ty = self.ty(|t| t.is_aggregate() && t.element_type(0).is_some(), aggregate_type);
        let aggregate = self.value(&ty);
        let mut indices = Vec::new();
        let mut field = ty.clone();
        loop {
            let len = match &field {
                Type::Struct(s) => s.fields.len() as u64,
                Type::Array(_, n) => *n,
                _ => 0,
            };
            if len == 0 || (!indices.is_empty() && self.c.one_in(2)) {
                break;
            }
            let index = self.c.below(len.min(u64::from(u32::MAX)) as u32);
            indices.push(index);
            field = field.element_type(u64::from(index)).cloned().expect("index in range");
        }
        if self.c.one_in(2) {
            InstructionData::ExtractValue { aggregate, indices }
        } else {
            let value = self.value(&field);
            InstructionData::InsertValue { aggregate, value, indices }
        }
    }

    fn atomic(&mut self) -> InstructionData {
        const ORDERINGS: [Ordering; 5] = [
            Ordering::Monotonic,
            Ordering::Acquire,
            Ordering::Release,
            Ordering::AcqRel,
            Ordering::SeqCst,
        ];
        match self.c.below(3) {
            0 => {
                let op = self.c.pick(AtomicRmwOp::ALL);
                let ty = match op {
                    AtomicRmwOp::Xchg => scalar_type(self.c),
                    AtomicRmwOp::Fadd
                    | AtomicRmwOp::Fsub
                    | AtomicRmwOp::Fmax
                    | AtomicRmwOp::Fmin => float_type(self.c),
                    _ => int_type(self.c),
                };
                let ptr = self.ptr();
                let value = self.value(&ty);
                let ordering = self.c.pick(&ORDERINGS);
                InstructionData::AtomicRmw { op, ptr, value, ordering, volatile: self.c.one_in(5) }
            }
            1 => {
                let ty = if self.c.one_in(4) { Type::PTR } else { int_type(self.c) };
                let ptr = self.ptr();
                let (expected, new) = (self.value(&ty), self.value(&ty));
                let success = self.c.pick(&ORDERINGS);
                let failures: &[Ordering] = match success {
                    Ordering::Acquire | Ordering::AcqRel => {
                        &[Ordering::Monotonic, Ordering::Acquire]
                    }
                    Ordering::SeqCst => &[Ordering::Monotonic, Ordering::Acquire, Ordering::SeqCst],
                    _ => &[Ordering::Monotonic],
                };
                let failure = self.c.pick(failures);
                let (weak, volatile) = (self.c.one_in(3), self.c.one_in(5));
                InstructionData::CmpXchg { ptr, expected, new, success, failure, weak, volatile }
            }
            _ => InstructionData::Fence {
                ordering: self.c.pick(&[
                    Ordering::Acquire,
                    Ordering::Release,
                    Ordering::AcqRel,
                    Ordering::SeqCst,
                ]),
            },
        }
    }
}
