//! Per-instruction checks of the verifier: operand types and shapes, casts, memory and
//! atomic operands, calls against signatures, vector and aggregate indices, constants,
//! flags, alignments, branch arguments and return values.
//!
//! A check that finds an operand of the wrong kind stops checking that instruction's
//! shape, so one mistake yields one diagnostic rather than a cascade.

use std::collections::HashSet;

use crate::constant::mask_to_width;
use crate::entities::{Block, Inst, Value};
use crate::function::Signature;
use crate::instructions::*;
use crate::module::Module;
use crate::types::Type;
use crate::varargs::VaIntrinsic;

use super::{symbol_name, type_problem, unknown_symbols, At, FuncVerifier};

/// What an operand must be.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    /// An integer or a vector of integers.
    IntLike,
    /// A scalar integer.
    Int,
    FloatLike,
    Float,
    /// Integers, pointers, or vectors of either (`icmp`).
    IntOrPtrLike,
    /// A scalar integer or pointer (`cmpxchg`).
    IntOrPtr,
    /// A scalar pointer.
    Ptr,
    /// A pointer or a vector of pointers (`ptradd`).
    PtrLike,
    I1,
    I8,
    Vector,
    IntVector,
    FloatVector,
    /// A struct or an array.
    Aggregate,
}

impl Kind {
    fn accepts(self, ty: &Type) -> bool {
        let lane = ty.lane_type();
        match self {
            Kind::IntLike => lane.is_int(),
            Kind::Int => ty.is_int(),
            Kind::FloatLike => lane.is_float(),
            Kind::Float => ty.is_float(),
            Kind::IntOrPtrLike => lane.is_int() || lane.is_ptr(),
            Kind::IntOrPtr => ty.is_int() || ty.is_ptr(),
            Kind::Ptr => ty.is_ptr(),
            Kind::PtrLike => lane.is_ptr(),
            Kind::I1 => *ty == Type::I1,
            Kind::I8 => *ty == Type::I8,
            Kind::Vector => ty.is_vector(),
            Kind::IntVector => ty.is_vector() && lane.is_int(),
            Kind::FloatVector => ty.is_vector() && lane.is_float(),
            Kind::Aggregate => ty.is_aggregate(),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Kind::IntLike => "an integer or a vector of integers",
            Kind::Int => "an integer",
            Kind::FloatLike => "a float or a vector of floats",
            Kind::Float => "a float",
            Kind::IntOrPtrLike => "an integer, a pointer, or a vector of them",
            Kind::IntOrPtr => "an integer or a pointer",
            Kind::Ptr => "a pointer",
            Kind::PtrLike => "a pointer or a vector of pointers",
            Kind::I1 => "i1",
            Kind::I8 => "i8",
            Kind::Vector => "a vector",
            Kind::IntVector => "a vector of integers",
            Kind::FloatVector => "a vector of floats",
            Kind::Aggregate => "a struct or an array",
        }
    }
}

/// How a call names its callee in messages (computed only for errors).
#[derive(Copy, Clone)]
enum Callee<'n> {
    Direct(&'n str),
    Indirect(Value),
}

/// Whether `data` is a call whose callee returns nothing.
pub(super) fn returns_void(module: &Module, data: &InstructionData) -> bool {
    match data {
        InstructionData::Call { callee, .. } => {
            module.functions.get(*callee).is_some_and(|f| f.signature.ret.is_none())
        }
        InstructionData::CallIndirect { sig, .. } => sig.ret.is_none(),
        _ => false,
    }
}

