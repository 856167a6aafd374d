//! Instructions: the operation enums (each with its one textual name), flags, and
//! `InstructionData`, the payload stored in the data-flow graph.
//!
//! Every instruction has at most one result. Operands are always SSA values; constants
//! enter through `const` instructions. The result type of every instruction follows from
//! its data and the callee signatures alone (see `DataFlowGraph::result_type`), which is
//! why the text form writes a type wherever the result type depends on one.

use crate::constant::Constant;
use crate::entities::{Block, FuncId, Value};
use crate::function::Signature;
use crate::types::Type;

/// Declares a field-less enum together with its textual names, so that the printer and the
/// parser share one table.
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
        pub enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            pub fn from_name(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

named_enum! {
    /// One-operand operations; the result has the operand's type.
    pub enum UnaryOp {
        Fneg = "fneg",
        Fabs = "fabs",
        Sqrt = "sqrt",
        Floor = "floor",
        Ceil = "ceil",
        /// Round toward zero (`llvm.trunc`).
        Ftrunc = "ftrunc",
        /// Round half away from zero (`llvm.round`).
        Round = "round",
        /// Round half to even (`llvm.roundeven`, `rint`/`nearbyint` in the default mode).
        Roundeven = "roundeven",
        Ctpop = "ctpop",
        Ctlz = "ctlz",
        Cttz = "cttz",
        Bswap = "bswap",
        Bitreverse = "bitreverse",
        /// Integer absolute value, wrapping at the minimum.
        Iabs = "iabs",
        /// Stops undef/poison propagation; adc's undef is already a fixed value.
        Freeze = "freeze",
    }
}

named_enum! {
    /// Two-operand operations on operands of one type; the result has that type.
    pub enum BinaryOp {
        Add = "add",
        Sub = "sub",
        Mul = "mul",
        Udiv = "udiv",
        Sdiv = "sdiv",
        Urem = "urem",
        Srem = "srem",
        /// Shift amounts are taken modulo the bit width (LLVM: poison when too large).
        Shl = "shl",
        Lshr = "lshr",
        Ashr = "ashr",
        And = "and",
        Or = "or",
        Xor = "xor",
        Smin = "smin",
        Smax = "smax",
        Umin = "umin",
        Umax = "umax",
        Fadd = "fadd",
        Fsub = "fsub",
        Fmul = "fmul",
        Fdiv = "fdiv",
        Frem = "frem",
        /// IEEE minNum/maxNum: a NaN operand yields the other operand.
        Fminnum = "fminnum",
        Fmaxnum = "fmaxnum",
        Copysign = "copysign",
    }
}

impl BinaryOp {
    pub fn is_float(self) -> bool {
        matches!(
            self,
            BinaryOp::Fadd
                | BinaryOp::Fsub
                | BinaryOp::Fmul
                | BinaryOp::Fdiv
                | BinaryOp::Frem
                | BinaryOp::Fminnum
                | BinaryOp::Fmaxnum
                | BinaryOp::Copysign
        )
    }

    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinaryOp::Add
                | BinaryOp::Mul
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
                | BinaryOp::Smin
                | BinaryOp::Smax
                | BinaryOp::Umin
                | BinaryOp::Umax
                | BinaryOp::Fadd
                | BinaryOp::Fmul
                | BinaryOp::Fminnum
                | BinaryOp::Fmaxnum
        )
    }
}

impl UnaryOp {
    pub fn is_float(self) -> bool {
        matches!(
            self,
            UnaryOp::Fneg
                | UnaryOp::Fabs
                | UnaryOp::Sqrt
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Ftrunc
                | UnaryOp::Round
                | UnaryOp::Roundeven
        )
    }
}

named_enum! {
    pub enum IntCC {
        Eq = "eq",
        Ne = "ne",
        Ugt = "ugt",
        Uge = "uge",
        Ult = "ult",
        Ule = "ule",
        Sgt = "sgt",
        Sge = "sge",
        Slt = "slt",
        Sle = "sle",
    }
}

impl IntCC {
    /// The predicate with its operands exchanged: `a < b` is `b > a`.
    pub fn swapped(self) -> IntCC {
        use IntCC::*;
        match self {
            Slt => Sgt,
            Sgt => Slt,
            Sle => Sge,
            Sge => Sle,
            Ult => Ugt,
            Ugt => Ult,
            Ule => Uge,
            Uge => Ule,
            other => other,
        }
    }

