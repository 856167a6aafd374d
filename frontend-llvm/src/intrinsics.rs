//! LLVM intrinsics -> adc instructions, expansions or libm calls.
//!
//! Choices worth knowing:
//! - `llvm.fmuladd` is `fmul` + `fadd`, both `contract`, never fused: clang's default
//!   x86-64 code (no FMA) does not fuse, and the interpreter must match native output.
//! - `llvm.minimum/maximum` (NaN-propagating, -0 < +0) expand to compares and selects;
//!   equal operands pick `a | b` (minimum) or `a & b` (maximum) bitwise, which orders
//!   the zeros.
//! - `llvm.powi` calls an internal helper `__adc_powi_f64`/`_f32` defined in the module,
//!   with compiler-rt's `__powidf2` loop (same multiplication order as native code).
//! - `llvm.stacksave` yields a null pointer and `llvm.stackrestore` is dropped: stack
//!   memory is released at return only (VLAs in loops grow the frame; fine for an oracle).
//! - lifetime, assume, noalias.scope.decl, dbg.*, prefetch, trap (the `unreachable` after
//!   it traps) are dropped; `llvm.expect*` is its first argument.
//! - `llvm.va_start`/`va_end`/`va_copy` (any overload suffix) become calls of the
//!   declarations `adc_ir::varargs` names; the backend and interpreter implement them.
//! - nvvm intrinsics stay calls to declarations of that name (the PTX emitter selects
//!   them), except the correctly rounded arithmetic `llvm.nvvm.{add,sub,mul,div,fma,
//!   sqrt}.rn.{f,d}` that LLVM 19 does not auto-upgrade: they are exactly the IEEE
//!   operations, so they become IR instructions without fast-math flags (no fusion).

use adc_ir::varargs::VaIntrinsic;
use adc_ir::{
    BinaryOp, BlockCall, CastOp, Constant, FloatCC, FuncAttrs, FuncId, Function, InstFlags,
    InstructionData as D, IntCC, Linkage, ReduceOp, Signature, Type, UnaryOp, Value,
};
use llvm_ir::instruction::Call;
use llvm_ir::Constant as C;

use crate::function::{FuncCtx, R};

/// `llvm.memcpy.p0.p0.i64` -> `memcpy`: drops the overload suffixes (types).
pub fn base_name(name: &str) -> &str {
    let mut rest = name.strip_prefix("llvm.").unwrap_or(name);
    while let Some((head, last)) = rest.rsplit_once('.') {
        if is_type_suffix(last) {
            rest = head;
        } else {
            break;
        }
    }
    rest
}

fn is_type_suffix(s: &str) -> bool {
    let mut chars = s.chars();
    let first = chars.next();
    let second = chars.next();
    matches!(first, Some('i' | 'f' | 'p' | 'v')) && second.is_some_and(|c| c.is_ascii_digit())
        || matches!(s, "x86_fp80" | "f128" | "bf16" | "ppcf128")
}

/// An nvvm correctly rounded (round-to-nearest-even, no flush to zero) operation.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum NvvmRounded {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Fma,
}

/// The IR operation equal to `llvm.nvvm.<op>.rn.<f|d>`; `.ftz` and other rounding modes
/// (`.rz`, `.rm`, `.rp`) have no IR equivalent and stay calls.
pub fn nvvm_rounded_op(name: &str) -> Option<NvvmRounded> {
    let rest = name.strip_prefix("llvm.nvvm.")?;
    let op = rest.strip_suffix(".rn.d").or_else(|| rest.strip_suffix(".rn.f"))?;
    Some(match op {
        "add" => NvvmRounded::Binary(BinaryOp::Fadd),
        "sub" => NvvmRounded::Binary(BinaryOp::Fsub),
        "mul" => NvvmRounded::Binary(BinaryOp::Fmul),
        "div" => NvvmRounded::Binary(BinaryOp::Fdiv),
        "fma" => NvvmRounded::Fma,
        "sqrt" => NvvmRounded::Unary(UnaryOp::Sqrt),
        _ => return None,
    })
}

fn call_return_type(call: &Call) -> R<llvm_ir::TypeRef> {
    match call.function_ty.as_ref() {
        llvm_ir::Type::FuncType { result_type, .. } => Ok(result_type.clone()),
        _ => Err("call through a non-function type".into()),
    }
}