/// The flags an instruction may carry.
fn allowed_flags(data: &InstructionData, ty_of: impl Fn(Value) -> Option<Type>) -> InstFlags {
    use InstructionData as I;
    match data {
        I::Binary { op, .. } => match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl => {
                InstFlags::NUW | InstFlags::NSW
            }
            BinaryOp::Udiv | BinaryOp::Sdiv | BinaryOp::Lshr | BinaryOp::Ashr => InstFlags::EXACT,
            BinaryOp::Or => InstFlags::DISJOINT,
            op if op.is_float() => InstFlags::FAST,
            _ => InstFlags::empty(),
        },
        I::Unary { op, .. } if op.is_float() => InstFlags::FAST,
        I::Reduce { op, .. } if op.is_float() => InstFlags::FAST,
        I::Fma { .. } | I::Fcmp { .. } => InstFlags::FAST,
        I::Select { args, .. } if ty_of(args[1]).is_some_and(|t| t.lane_type().is_float()) => {
            InstFlags::FAST
        }
        I::PtrAdd { .. } => InstFlags::INBOUNDS,
        _ => InstFlags::empty(),
    }
}

/// Why a cast from `src` to `dst` is not legal, if it is not.
fn cast_problem(op: CastOp, src: &Type, dst: &Type) -> Option<&'static str> {
    if src.is_aggregate() || dst.is_aggregate() {
        return Some("casts take scalars or vectors");
    }
    let (s, d) = (src.lane_type(), dst.lane_type());
    if op != CastOp::Bitcast && (src.is_vector() != dst.is_vector() || src.lanes() != dst.lanes()) {
        return Some("source and destination must have the same number of lanes");
    }
    let (s_bits, d_bits) = (s.scalar_bits().unwrap_or(0), d.scalar_bits().unwrap_or(0));
    match op {
        CastOp::Zext | CastOp::Sext | CastOp::Trunc if !s.is_int() || !d.is_int() => {
            Some("both types must be integers")
        }
        CastOp::Zext | CastOp::Sext if d_bits <= s_bits => Some("the destination must be wider"),
        CastOp::Trunc if d_bits >= s_bits => Some("the destination must be narrower"),
        CastOp::Fptoui | CastOp::Fptosi if !s.is_float() || !d.is_int() => {
            Some("the source must be a float and the destination an integer")
        }
        CastOp::Uitofp | CastOp::Sitofp if !s.is_int() || !d.is_float() => {
            Some("the source must be an integer and the destination a float")
        }
        CastOp::Fpext | CastOp::Fptrunc if !s.is_float() || !d.is_float() => {
            Some("both types must be floats")
        }
        CastOp::Fpext if d_bits <= s_bits => Some("the destination must be wider"),
        CastOp::Fptrunc if d_bits >= s_bits => Some("the destination must be narrower"),
        CastOp::Ptrtoint if !s.is_ptr() || !d.is_int() => {
            Some("the source must be a pointer and the destination an integer")
        }
        CastOp::Inttoptr if !s.is_int() || !d.is_ptr() => {
            Some("the source must be an integer and the destination a pointer")
        }
        CastOp::Addrspacecast if !s.is_ptr() || !d.is_ptr() => Some("both types must be pointers"),
        CastOp::Addrspacecast if s == d => Some("the address spaces must differ"),
        CastOp::Bitcast if s.is_ptr() || d.is_ptr() => {
            if !(s.is_ptr() && d.is_ptr()) {
                Some("cannot bitcast between pointers and non-pointers")
            } else if src.lanes() != dst.lanes() || src.is_vector() != dst.is_vector() {
                Some("source and destination must have the same number of lanes")
            } else if s != d {
                Some("use `addrspacecast` to change address spaces")
            } else {
                None
            }
        }
        CastOp::Bitcast => {
            let src_bits = u64::from(s_bits) * u64::from(src.lanes());
            let dst_bits = u64::from(d_bits) * u64::from(dst.lanes());
            (src_bits != dst_bits).then_some("source and destination must have the same size")
        }
        _ => None,
    }
}