    /// The predicate that holds exactly when this one does not.
    pub fn inverse(self) -> IntCC {
        use IntCC::*;
        match self {
            Eq => Ne,
            Ne => Eq,
            Slt => Sge,
            Sge => Slt,
            Sgt => Sle,
            Sle => Sgt,
            Ult => Uge,
            Uge => Ult,
            Ugt => Ule,
            Ule => Ugt,
        }
    }
}

named_enum! {
    /// `o*` predicates are false when an operand is NaN, `u*` ones are true.
    pub enum FloatCC {
        False = "false",
        Oeq = "oeq",
        Ogt = "ogt",
        Oge = "oge",
        Olt = "olt",
        Ole = "ole",
        One = "one",
        Ord = "ord",
        Ueq = "ueq",
        Ugt = "ugt",
        Uge = "uge",
        Ult = "ult",
        Ule = "ule",
        Une = "une",
        Uno = "uno",
        True = "true",
    }
}

named_enum! {
    pub enum CastOp {
        Zext = "zext",
        Sext = "sext",
        Trunc = "trunc",
        /// Float to integer conversions saturate; NaN converts to 0.
        Fptoui = "fptoui",
        Fptosi = "fptosi",
        Uitofp = "uitofp",
        Sitofp = "sitofp",
        Fpext = "fpext",
        Fptrunc = "fptrunc",
        /// Reinterprets bits between types of equal size (not pointers).
        Bitcast = "bitcast",
        Ptrtoint = "ptrtoint",
        Inttoptr = "inttoptr",
        Addrspacecast = "addrspacecast",
    }
}

named_enum! {
    /// Horizontal reductions of a vector to its lane type. `fadd`/`fmul` take a start value
    /// and are ordered (left to right) unless the `reassoc` flag is set.
    pub enum ReduceOp {
        Add = "reduce.add",
        Mul = "reduce.mul",
        And = "reduce.and",
        Or = "reduce.or",
        Xor = "reduce.xor",
        Smin = "reduce.smin",
        Smax = "reduce.smax",
        Umin = "reduce.umin",
        Umax = "reduce.umax",
        Fadd = "reduce.fadd",
        Fmul = "reduce.fmul",
        Fmin = "reduce.fmin",
        Fmax = "reduce.fmax",
    }
}

impl ReduceOp {
    /// Whether the reduction takes a start value as its second operand.
    pub fn has_start(self) -> bool {
        matches!(self, ReduceOp::Fadd | ReduceOp::Fmul)
    }

    pub fn is_float(self) -> bool {
        matches!(self, ReduceOp::Fadd | ReduceOp::Fmul | ReduceOp::Fmin | ReduceOp::Fmax)
    }

    /// The binary operation the reduction folds the lanes with.
    pub fn binary_op(self) -> BinaryOp {
        match self {
            ReduceOp::Add => BinaryOp::Add,
            ReduceOp::Mul => BinaryOp::Mul,
            ReduceOp::And => BinaryOp::And,
            ReduceOp::Or => BinaryOp::Or,
            ReduceOp::Xor => BinaryOp::Xor,
            ReduceOp::Smin => BinaryOp::Smin,
            ReduceOp::Smax => BinaryOp::Smax,
            ReduceOp::Umin => BinaryOp::Umin,
            ReduceOp::Umax => BinaryOp::Umax,
            ReduceOp::Fadd => BinaryOp::Fadd,
            ReduceOp::Fmul => BinaryOp::Fmul,
            ReduceOp::Fmin => BinaryOp::Fminnum,
            ReduceOp::Fmax => BinaryOp::Fmaxnum,
        }
    }
}

named_enum! {
    pub enum AtomicRmwOp {
        Xchg = "xchg",
        Add = "add",
        Sub = "sub",
        And = "and",
        Nand = "nand",
        Or = "or",
        Xor = "xor",
        Max = "max",
        Min = "min",
        Umax = "umax",
        Umin = "umin",
        Fadd = "fadd",
        Fsub = "fsub",
        Fmax = "fmax",
        Fmin = "fmin",
    }
}

named_enum! {
    pub enum Ordering {
        Unordered = "unordered",
        Monotonic = "monotonic",
        Acquire = "acquire",
        Release = "release",
        AcqRel = "acq_rel",
        SeqCst = "seq_cst",
    }
}