fn bool_arg(call: &Call, k: usize) -> bool {
    matches!(
        call.arguments.get(k).and_then(|(op, _)| op.as_constant()),
        Some(C::Int { value: 1, .. })
    )
}

impl<'a> FuncCtx<'_, 'a> {
    fn args(&mut self, call: &Call, n: usize) -> R<Vec<Value>> {
        if call.arguments.len() < n {
            return Err(format!("expected {n} arguments"));
        }
        call.arguments[..n].iter().map(|(op, _)| self.operand(op)).collect()
    }

    fn bin(&mut self, op: BinaryOp, flags: InstFlags, a: Value, b: Value) -> R<Value> {
        self.val(D::Binary { op, flags, args: [a, b] })
    }

    fn un(&mut self, op: UnaryOp, flags: InstFlags, arg: Value) -> R<Value> {
        self.val(D::Unary { op, flags, arg })
    }

    fn icmp(&mut self, cond: IntCC, a: Value, b: Value) -> R<Value> {
        self.val(D::Icmp { cond, args: [a, b] })
    }

    fn fcmp(&mut self, cond: FloatCC, a: Value, b: Value) -> R<Value> {
        self.val(D::Fcmp { cond, flags: InstFlags::empty(), args: [a, b] })
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> R<Value> {
        self.val(D::Select { flags: InstFlags::empty(), args: [c, a, b] })
    }

    pub fn intrinsic(&mut self, name: &str, call: &'a Call) -> R<()> {
        if let Some(op) = nvvm_rounded_op(name) {
            let exact = InstFlags::empty();
            let value = match op {
                NvvmRounded::Unary(op) => {
                    let a = self.args(call, 1)?;
                    self.un(op, exact, a[0])?
                }
                NvvmRounded::Binary(op) => {
                    let a = self.args(call, 2)?;
                    self.bin(op, exact, a[0], a[1])?
                }
                NvvmRounded::Fma => {
                    let a = self.args(call, 3)?;
                    self.val(D::Fma { flags: exact, args: [a[0], a[1], a[2]] })?
                }
            };
            if let Some(dest) = &call.dest {
                self.define(dest, value);
            }
            return Ok(());
        }
        let base = base_name(name);
        let fmf = self.fmf();
        let none = InstFlags::empty();
        let unary = |b: &str| {
            Some(match b {
                "sqrt" => UnaryOp::Sqrt,
                "fabs" => UnaryOp::Fabs,
                "floor" => UnaryOp::Floor,
                "ceil" => UnaryOp::Ceil,
                "trunc" => UnaryOp::Ftrunc,
                "round" => UnaryOp::Round,
                "roundeven" | "rint" | "nearbyint" => UnaryOp::Roundeven,
                "ctpop" => UnaryOp::Ctpop,
                "ctlz" => UnaryOp::Ctlz,
                "cttz" => UnaryOp::Cttz,
                "bswap" => UnaryOp::Bswap,
                "bitreverse" => UnaryOp::Bitreverse,
                "abs" => UnaryOp::Iabs,
                _ => return None,
            })
        };
        let binary = |b: &str| {
            Some(match b {
                "copysign" => BinaryOp::Copysign,
                "minnum" => BinaryOp::Fminnum,
                "maxnum" => BinaryOp::Fmaxnum,
                "smax" => BinaryOp::Smax,
                "smin" => BinaryOp::Smin,
                "umax" => BinaryOp::Umax,
                "umin" => BinaryOp::Umin,
                _ => return None,
            })
        };
        let libm_arity = |b: &str| {
            Some(match b {
                "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh"
                | "exp" | "exp2" | "exp10" | "log" | "log2" | "log10" => 1,
                "pow" | "atan2" | "ldexp" => 2,
                _ => return None,
            })
        };
        let result: Option<Value> = if let Some(op) = unary(base) {
            let a = self.args(call, 1)?[0];
            let flags = if op.is_float() { fmf } else { none };
            Some(self.un(op, flags, a)?)
        } else if let Some(op) = binary(base) {
            let a = self.args(call, 2)?;
            let flags = if op.is_float() { fmf } else { none };
            Some(self.bin(op, flags, a[0], a[1])?)
        } else if let Some(n) = libm_arity(base) {
            let a = self.args(call, n)?;
            Some(self.libm_call(base, &a)?)
        } else {
            match base {
                "memcpy" | "memcpy.inline" | "memmove" => {
                    let a = self.args(call, 3)?;
                    let len = self.index_to_i64(a[2], false)?;
                    let (inst, _) = self.ins(D::MemCopy {
                        dst: a[0],
                        src: a[1],
                        len,
                        may_overlap: base == "memmove",
                        volatile: bool_arg(call, 3),
                    });
                    self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
                    None
                }
                "memset" | "memset.inline" => {
                    let a = self.args(call, 3)?;
                    let len = self.index_to_i64(a[2], false)?;
                    let (inst, _) = self.ins(D::MemSet {
                        dst: a[0],
                        byte: a[1],
                        len,
                        volatile: bool_arg(call, 3),
                    });
                    self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
                    None
                }
                "fmuladd" => {
                    let a = self.args(call, 3)?;
                    let flags = fmf | InstFlags::CONTRACT;
                    let p = self.bin(BinaryOp::Fmul, flags, a[0], a[1])?;
                    Some(self.bin(BinaryOp::Fadd, flags, p, a[2])?)
                }
                "fma" => {
                    let a = self.args(call, 3)?;
                    Some(self.val(D::Fma { flags: fmf, args: [a[0], a[1], a[2]] })?)
                }
                "minimum" | "maximum" => {
                    let a = self.args(call, 2)?;
                    Some(self.min_max(base == "minimum", a[0], a[1])?)
                }
                // lround/lrint: round (half away / half even) then convert; the range is
                // the caller's responsibility as in C.
                "lround" | "llround" | "lrint" | "llrint" => {
                    let a = self.args(call, 1)?[0];
                    let op =
                        if base.ends_with("round") { UnaryOp::Round } else { UnaryOp::Roundeven };
                    let r = self.un(op, fmf, a)?;
                    let to = self.convert_type(&call_return_type(call)?)?;
                    Some(self.cast_value(CastOp::Fptosi, r, to)?)
                }
                "is.fpclass" => {
                    let x = self.args(call, 1)?[0];
                    let Some(C::Int { value: mask, .. }) =
                        call.arguments.get(1).and_then(|(op, _)| op.as_constant())
                    else {
                        return Err("llvm.is.fpclass with a mask that is not a constant".into());
                    };
                    let mask = *mask as u32;
                    Some(self.is_fpclass(x, mask)?)
                }
                "powi" => {
                    let a = self.args(call, 2)?;
                    Some(self.powi(a[0], a[1])?)
                }
                "fshl" | "fshr" => {
                    let a = self.args(call, 3)?;
                    Some(self.funnel_shift(base == "fshl", a[0], a[1], a[2])?)
                }
                "sadd.with.overflow" | "uadd.with.overflow" | "ssub.with.overflow"
                | "usub.with.overflow" | "smul.with.overflow" | "umul.with.overflow" => {
                    let a = self.args(call, 2)?;
                    Some(self.with_overflow(base, a[0], a[1])?)
                }
                "sadd.sat" | "uadd.sat" | "ssub.sat" | "usub.sat" => {
                    let a = self.args(call, 2)?;
                    Some(self.saturating(base, a[0], a[1])?)
                }
                b if b.starts_with("vector.reduce.") => {
                    Some(self.reduce(&b["vector.reduce.".len()..], call)?)
                }
                "expect" | "expect.with.probability" => Some(self.args(call, 1)?[0]),
                "lifetime.start"
                | "lifetime.end"
                | "assume"
                | "experimental.noalias.scope.decl"
                | "dbg.declare"
                | "dbg.value"
                | "dbg.label"
                | "dbg.assign"
                | "prefetch"
                | "sideeffect"
                | "donothing"
                | "trap"
                | "debugtrap"
                | "ubsantrap"
                | "var.annotation"
                | "stackrestore"
                | "invariant.end"
                | "pseudoprobe" => None,
                "stacksave" | "invariant.start" => Some(self.constant(Type::PTR, Constant::Int(0))),
                "is.constant" => Some(self.constant(Type::I1, Constant::Int(0))),
                "masked.load"
                | "masked.store"
                | "masked.gather"
                | "masked.scatter"
                | "masked.expandload"
                | "masked.compressstore" => {
                    return Err("masked vector memory operations are not supported".into())
                }
                "va_start" | "va_end" | "va_copy" => {
                    let intrinsic = VaIntrinsic::from_name(&format!("llvm.{base}"))
                        .ok_or("unknown va_ intrinsic")?;
                    let args = self.args(call, intrinsic.operand_count())?;
                    if args.iter().any(|a| !self.ty(*a).is_ptr()) {
                        return Err(format!("@{name} takes va_list pointers"));
                    }
                    let attrs = FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN;
                    let callee = self.m.declare(intrinsic.name(), intrinsic.signature(), attrs);
                    self.ins(D::Call { callee, args, attrs });
                    None
                }
                _ => return Err(format!("intrinsic @{name} is not supported")),
            }
        };
        match (&call.dest, result) {
            (Some(dest), Some(v)) => self.define(dest, v),
            (Some(_), None) => return Err(format!("intrinsic @{name} has no value in adc")),
            (None, _) => {}
        }
        Ok(())
    }

    /// NaN if either is NaN; otherwise the smaller/larger, with -0 < +0.
    fn min_max(&mut self, minimum: bool, a: Value, b: Value) -> R<Value> {
        let ty = self.ty(a);
        let bits = ty.lane_type().scalar_bits().ok_or("minimum/maximum on a non-float")?;
        let int_ty = ty.with_lane(Type::int(bits).ok_or("bad float width")?);
        let cond = if minimum { FloatCC::Olt } else { FloatCC::Ogt };
        let strict = self.fcmp(cond, a, b)?;
        let pick = self.select(strict, a, b)?;
        let ia = self.cast_value(CastOp::Bitcast, a, int_ty.clone())?;
        let ib = self.cast_value(CastOp::Bitcast, b, int_ty)?;
        let merged = self.bin(
            if minimum { BinaryOp::Or } else { BinaryOp::And },
            InstFlags::empty(),
            ia,
            ib,
        )?;
        let merged = self.cast_value(CastOp::Bitcast, merged, ty)?;
        let equal = self.fcmp(FloatCC::Oeq, a, b)?;
        let ordered = self.select(equal, merged, pick)?;
        let nan = self.bin(BinaryOp::Fadd, InstFlags::empty(), a, b)?;
        let unordered = self.fcmp(FloatCC::Uno, a, b)?;
        self.select(unordered, nan, ordered)
    }

    /// fshl(a, b, c) = high half of (a:b) << (c mod w); fshr = low half of (a:b) >> (c mod w).
    fn funnel_shift(&mut self, left: bool, a: Value, b: Value, c: Value) -> R<Value> {
        let ty = self.ty(a);
        let w = ty.lane_type().int_bits().ok_or("funnel shift on a non-integer")?;
        let none = InstFlags::empty();
        let mask = self.iconst(&ty, i128::from(w - 1));
        let sh = self.bin(BinaryOp::And, none, c, mask)?;
        let width = self.iconst(&ty, i128::from(w));
        let inv = self.bin(BinaryOp::Sub, none, width, sh)?;
        // Shift amounts are taken modulo the width, so `inv == w` shifts by 0: the
        // select below handles `sh == 0` instead.
        let (hi, lo) = if left {
            (self.bin(BinaryOp::Shl, none, a, sh)?, self.bin(BinaryOp::Lshr, none, b, inv)?)
        } else {
            (self.bin(BinaryOp::Shl, none, a, inv)?, self.bin(BinaryOp::Lshr, none, b, sh)?)
        };
        let joined = self.bin(BinaryOp::Or, none, hi, lo)?;
        let zero = self.iconst(&ty, 0);
        let is_zero = self.icmp(IntCC::Eq, sh, zero)?;
        self.select(is_zero, if left { a } else { b }, joined)
    }

    fn with_overflow(&mut self, base: &str, a: Value, b: Value) -> R<Value> {
        let ty = self.ty(a);
        let none = InstFlags::empty();
        let zero = self.iconst(&ty, 0);
        let (r, ov) = match base {
            "uadd.with.overflow" => {
                let r = self.bin(BinaryOp::Add, none, a, b)?;
                (r, self.icmp(IntCC::Ult, r, a)?)
            }
            "usub.with.overflow" => {
                (self.bin(BinaryOp::Sub, none, a, b)?, self.icmp(IntCC::Ult, a, b)?)
            }
            "sadd.with.overflow" | "ssub.with.overflow" => {
                let add = base == "sadd.with.overflow";
                let r = self.bin(if add { BinaryOp::Add } else { BinaryOp::Sub }, none, a, b)?;
                // Overflow iff the result's sign differs from a's and (add) b's / (sub) not b's.
                let x1 = self.bin(BinaryOp::Xor, none, a, r)?;
                let x2 = if add {
                    self.bin(BinaryOp::Xor, none, b, r)?
                } else {
                    self.bin(BinaryOp::Xor, none, a, b)?
                };
                let both = self.bin(BinaryOp::And, none, x1, x2)?;
                (r, self.icmp(IntCC::Slt, both, zero)?)
            }
            _ => {
                let signed = base == "smul.with.overflow";
                let bits = ty.lane_type().int_bits().ok_or("mul.with.overflow on a non-integer")?;
                let wide_lane = Type::int(bits * 2).ok_or("mul.with.overflow wider than i64")?;
                let wide = ty.with_lane(wide_lane);
                let ext = if signed { CastOp::Sext } else { CastOp::Zext };
                let wa = self.cast_value(ext, a, wide.clone())?;
                let wb = self.cast_value(ext, b, wide.clone())?;
                let wr = self.bin(BinaryOp::Mul, none, wa, wb)?;
                let r = self.cast_value(CastOp::Trunc, wr, ty.clone())?;
                let back = self.cast_value(ext, r, wide)?;
                (r, self.icmp(IntCC::Ne, back, wr)?)
            }
        };
        let pair = Type::structure(vec![ty, self.ty(ov)], false);
        let undef = self.constant(pair, Constant::Undef);
        let with_r = self.val(D::InsertValue { aggregate: undef, value: r, indices: vec![0] })?;
        self.val(D::InsertValue { aggregate: with_r, value: ov, indices: vec![1] })
    }

    fn saturating(&mut self, base: &str, a: Value, b: Value) -> R<Value> {
        let ty = self.ty(a);
        let bits = ty.lane_type().int_bits().ok_or("saturating op on a non-integer")?;
        let none = InstFlags::empty();
        let zero = self.iconst(&ty, 0);
        match base {
            "uadd.sat" => {
                let r = self.bin(BinaryOp::Add, none, a, b)?;
                let ov = self.icmp(IntCC::Ult, r, a)?;
                let max = self.iconst(&ty, -1);
                self.select(ov, max, r)
            }
            "usub.sat" => {
                let r = self.bin(BinaryOp::Sub, none, a, b)?;
                let ov = self.icmp(IntCC::Ult, a, b)?;
                self.select(ov, zero, r)
            }
            _ => {
                let add = base == "sadd.sat";
                let r = self.bin(if add { BinaryOp::Add } else { BinaryOp::Sub }, none, a, b)?;
                let x1 = self.bin(BinaryOp::Xor, none, a, r)?;
                let x2 = if add {
                    self.bin(BinaryOp::Xor, none, b, r)?
                } else {
                    self.bin(BinaryOp::Xor, none, a, b)?
                };
                let both = self.bin(BinaryOp::And, none, x1, x2)?;
                let ov = self.icmp(IntCC::Slt, both, zero)?;
                let min = self.iconst(&ty, -(1i128 << (bits - 1)));
                let max = self.iconst(&ty, (1i128 << (bits - 1)) - 1);
                let negative = self.icmp(IntCC::Slt, a, zero)?;
                let sat = self.select(negative, min, max)?;
                self.select(ov, sat, r)
            }
        }
    }

    /// `llvm.is.fpclass(x, mask)` on the bits of `x`: the mask's classes are, from bit 0,
    /// signalling NaN, quiet NaN, -inf, -normal, -subnormal, -0, +0, +subnormal, +normal,
    /// +inf. Each class is a compare on the magnitude bits, and on the sign for the signed
    /// ones.
    fn is_fpclass(&mut self, x: Value, mask: u32) -> R<Value> {
        let ty = self.ty(x);
        let (int_ty, mantissa_bits, total_bits) = match ty {
            Type::F32 => (Type::I32, 23, 32),
            Type::F64 => (Type::I64, 52, 64),
            _ => return Err(format!("llvm.is.fpclass on {ty} is not supported")),
        };
        let none = InstFlags::empty();
        let bits = self.cast_value(CastOp::Bitcast, x, int_ty.clone())?;
        let magnitude_mask = self.iconst(&int_ty, (1i128 << (total_bits - 1)) - 1);
        let magnitude = self.bin(BinaryOp::And, none, bits, magnitude_mask)?;
        let zero = self.iconst(&int_ty, 0);
        let negative = self.icmp(IntCC::Slt, bits, zero)?;
        let infinity_bits = (1i128 << (total_bits - 1)) - (1i128 << mantissa_bits);
        let infinity = self.iconst(&int_ty, infinity_bits);
        let quiet = self.iconst(&int_ty, infinity_bits | (1i128 << (mantissa_bits - 1)));
        let min_normal = self.iconst(&int_ty, 1i128 << mantissa_bits);
        let mut result = self.constant(Type::I1, Constant::Int(0));
        for bit in 0..10u32 {
            if mask & (1 << bit) == 0 {
                continue;
            }
            let class = match bit {
                0 => {
                    let nan = self.icmp(IntCC::Ugt, magnitude, infinity)?;
                    let not_quiet = self.icmp(IntCC::Ult, magnitude, quiet)?;
                    self.bin(BinaryOp::And, none, nan, not_quiet)?
                }
                1 => self.icmp(IntCC::Uge, magnitude, quiet)?,
                2 | 9 => self.icmp(IntCC::Eq, magnitude, infinity)?,
                3 | 8 => {
                    let at_least = self.icmp(IntCC::Uge, magnitude, min_normal)?;
                    let finite = self.icmp(IntCC::Ult, magnitude, infinity)?;
                    self.bin(BinaryOp::And, none, at_least, finite)?
                }
                4 | 7 => {
                    let nonzero = self.icmp(IntCC::Ne, magnitude, zero)?;
                    let below = self.icmp(IntCC::Ult, magnitude, min_normal)?;
                    self.bin(BinaryOp::And, none, nonzero, below)?
                }
                _ => self.icmp(IntCC::Eq, magnitude, zero)?,
            };
            let class = match bit {
                2..=5 => self.bin(BinaryOp::And, none, class, negative)?,
                6..=9 => {
                    let one = self.constant(Type::I1, Constant::Int(1));
                    let positive = self.bin(BinaryOp::Xor, none, negative, one)?;
                    self.bin(BinaryOp::And, none, class, positive)?
                }
                _ => class,
            };
            result = self.bin(BinaryOp::Or, none, result, class)?;
        }
        Ok(result)
    }

    fn reduce(&mut self, kind: &str, call: &Call) -> R<Value> {
        let op = match kind {
            "add" => ReduceOp::Add,
            "mul" => ReduceOp::Mul,
            "and" => ReduceOp::And,
            "or" => ReduceOp::Or,
            "xor" => ReduceOp::Xor,
            "smin" => ReduceOp::Smin,
            "smax" => ReduceOp::Smax,
            "umin" => ReduceOp::Umin,
            "umax" => ReduceOp::Umax,
            "fadd" => ReduceOp::Fadd,
            "fmul" => ReduceOp::Fmul,
            "fmin" => ReduceOp::Fmin,
            "fmax" => ReduceOp::Fmax,
            other => return Err(format!("vector.reduce.{other} is not supported")),
        };
        let flags = if op.is_float() { self.fmf() } else { InstFlags::empty() };
        let args = if op.has_start() {
            // LLVM: (start, vector); adc: [vector, start].
            let a = self.args(call, 2)?;
            vec![a[1], a[0]]
        } else {
            self.args(call, 1)?
        };
        self.val(D::Reduce { op, flags, args })
    }

    fn powi(&mut self, x: Value, n: Value) -> R<Value> {
        let ty = self.ty(x);
        if ty.is_vector() {
            return Err("vector powi is not supported".into());
        }
        let n = match self.ty(n) {
            Type::I32 => n,
            _ => self.cast_value(CastOp::Trunc, n, Type::I32)?,
        };
        let helper = self.m.powi_helper(&ty)?;
        let attrs = FuncAttrs::READNONE | FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN;
        self.val(D::Call { callee: helper, args: vec![x, n], attrs })
    }
}