impl<'a> FuncVerifier<'a> {
    /// Checks that operand `v` of `op` is of `kind`; returns its type when it is. A value
    /// that does not exist was reported by the SSA check and yields `None` silently.
    fn expect(&mut self, at: At, op: &str, role: &str, v: Value, kind: Kind) -> Option<&'a Type> {
        let ty = self.ty(v)?;
        if kind.accepts(ty) {
            return Some(ty);
        }
        let name = self.value_name(v);
        let expected = kind.describe();
        self.error(
            at,
            format!("{role} {name} of `{op}` has type {ty}, expected {expected}"),
            format!("expected {expected}, found {ty}"),
        );
        None
    }

    /// Checks that operand `v` has exactly type `expected`.
    fn expect_type(&mut self, at: At, op: &str, role: &str, v: Value, expected: &Type) -> bool {
        let Some(ty) = self.ty(v) else { return false };
        if ty == expected {
            return true;
        }
        let name = self.value_name(v);
        self.error(
            at,
            format!("{role} {name} of `{op}` has type {ty}, expected {expected}"),
            format!("expected {expected}, found {ty}"),
        );
        false
    }

    /// Operands that must share one type.
    fn expect_same(&mut self, at: At, op: &str, a: Value, b: Value) {
        if let (Some(ta), Some(tb)) = (self.ty(a), self.ty(b)) {
            if ta != tb {
                let (na, nb) = (self.value_name(a), self.value_name(b));
                self.error(
                    at,
                    format!("operands {na} and {nb} of `{op}` have different types {ta} and {tb}"),
                    format!("{ta} vs {tb}"),
                );
            }
        }
    }

    fn check_align(&mut self, at: At, op: &str, align: u32) {
        if !align.is_power_of_two() {
            self.error(
                at,
                format!("alignment {align} of `{op}` is not a power of two"),
                "alignment must be a power of two",
            );
        }
    }

    fn check_type(&mut self, at: At, ty: &Type) {
        if let Some(problem) = type_problem(ty) {
            self.error(at, format!("type {ty} is malformed: {problem}"), "bad type");
        }
    }

    fn check_flags(&mut self, at: At, data: &InstructionData) {
        let flags = data.flags().unwrap_or_default();
        if flags.is_empty() {
            return;
        }
        let allowed = allowed_flags(data, |v| self.ty(v).cloned());
        let bad = InstFlags(flags.0 & !allowed.0);
        let op = data.opcode_name();
        let mut known = 0;
        for (flag, name) in InstFlags::NAMES {
            known |= flag.0;
            if bad.contains(*flag) {
                self.error(at, format!("flag `{name}` is not allowed on `{op}`"), "invalid flag");
            }
        }
        if bad.0 & !known != 0 {
            let bits = bad.0 & !known;
            self.error(at, format!("unknown flag bits {bits:#x} on `{op}`"), "invalid flag");
        }
    }

    pub(super) fn check_inst(&mut self, block: Block, inst: Inst) {
        use InstructionData as I;
        let func = self.func;
        let data = &func.dfg.insts[inst];
        let at = At::Inst(block, inst);
        let op = data.opcode_name();
        self.check_flags(at, data);
        match data {
            I::Const { ty, value } => {
                self.check_type(at, ty);
                if !value.fits(ty) {
                    self.error(
                        at,
                        format!("constant does not fit its type {ty}"),
                        format!("not a valid {ty}"),
                    );
                }
                for symbol in unknown_symbols(self.module, value) {
                    self.error(
                        at,
                        format!("constant refers to unknown {symbol}"),
                        "unknown symbol",
                    );
                }
            }
            I::Unary { op: unary, arg, .. } => {
                let kind = match unary {
                    UnaryOp::Freeze => return,
                    u if u.is_float() => Kind::FloatLike,
                    _ => Kind::IntLike,
                };
                let Some(ty) = self.expect(at, op, "operand", *arg, kind) else {
                    return;
                };
                if *unary == UnaryOp::Bswap && ty.lane_type().int_bits().unwrap_or(0) % 16 != 0 {
                    self.error(
                        at,
                        format!("`bswap` needs a whole, even number of bytes, found {ty}"),
                        "bswap of an odd byte count",
                    );
                }
            }
            I::Binary { op: binary, args, .. } => {
                let kind = if binary.is_float() { Kind::FloatLike } else { Kind::IntLike };
                let a = self.expect(at, op, "operand", args[0], kind);
                let b = self.expect(at, op, "operand", args[1], kind);
                if a.is_some() && b.is_some() {
                    self.expect_same(at, op, args[0], args[1]);
                }
            }
            I::Fma { args, .. } => {
                let mut ok = true;
                for v in args {
                    ok &= self.expect(at, op, "operand", *v, Kind::FloatLike).is_some();
                }
                if ok {
                    self.expect_same(at, op, args[0], args[1]);
                    self.expect_same(at, op, args[0], args[2]);
                }
            }
            I::Icmp { args, .. } | I::Fcmp { args, .. } => {
                let kind = if matches!(data, I::Icmp { .. }) {
                    Kind::IntOrPtrLike
                } else {
                    Kind::FloatLike
                };
                let a = self.expect(at, op, "operand", args[0], kind);
                let b = self.expect(at, op, "operand", args[1], kind);
                if a.is_some() && b.is_some() {
                    self.expect_same(at, op, args[0], args[1]);
                }
            }
            I::Select { args, .. } => self.check_select(at, args),
            I::Cast { op: cast, arg, ty } => {
                self.check_type(at, ty);
                let Some(src) = self.ty(*arg) else { return };
                if let Some(problem) = cast_problem(*cast, src, ty) {
                    self.error(
                        at,
                        format!("invalid `{cast}` from {src} to {ty}: {problem}"),
                        problem,
                    );
                }
            }
            I::Alloca { ty, count, align } => {
                self.check_type(at, ty);
                if let Some(count) = count {
                    self.expect(at, op, "count", *count, Kind::Int);
                }
                self.check_align(at, op, *align);
            }
            I::Load { ty, ptr, align, .. } => {
                self.check_type(at, ty);
                self.expect(at, op, "pointer operand", *ptr, Kind::Ptr);
                self.check_align(at, op, *align);
            }
            I::Store { ptr, align, .. } => {
                self.expect(at, op, "pointer operand", *ptr, Kind::Ptr);
                self.check_align(at, op, *align);
            }
            I::PtrAdd { ptr, offset, .. } => {
                let p = self.expect(at, op, "pointer operand", *ptr, Kind::PtrLike);
                let o = self.expect(at, op, "offset", *offset, Kind::IntLike);
                if let (Some(p), Some(o)) = (p, o) {
                    if o.is_vector() && (!p.is_vector() || p.lanes() != o.lanes()) {
                        self.error(
                            at,
                            format!("offset of type {o} does not match pointer of type {p}"),
                            "lane counts differ",
                        );
                    }
                }
            }
            I::MemCopy { dst, src, len, .. } => {
                self.expect(at, op, "destination", *dst, Kind::Ptr);
                self.expect(at, op, "source", *src, Kind::Ptr);
                self.expect(at, op, "length", *len, Kind::Int);
            }
            I::MemSet { dst, byte, len, .. } => {
                self.expect(at, op, "destination", *dst, Kind::Ptr);
                self.expect(at, op, "byte", *byte, Kind::I8);
                self.expect(at, op, "length", *len, Kind::Int);
            }
            I::Call { callee, args, .. } => match self.module.functions.get(*callee) {
                Some(f) => {
                    self.check_call_args(at, Callee::Direct(&f.name), &f.signature, args);
                    if let Some(intrinsic) = VaIntrinsic::from_name(&f.name) {
                        self.check_va_intrinsic(at, intrinsic, &f.signature);
                    }
                }
                None => {
                    self.error(at, format!("call to unknown function {callee}"), "no such function")
                }
            },
            I::CallIndirect { sig, callee, args, .. } => {
                for ty in sig.params.iter().chain(sig.ret.iter()) {
                    self.check_type(at, ty);
                }
                self.expect(at, op, "callee", *callee, Kind::Ptr);
                self.check_call_args(at, Callee::Indirect(*callee), sig, args);
            }
            I::ExtractLane { vector, index } => {
                self.expect(at, op, "operand", *vector, Kind::Vector);
                self.expect(at, op, "lane index", *index, Kind::Int);
            }
            I::InsertLane { vector, value, index } => {
                if let Some(ty) = self.expect(at, op, "operand", *vector, Kind::Vector) {
                    self.expect_type(at, op, "inserted value", *value, ty.lane_type());
                }
                self.expect(at, op, "lane index", *index, Kind::Int);
            }
            I::Shuffle { args, mask } => self.check_shuffle(at, args, mask),
            I::Reduce { op: reduce, args, .. } => self.check_reduce(at, *reduce, args),
            I::ExtractValue { aggregate, indices } => {
                self.indexed_type(at, op, *aggregate, indices);
            }
            I::InsertValue { aggregate, value, indices } => {
                if let Some(field) = self.indexed_type(at, op, *aggregate, indices) {
                    self.expect_type(at, op, "inserted value", *value, &field);
                }
            }
            I::AtomicRmw { op: rmw, ptr, value, ordering, .. } => {
                self.expect(at, op, "pointer operand", *ptr, Kind::Ptr);
                let (kind, expected) = match rmw {
                    AtomicRmwOp::Xchg => (None, "an integer, a float or a pointer"),
                    AtomicRmwOp::Fadd
                    | AtomicRmwOp::Fsub
                    | AtomicRmwOp::Fmax
                    | AtomicRmwOp::Fmin => (Some(Kind::Float), ""),
                    _ => (Some(Kind::Int), ""),
                };
                match kind {
                    Some(kind) => {
                        self.expect(at, &format!("atomicrmw {rmw}"), "value", *value, kind);
                    }
                    None => {
                        if let Some(ty) = self.ty(*value).filter(|t| !t.is_scalar()) {
                            let name = self.value_name(*value);
                            self.error(
                                at,
                                format!("value {name} of `atomicrmw xchg` has type {ty}, expected {expected}"),
                                format!("expected {expected}, found {ty}"),
                            );
                        }
                    }
                }
                if *ordering == Ordering::Unordered {
                    self.error(at, "`atomicrmw` cannot be unordered", "invalid ordering");
                }
            }
            I::CmpXchg { ptr, expected, new, success, failure, .. } => {
                self.expect(at, op, "pointer operand", *ptr, Kind::Ptr);
                if self.expect(at, op, "expected value", *expected, Kind::IntOrPtr).is_some() {
                    self.expect_same(at, op, *expected, *new);
                }
                self.check_cmpxchg_orderings(at, *success, *failure);
            }
            I::Fence { ordering } => {
                if matches!(ordering, Ordering::Unordered | Ordering::Monotonic) {
                    self.error(
                        at,
                        format!("`fence` cannot be {ordering}"),
                        "fences are acquire, release, acq_rel or seq_cst",
                    );
                }
            }
            I::Jump { dest } => self.check_block_call(at, dest),
            I::Brif { cond, then_dest, else_dest } => {
                self.expect(at, op, "condition", *cond, Kind::I1);
                self.check_block_call(at, then_dest);
                self.check_block_call(at, else_dest);
            }
            I::Switch { value, default, cases } => {
                if let Some(ty) = self.expect(at, op, "operand", *value, Kind::Int) {
                    let bits = ty.int_bits().unwrap_or(128);
                    let mut seen = HashSet::new();
                    for (case, _) in cases {
                        if mask_to_width(*case, bits) != *case {
                            self.error(
                                at,
                                format!("switch case {case} does not fit {ty}"),
                                "case out of range",
                            );
                        } else if !seen.insert(*case) {
                            let shown = crate::constant::sign_extend(*case, bits);
                            self.error(
                                at,
                                format!("duplicate switch case {shown}"),
                                "case listed twice",
                            );
                        }
                    }
                }
                self.check_block_call(at, default);
                for (_, dest) in cases {
                    self.check_block_call(at, dest);
                }
            }
            I::Return { value } => self.check_return(at, *value),
            I::Unreachable => {}
        }
    }

    fn check_select(&mut self, at: At, args: &[Value; 3]) {
        let (a, b) = (self.ty(args[1]), self.ty(args[2]));
        if a.is_some() && b.is_some() {
            self.expect_same(at, "select", args[1], args[2]);
        }
        let Some(cond) = self.ty(args[0]) else { return };
        let ok = match a {
            Some(Type::Vector(_, n)) => *cond == Type::I1 || *cond == Type::vector(Type::I1, *n),
            _ => *cond == Type::I1,
        };
        if !ok {
            let expected = match a {
                Some(Type::Vector(_, n)) => format!("i1 or <{n} x i1>"),
                _ => "i1".to_string(),
            };
            let name = self.value_name(args[0]);
            self.error(
                at,
                format!("condition {name} of `select` has type {cond}, expected {expected}"),
                format!("expected {expected}, found {cond}"),
            );
        }
    }

    /// `llvm.va_start` needs a variadic caller (its save area) and every `va_*` intrinsic
    /// its one declaration shape: `fn(ptr)` or, for `va_copy`, `fn(ptr, ptr)`.
    fn check_va_intrinsic(&mut self, at: At, intrinsic: VaIntrinsic, declared: &Signature) {
        let name = intrinsic.name();
        let expected = intrinsic.signature();
        if *declared != expected {
            let shape = if intrinsic.operand_count() == 2 { "fn(ptr, ptr)" } else { "fn(ptr)" };
            self.error(
                at,
                format!("@{name} is declared with the wrong signature: it must be {shape}"),
                format!("expected {shape}"),
            );
        }
        if intrinsic == VaIntrinsic::Start && !self.func.signature.varargs {
            let function = symbol_name(&self.func.name);
            self.error(
                at,
                format!("@{name} in {function}, which is not variadic: there are no variable arguments to start"),
                "only a function declared with `...` may call this",
            );
        }
    }

    fn check_call_args(&mut self, at: At, callee: Callee, sig: &Signature, args: &[Value]) {
        let (given, fixed) = (args.len(), sig.params.len());
        let callee = |this: &Self| match callee {
            Callee::Direct(name) => symbol_name(name),
            Callee::Indirect(v) => this.value_name(v),
        };
        if given < fixed || (given > fixed && !sig.varargs) {
            let callee = callee(self);
            let takes = if sig.varargs { format!("at least {fixed}") } else { fixed.to_string() };
            self.error(
                at,
                format!(
                    "call to {callee} passes {given} arguments, but its signature takes {takes}"
                ),
                format!("expected {takes} arguments"),
            );
            return;
        }
        for (i, (&arg, expected)) in args.iter().zip(&sig.params).enumerate() {
            if let Some(ty) = self.ty(arg).filter(|t| *t != expected) {
                let name = self.value_name(arg);
                let callee = callee(self);
                self.error(
                    at,
                    format!("argument {i} ({name}) of call to {callee} has type {ty}, expected {expected}"),
                    format!("expected {expected}, found {ty}"),
                );
            }
        }
        for &arg in &args[fixed..] {
            if let Some(ty) = self.ty(arg) {
                self.check_type(at, ty);
            }
        }
    }

    fn check_shuffle(&mut self, at: At, args: &[Value; 2], mask: &[Option<u32>]) {
        let Some(ty) = self.expect(at, "shuffle", "operand", args[0], Kind::Vector) else {
            return;
        };
        self.expect_type(at, "shuffle", "operand", args[1], ty);
        if mask.is_empty() {
            self.error(at, "`shuffle` has an empty mask", "the result needs at least one lane");
        }
        let limit = u64::from(ty.lanes()) * 2;
        for lane in mask.iter().flatten() {
            if u64::from(*lane) >= limit {
                self.error(
                    at,
                    format!("shuffle mask lane {lane} is out of range for two {ty} operands ({limit} lanes)"),
                    format!("lanes must be below {limit}"),
                );
            }
        }
    }

    fn check_reduce(&mut self, at: At, op: ReduceOp, args: &[Value]) {
        let name = op.name();
        let Some(&vector) = args.first() else {
            self.error(at, format!("`{name}` has no operands"), "missing vector operand");
            return;
        };
        let kind = if op.is_float() { Kind::FloatVector } else { Kind::IntVector };
        let ty = self.expect(at, name, "operand", vector, kind);
        let expected = if op.has_start() { 2 } else { 1 };
        if args.len() != expected {
            let what = if op.has_start() { "a vector and a start value" } else { "only a vector" };
            self.error(
                at,
                format!("`{name}` takes {what}, found {} operands", args.len()),
                format!("expected {expected} operands"),
            );
            return;
        }
        if let (Some(ty), Some(&start)) = (ty, args.get(1)) {
            self.expect_type(at, name, "start value", start, ty.lane_type());
        }
    }

    /// The type at `indices` inside `aggregate`'s type, reporting bad indices.
    fn indexed_type(
        &mut self,
        at: At,
        op: &str,
        aggregate: Value,
        indices: &[u32],
    ) -> Option<Type> {
        let mut ty = self.expect(at, op, "operand", aggregate, Kind::Aggregate)?;
        if indices.is_empty() {
            self.error(at, format!("`{op}` needs at least one index"), "missing index");
            return None;
        }
        for &index in indices {
            let field = ty.is_aggregate().then(|| ty.element_type(u64::from(index))).flatten();
            match field {
                Some(field) => ty = field,
                None => {
                    self.error(
                        at,
                        format!("index {index} of `{op}` is out of range for type {ty}"),
                        "invalid index",
                    );
                    return None;
                }
            }
        }
        Some(ty.clone())
    }

    fn check_cmpxchg_orderings(&mut self, at: At, success: Ordering, failure: Ordering) {
        if success == Ordering::Unordered || failure == Ordering::Unordered {
            self.error(at, "`cmpxchg` orderings must be at least monotonic", "invalid ordering");
            return;
        }
        // Since LLVM 13 the failure ordering may be stronger than the success ordering.
        if matches!(failure, Ordering::Release | Ordering::AcqRel) {
            self.error(
                at,
                format!("`cmpxchg` failure ordering cannot be {failure}"),
                "a failed cmpxchg only loads",
            );
        }
    }

    fn check_block_call(&mut self, at: At, call: &BlockCall) {
        let target = call.block;
        let Some(data) = self.func.dfg.blocks.get(target) else {
            self.error(at, format!("branch to nonexistent block {target}"), "no such block");
            return;
        };
        if !self.laid_out.contains(&target) {
            let name = self.block_name(target);
            self.error(
                at,
                format!("branch to block {name}, which is not laid out"),
                "block not in the layout",
            );
            return;
        }
        let params = &data.params;
        if call.args.len() != params.len() {
            let name = self.block_name(target);
            self.error(
                at,
                format!(
                    "branch to {name} passes {} arguments, but the block has {} parameters",
                    call.args.len(),
                    params.len()
                ),
                format!("expected {} arguments", params.len()),
            );
            return;
        }
        for (i, (&arg, &param)) in call.args.iter().zip(params).enumerate() {
            if let (Some(ty), Some(expected)) = (self.ty(arg), self.ty(param)) {
                if ty != expected {
                    let arg_name = self.value_name(arg);
                    let param_name = self.value_name(param);
                    let name = self.block_name(target);
                    self.error(
                        at,
                        format!(
                            "argument {i} ({arg_name}) of branch to {name} has type {ty}, but parameter {param_name} has type {expected}"
                        ),
                        format!("expected {expected}, found {ty}"),
                    );
                }
            }
        }
    }

    fn check_return(&mut self, at: At, value: Option<Value>) {
        let ret = self.func.signature.ret.as_ref();
        match (value, ret) {
            (None, None) => {}
            (Some(v), None) => {
                let name = self.value_name(v);
                self.error(
                    at,
                    format!("`ret` of {name} in a function returning void"),
                    "expected `ret` without a value",
                );
            }
            (None, Some(ty)) => {
                self.error(
                    at,
                    format!("`ret` without a value in a function returning {ty}"),
                    format!("expected a {ty} value"),
                );
            }
            (Some(v), Some(expected)) => {
                if let Some(ty) = self.ty(v).filter(|t| *t != expected) {
                    let name = self.value_name(v);
                    self.error(
                        at,
                        format!("return value {name} has type {ty}, but the function returns {expected}"),
                        format!("expected {expected}, found {ty}"),
                    );
                }
            }
        }
    }
}