/// Declares a bit-set whose members each have one textual name.
macro_rules! flag_set {
    ($(#[$meta:meta])* pub struct $name:ident: $repr:ty { $($(#[$fmeta:meta])* $flag:ident = $bit:literal, $text:literal;)* }) => {
        $(#[$meta])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Default, Debug)]
        pub struct $name(pub $repr);

        impl $name {
            $($(#[$fmeta])* pub const $flag: $name = $name(1 << $bit);)*
            pub const NAMES: &'static [($name, &'static str)] = &[$(($name::$flag, $text),)*];

            pub const fn empty() -> $name { $name(0) }
            pub fn is_empty(self) -> bool { self.0 == 0 }
            pub fn contains(self, other: $name) -> bool { self.0 & other.0 == other.0 }
            pub fn insert(&mut self, other: $name) { self.0 |= other.0; }
            pub fn from_name(text: &str) -> Option<$name> {
                Self::NAMES.iter().find(|(_, n)| *n == text).map(|(f, _)| *f)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name { $name(self.0 | rhs.0) }
        }
    };
}

flag_set! {
    /// Flags on arithmetic: integer wrap/exactness facts and fast-math permissions.
    pub struct InstFlags: u16 {
        NUW = 0, "nuw";
        NSW = 1, "nsw";
        EXACT = 2, "exact";
        DISJOINT = 3, "disjoint";
        NNAN = 4, "nnan";
        NINF = 5, "ninf";
        NSZ = 6, "nsz";
        ARCP = 7, "arcp";
        CONTRACT = 8, "contract";
        AFN = 9, "afn";
        REASSOC = 10, "reassoc";
        INBOUNDS = 11, "inbounds";
    }
}

impl InstFlags {
    /// All seven fast-math flags; printed as `fast`.
    pub const FAST: InstFlags = InstFlags(0b111_1111 << 4);
}

flag_set! {
    /// Facts about a function or a call site.
    pub struct FuncAttrs: u16 {
        /// Reads and writes no memory visible to the caller.
        READNONE = 0, "readnone";
        READONLY = 1, "readonly";
        WRITEONLY = 2, "writeonly";
        /// Touches only memory reachable from its pointer arguments.
        ARGMEMONLY = 3, "argmemonly";
        NOINLINE = 4, "noinline";
        ALWAYSINLINE = 5, "alwaysinline";
        NOUNWIND = 6, "nounwind";
        WILLRETURN = 7, "willreturn";
        NORETURN = 8, "noreturn";
        /// The returned pointer aliases nothing else (malloc-like).
        NOALIAS_RETURN = 9, "noalias_return";
        /// A GPU kernel entry point.
        KERNEL = 10, "kernel";
        NOFREE = 11, "nofree";
    }
}

flag_set! {
    /// Facts about one parameter.
    pub struct ParamAttrs: u16 {
        NOALIAS = 0, "noalias";
        NOCAPTURE = 1, "nocapture";
        READONLY = 2, "readonly";
        WRITEONLY = 3, "writeonly";
        NONNULL = 4, "nonnull";
        ZEROEXT = 5, "zeroext";
        SIGNEXT = 6, "signext";
        /// The pointer argument stands for a by-value aggregate that the System V ABI
        /// passes in the argument area of the stack (`Function::byval_sizes` has its size).
        BYVAL = 7, "byval";
        /// The pointer argument is where the callee writes its aggregate result; the ABI
        /// returns it in `rax` too.
        SRET = 8, "sret";
    }
}

/// A branch target and the arguments passed to its block parameters.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct BlockCall {
    pub block: Block,
    pub args: Vec<Value>,
}

impl BlockCall {
    pub fn new(block: Block, args: Vec<Value>) -> BlockCall {
        BlockCall { block, args }
    }
}

#[derive(Clone, PartialEq, Debug)]
pub enum InstructionData {
    /// `%c = const f64 1.5`
    Const { ty: Type, value: Constant },
    /// `%r = fneg f64 %x`
    Unary { op: UnaryOp, flags: InstFlags, arg: Value },
    /// `%r = add nsw i32 %a, %b`
    Binary { op: BinaryOp, flags: InstFlags, args: [Value; 2] },
    /// `%r = fma f64 %a, %b, %c`: `a * b + c` with one rounding.
    Fma { flags: InstFlags, args: [Value; 3] },
    /// `%c = icmp slt i64 %a, %b`
    Icmp { cond: IntCC, args: [Value; 2] },
    /// `%c = fcmp olt f64 %a, %b`
    Fcmp { cond: FloatCC, flags: InstFlags, args: [Value; 2] },
    /// `%r = select f64 %cond, %a, %b`; `args` is `[cond, if_true, if_false]`.
    Select { flags: InstFlags, args: [Value; 3] },
    /// `%r = sext %x to i64`
    Cast { op: CastOp, arg: Value, ty: Type },
    /// `%p = alloca f64, %n, align 8`: stack memory for `count` (default 1) elements.
    Alloca { ty: Type, count: Option<Value>, align: u32 },
    /// `%x = load f64, %p, align 8`
    Load { ty: Type, ptr: Value, align: u32, volatile: bool },
    /// `store %x, %p, align 8`
    Store { value: Value, ptr: Value, align: u32, volatile: bool },
    /// `%q = ptradd ptr %p, %offset`: byte offset (an `i64`, may be negative).
    PtrAdd { flags: InstFlags, ptr: Value, offset: Value },
    /// `memcpy %dst, %src, %len` or, when `may_overlap`, `memmove`.
    MemCopy { dst: Value, src: Value, len: Value, may_overlap: bool, volatile: bool },
    /// `memset %dst, %byte, %len`
    MemSet { dst: Value, byte: Value, len: Value, volatile: bool },
    /// `%r = call @f(%a, %b) readnone`
    Call { callee: FuncId, args: Vec<Value>, attrs: FuncAttrs },
    /// `%r = call_indirect fn(f64) -> f64 %fp(%a)`
    CallIndirect { sig: Box<Signature>, callee: Value, args: Vec<Value>, attrs: FuncAttrs },
    /// `%x = extractlane <4 x f64> %v, %i`
    ExtractLane { vector: Value, index: Value },
    /// `%w = insertlane <4 x f64> %v, %x, %i`
    InsertLane { vector: Value, value: Value, index: Value },
    /// `%s = shuffle <4 x f64> %a, %b, [0, 5, undef, 7]`; mask lanes index the concatenation
    /// of both operands, `None` is an undefined lane.
    Shuffle { args: [Value; 2], mask: Vec<Option<u32>> },
    /// `%r = reduce.fadd reassoc <4 x f64> %v, %start`; `args` is `[vector]` or
    /// `[vector, start]`.
    Reduce { op: ReduceOp, flags: InstFlags, args: Vec<Value> },
    /// `%f = extractvalue {i32, f64} %s, 1`
    ExtractValue { aggregate: Value, indices: Vec<u32> },
    /// `%t = insertvalue {i32, f64} %s, %x, 1`
    InsertValue { aggregate: Value, value: Value, indices: Vec<u32> },
    /// `%old = atomicrmw add i32 %p, %v seq_cst`
    AtomicRmw { op: AtomicRmwOp, ptr: Value, value: Value, ordering: Ordering, volatile: bool },
    /// `%r = cmpxchg i32 %p, %expected, %new seq_cst monotonic`: result `{i32, i1}`.
    CmpXchg {
        ptr: Value,
        expected: Value,
        new: Value,
        success: Ordering,
        failure: Ordering,
        weak: bool,
        volatile: bool,
    },
    /// `fence seq_cst`
    Fence { ordering: Ordering },
    /// `jump ^loop(%i)`
    Jump { dest: BlockCall },
    /// `brif %c, ^then(%a), ^else`
    Brif { cond: Value, then_dest: BlockCall, else_dest: BlockCall },
    /// `switch %x, ^default [0: ^a, 7: ^b(%y)]`; case values are masked to `%x`'s width.
    Switch { value: Value, default: BlockCall, cases: Vec<(u128, BlockCall)> },
    /// `ret %x` or `ret`
    Return { value: Option<Value> },
    /// `unreachable`
    Unreachable,
}

/// Every mnemonic of the text form (for "did you mean" hints and coverage tests).
pub fn all_opcode_names() -> Vec<&'static str> {
    let mut names = vec![
        "const",
        "fma",
        "icmp",
        "fcmp",
        "select",
        "alloca",
        "load",
        "store",
        "ptradd",
        "memcpy",
        "memmove",
        "memset",
        "call",
        "call_indirect",
        "extractlane",
        "insertlane",
        "shuffle",
        "extractvalue",
        "insertvalue",
        "atomicrmw",
        "cmpxchg",
        "fence",
        "jump",
        "brif",
        "switch",
        "ret",
        "unreachable",
    ];
    names.extend(UnaryOp::ALL.iter().map(|op| op.name()));
    names.extend(BinaryOp::ALL.iter().map(|op| op.name()));
    names.extend(CastOp::ALL.iter().map(|op| op.name()));
    names.extend(ReduceOp::ALL.iter().map(|op| op.name()));
    names
}

/// Expands to one `match` over every operand of an instruction, including branch arguments.
/// The same text serves `&InstructionData` and `&mut InstructionData`: match ergonomics
/// make each binding `&Value` or `&mut Value` (and each list `&Vec` or `&mut Vec`).
macro_rules! for_each_operand {
    ($data:expr, $f:ident) => {{
        use InstructionData as I;
        match $data {
            I::Const { .. } | I::Fence { .. } | I::Unreachable => {}
            I::Alloca { count, .. } => {
                if let Some(v) = count {
                    $f(v)
                }
            }
            I::Unary { arg, .. } | I::Cast { arg, .. } => $f(arg),
            I::Binary { args, .. } | I::Icmp { args, .. } | I::Fcmp { args, .. } => {
                for v in args {
                    $f(v)
                }
            }
            I::Shuffle { args, .. } => {
                for v in args {
                    $f(v)
                }
            }
            I::Fma { args, .. } | I::Select { args, .. } => {
                for v in args {
                    $f(v)
                }
            }
            I::Reduce { args, .. } | I::Call { args, .. } => {
                for v in args {
                    $f(v)
                }
            }
            I::CallIndirect { callee, args, .. } => {
                $f(callee);
                for v in args {
                    $f(v)
                }
            }
            I::Load { ptr, .. } => $f(ptr),
            I::Store { value, ptr, .. } => {
                $f(value);
                $f(ptr)
            }
            I::PtrAdd { ptr, offset, .. } => {
                $f(ptr);
                $f(offset)
            }
            I::MemCopy { dst, src, len, .. } => {
                $f(dst);
                $f(src);
                $f(len)
            }
            I::MemSet { dst, byte, len, .. } => {
                $f(dst);
                $f(byte);
                $f(len)
            }
            I::ExtractLane { vector, index } => {
                $f(vector);
                $f(index)
            }
            I::InsertLane { vector, value, index } => {
                $f(vector);
                $f(value);
                $f(index)
            }
            I::ExtractValue { aggregate, .. } => $f(aggregate),
            I::InsertValue { aggregate, value, .. } => {
                $f(aggregate);
                $f(value)
            }
            I::AtomicRmw { ptr, value, .. } => {
                $f(ptr);
                $f(value)
            }
            I::CmpXchg { ptr, expected, new, .. } => {
                $f(ptr);
                $f(expected);
                $f(new)
            }
            I::Jump { dest: BlockCall { args, .. } } => {
                for v in args {
                    $f(v)
                }
            }
            I::Brif {
                cond,
                then_dest: BlockCall { args: then_args, .. },
                else_dest: BlockCall { args: else_args, .. },
            } => {
                $f(cond);
                for v in then_args {
                    $f(v)
                }
                for v in else_args {
                    $f(v)
                }
            }
            I::Switch { value, default: BlockCall { args, .. }, cases } => {
                $f(value);
                for v in args {
                    $f(v)
                }
                for (_, BlockCall { args, .. }) in cases {
                    for v in args {
                        $f(v)
                    }
                }
            }
            I::Return { value } => {
                if let Some(v) = value {
                    $f(v)
                }
            }
        }
    }};
}

impl InstructionData {
    /// Calls `f` on every operand, branch arguments included, in text order.
    pub fn for_each_arg(&self, mut f: impl FnMut(Value)) {
        let mut visit = |v: &Value| f(*v);
        for_each_operand!(self, visit);
    }

    /// All operands, branch arguments included, in text order.
    pub fn args(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_arg(|v| out.push(v));
        out
    }

    /// Rewrites every operand in place.
    pub fn map_args(&mut self, mut f: impl FnMut(Value) -> Value) {
        let mut visit = |v: &mut Value| *v = f(*v);
        for_each_operand!(self, visit);
    }

    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstructionData::Jump { .. }
                | InstructionData::Brif { .. }
                | InstructionData::Switch { .. }
                | InstructionData::Return { .. }
                | InstructionData::Unreachable
        )
    }

    /// Branch targets, in text order (switch: default first).
    pub fn branch_targets(&self) -> Vec<&BlockCall> {
        match self {
            InstructionData::Jump { dest } => vec![dest],
            InstructionData::Brif { then_dest, else_dest, .. } => vec![then_dest, else_dest],
            InstructionData::Switch { default, cases, .. } => {
                std::iter::once(default).chain(cases.iter().map(|(_, d)| d)).collect()
            }
            _ => Vec::new(),
        }
    }

    pub fn branch_targets_mut(&mut self) -> Vec<&mut BlockCall> {
        match self {
            InstructionData::Jump { dest } => vec![dest],
            InstructionData::Brif { then_dest, else_dest, .. } => vec![then_dest, else_dest],
            InstructionData::Switch { default, cases, .. } => {
                std::iter::once(default).chain(cases.iter_mut().map(|(_, d)| d)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The instruction's flags, for the instructions that carry any.
    pub fn flags(&self) -> Option<InstFlags> {
        let mut copy = self.clone();
        copy.flags_mut().map(|f| *f)
    }

    pub fn flags_mut(&mut self) -> Option<&mut InstFlags> {
        use InstructionData as I;
        match self {
            I::Unary { flags, .. }
            | I::Binary { flags, .. }
            | I::Fma { flags, .. }
            | I::Fcmp { flags, .. }
            | I::Select { flags, .. }
            | I::PtrAdd { flags, .. }
            | I::Reduce { flags, .. } => Some(flags),
            _ => None,
        }
    }

    /// Whether the result depends on the operands alone and computing it cannot trap: no
    /// memory, no call, no control flow. Division and lane indexing are left out because
    /// whether they trap depends on operand values; callers that know those decide.
    pub fn is_pure_non_trapping(&self) -> bool {
        matches!(
            self,
            InstructionData::Const { .. }
                | InstructionData::Unary { .. }
                | InstructionData::Fma { .. }
                | InstructionData::Icmp { .. }
                | InstructionData::Fcmp { .. }
                | InstructionData::Select { .. }
                | InstructionData::Cast { .. }
                | InstructionData::PtrAdd { .. }
                | InstructionData::Shuffle { .. }
                | InstructionData::Reduce { .. }
                | InstructionData::ExtractValue { .. }
                | InstructionData::InsertValue { .. }
        )
    }

    /// Whether the instruction may read or write memory, or has another effect (a call, a
    /// trap, a fence), so that it may not be removed or reordered freely.
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            InstructionData::Store { .. }
                | InstructionData::MemCopy { .. }
                | InstructionData::MemSet { .. }
                | InstructionData::Call { .. }
                | InstructionData::CallIndirect { .. }
                | InstructionData::AtomicRmw { .. }
                | InstructionData::CmpXchg { .. }
                | InstructionData::Fence { .. }
        ) || self.is_terminator()
            || matches!(self, InstructionData::Load { volatile: true, .. })
    }

    /// The instruction's mnemonic as written in the text form.
    pub fn opcode_name(&self) -> &'static str {
        use InstructionData as I;
        match self {
            I::Const { .. } => "const",
            I::Unary { op, .. } => op.name(),
            I::Binary { op, .. } => op.name(),
            I::Fma { .. } => "fma",
            I::Icmp { .. } => "icmp",
            I::Fcmp { .. } => "fcmp",
            I::Select { .. } => "select",
            I::Cast { op, .. } => op.name(),
            I::Alloca { .. } => "alloca",
            I::Load { .. } => "load",
            I::Store { .. } => "store",
            I::PtrAdd { .. } => "ptradd",
            I::MemCopy { may_overlap: false, .. } => "memcpy",
            I::MemCopy { may_overlap: true, .. } => "memmove",
            I::MemSet { .. } => "memset",
            I::Call { .. } => "call",
            I::CallIndirect { .. } => "call_indirect",
            I::ExtractLane { .. } => "extractlane",
            I::InsertLane { .. } => "insertlane",
            I::Shuffle { .. } => "shuffle",
            I::Reduce { op, .. } => op.name(),
            I::ExtractValue { .. } => "extractvalue",
            I::InsertValue { .. } => "insertvalue",
            I::AtomicRmw { .. } => "atomicrmw",
            I::CmpXchg { .. } => "cmpxchg",
            I::Fence { .. } => "fence",
            I::Jump { .. } => "jump",
            I::Brif { .. } => "brif",
            I::Switch { .. } => "switch",
            I::Return { .. } => "ret",
            I::Unreachable => "unreachable",
        }
    }
}