impl crate::globals::ModuleCtx<'_> {
    /// `__adc_powi_f64(x, n)`: compiler-rt's `__powidf2` loop, defined once per module.
    pub fn powi_helper(&mut self, ty: &Type) -> R<FuncId> {
        let name = match ty {
            Type::F64 => "__adc_powi_f64",
            Type::F32 => "__adc_powi_f32",
            other => return Err(format!("powi on {other}")),
        };
        if let Some(f) = self.funcs.get(name) {
            return Ok(*f);
        }
        let sig = Signature::new(vec![ty.clone(), Type::I32], Some(ty.clone()));
        let mut func = Function::new(name, sig.clone());
        func.linkage = Linkage::Internal;
        func.attrs = FuncAttrs::READNONE | FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN;
        let no_callees = |_: FuncId| None;
        let mut b = adc_ir::builder::FunctionBuilder::new(&mut func, &no_callees);
        let entry = b.create_entry_block();
        let (x0, n0) = (b.func.params()[0], b.func.params()[1]);
        let head = b.create_block();
        let x = b.append_block_param(head, ty.clone());
        let n = b.append_block_param(head, Type::I32);
        let r = b.append_block_param(head, ty.clone());
        let next = b.create_block();
        let exit = b.create_block();
        let one_bits = if *ty == Type::F64 { Constant::f64(1.0) } else { Constant::f32(1.0) };

        b.switch_to_block(entry);
        let zero = b.iconst(Type::I32, 0);
        let recip = b.icmp(IntCC::Slt, n0, zero);
        let one = b.constant(ty.clone(), one_bits.clone());
        b.jump(head, vec![x0, n0, one]);

        b.switch_to_block(head);
        let c1 = b.iconst(Type::I32, 1);
        let bit = b.binary(BinaryOp::And, n, c1);
        let c0 = b.iconst(Type::I32, 0);
        let odd = b.icmp(IntCC::Ne, bit, c0);
        let rx = b.binary(BinaryOp::Fmul, r, x);
        let r2 = b.select(odd, rx, r);
        let c2 = b.iconst(Type::I32, 2);
        let n2 = b.binary(BinaryOp::Sdiv, n, c2);
        let c0b = b.iconst(Type::I32, 0);
        let done = b.icmp(IntCC::Eq, n2, c0b);
        b.brif(done, BlockCall::new(exit, vec![]), BlockCall::new(next, vec![]));

        b.switch_to_block(next);
        let xx = b.binary(BinaryOp::Fmul, x, x);
        b.jump(head, vec![xx, n2, r2]);

        b.switch_to_block(exit);
        let one2 = b.constant(ty.clone(), one_bits);
        let inv = b.binary(BinaryOp::Fdiv, one2, r2);
        let res = b.select(recip, inv, r2);
        b.ret(Some(res));

        let id = self.module.add_function(func);
        self.funcs.insert(name.to_string(), id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvvm_rounded_ops_are_the_ieee_operations() {
        assert_eq!(
            nvvm_rounded_op("llvm.nvvm.div.rn.d"),
            Some(NvvmRounded::Binary(BinaryOp::Fdiv))
        );
        assert_eq!(nvvm_rounded_op("llvm.nvvm.sqrt.rn.f"), Some(NvvmRounded::Unary(UnaryOp::Sqrt)));
        assert_eq!(nvvm_rounded_op("llvm.nvvm.fma.rn.d"), Some(NvvmRounded::Fma));
        assert_eq!(nvvm_rounded_op("llvm.nvvm.add.rn.ftz.f"), None);
        assert_eq!(nvvm_rounded_op("llvm.nvvm.add.rz.d"), None);
        assert_eq!(nvvm_rounded_op("llvm.nvvm.barrier0"), None);
    }

    #[test]
    fn base_names_drop_type_suffixes() {
        assert_eq!(base_name("llvm.memcpy.p0.p0.i64"), "memcpy");
        assert_eq!(base_name("llvm.vector.reduce.fadd.v4f64"), "vector.reduce.fadd");
        assert_eq!(base_name("llvm.sadd.with.overflow.i32"), "sadd.with.overflow");
        assert_eq!(base_name("llvm.lifetime.start.p0"), "lifetime.start");
        assert_eq!(
            base_name("llvm.experimental.noalias.scope.decl"),
            "experimental.noalias.scope.decl"
        );
        assert_eq!(base_name("llvm.powi.f64.i32"), "powi");
        assert_eq!(base_name("llvm.fma.v2f64"), "fma");
        assert_eq!(base_name("llvm.dbg.declare"), "dbg.declare");
    }
}
