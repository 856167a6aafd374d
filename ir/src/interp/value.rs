//! Runtime values (`Val`) and the pure operations on them: integer and float arithmetic,
//! comparisons, casts, lane-wise application over vectors, and constants turned into values.
//!
//! Invariant: a `Val::Int` always holds its value zero-extended and masked to the bit width
//! of its type; every operation here re-masks its result.

use crate::constant::{mask_to_width, sign_extend, Constant};
use crate::instructions::{BinaryOp, CastOp, FloatCC, IntCC, ReduceOp, UnaryOp};
use crate::types::Type;

use super::{ErrorKind, R};

/// A runtime value of the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// An integer of any width (`i1` is 0 or 1), masked to its type's width.
    Int(u128),
    F32(f32),
    F64(f64),
    /// A pointer: a plain 64-bit address (see `memory`).
    Ptr(u64),
    /// The lanes of a vector, in order.
    Vector(Vec<Val>),
    /// The fields of a struct or the elements of an array, in order.
    Aggregate(Vec<Val>),
}

/// Values with more scalar leaves than this are refused (they would exhaust host memory).
pub(crate) const MAX_LEAVES: u64 = 1 << 24;

impl Val {
    pub fn bool(b: bool) -> Val {
        Val::Int(u128::from(b))
    }

    /// A short description of the value's shape, for error messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Val::Int(_) => "an integer",
            Val::F32(_) => "an f32",
            Val::F64(_) => "an f64",
            Val::Ptr(_) => "a pointer",
            Val::Vector(_) => "a vector",
            Val::Aggregate(_) => "an aggregate",
        }
    }

    pub(crate) fn as_int(&self) -> R<u128> {
        match self {
            Val::Int(v) => Ok(*v),
            other => Err(malformed(format!("expected an integer, found {}", other.kind_name()))),
        }
    }

    pub(crate) fn as_bool(&self) -> R<bool> {
        Ok(self.as_int()? & 1 == 1)
    }

    /// The address held by a pointer (integers are accepted as addresses too).
    pub(crate) fn as_ptr(&self) -> R<u64> {
        match self {
            Val::Ptr(p) => Ok(*p),
            Val::Int(v) => Ok(*v as u64),
            other => Err(malformed(format!("expected a pointer, found {}", other.kind_name()))),
        }
    }

    pub(crate) fn as_f64(&self) -> R<f64> {
        match self {
            Val::F64(x) => Ok(*x),
            other => Err(malformed(format!("expected an f64, found {}", other.kind_name()))),
        }
    }

    pub(crate) fn lanes(&self) -> R<&[Val]> {
        match self {
            Val::Vector(lanes) => Ok(lanes),
            other => Err(malformed(format!("expected a vector, found {}", other.kind_name()))),
        }
    }

    /// Whether this value has the shape of `ty` (ints fitting in its width).
    pub fn fits(&self, ty: &Type) -> bool {
        match (self, ty) {
            (Val::Int(v), t) if t.is_int() => *v == mask_to_width(*v, t.int_bits().unwrap_or(128)),
            (Val::F32(_), Type::F32) | (Val::F64(_), Type::F64) | (Val::Ptr(_), Type::Ptr(_)) => {
                true
            }
            (Val::Vector(lanes), Type::Vector(elem, n)) => {
                lanes.len() as u64 == u64::from(*n) && lanes.iter().all(|l| l.fits(elem))
            }
            (Val::Aggregate(elems), Type::Array(elem, n)) => {
                elems.len() as u64 == *n && elems.iter().all(|e| e.fits(elem))
            }
            (Val::Aggregate(fields), Type::Struct(s)) => {
                fields.len() == s.fields.len()
                    && fields.iter().zip(&s.fields).all(|(f, t)| f.fits(t))
            }
            _ => false,
        }
    }

    /// Converts a value supplied from outside (API arguments) to the shape of `ty`: integers
    /// are masked to the width, integers and pointers are interchangeable for `ptr` and
    /// integer types. Returns `None` when the shapes do not match.
    pub(crate) fn coerce(&self, ty: &Type) -> Option<Val> {
        Some(match (self, ty) {
            (Val::Int(v), t) if t.is_int() => Val::Int(mask_to_width(*v, t.int_bits()?)),
            (Val::Ptr(p), t) if t.is_int() => {
                Val::Int(mask_to_width(u128::from(*p), t.int_bits()?))
            }
            (Val::Int(v), Type::Ptr(_)) => Val::Ptr(*v as u64),
            (Val::Ptr(p), Type::Ptr(_)) => Val::Ptr(*p),
            (Val::F32(x), Type::F32) => Val::F32(*x),
            (Val::F64(x), Type::F64) => Val::F64(*x),
            (Val::Vector(lanes), Type::Vector(elem, n)) if lanes.len() as u64 == u64::from(*n) => {
                Val::Vector(lanes.iter().map(|l| l.coerce(elem)).collect::<Option<_>>()?)
            }
            (Val::Aggregate(elems), Type::Array(elem, n)) if elems.len() as u64 == *n => {
                Val::Aggregate(elems.iter().map(|e| e.coerce(elem)).collect::<Option<_>>()?)
            }
            (Val::Aggregate(fields), Type::Struct(s)) if fields.len() == s.fields.len() => {
                Val::Aggregate(
                    fields
                        .iter()
                        .zip(&s.fields)
                        .map(|(f, t)| f.coerce(t))
                        .collect::<Option<_>>()?,
                )
            }
            _ => return None,
        })
    }
}

pub(crate) fn malformed(message: impl Into<String>) -> ErrorKind {
    ErrorKind::Malformed(message.into())
}

/// Number of scalar leaves of a value of type `ty`, or `None` past `MAX_LEAVES`.
pub(crate) fn leaf_count(ty: &Type) -> Option<u64> {
    let n = match ty {
        Type::Vector(_, n) => u64::from(*n),
        Type::Array(elem, n) => leaf_count(elem)?.checked_mul(*n)?,
        Type::Struct(s) => {
            let mut total = 0u64;
            for field in &s.fields {
                total = total.checked_add(leaf_count(field)?)?;
            }
            total
        }
        _ => 1,
    };
    (n <= MAX_LEAVES).then_some(n)
}

fn check_leaves(ty: &Type) -> R<()> {
    match leaf_count(ty) {
        Some(_) => Ok(()),
        None => Err(ErrorKind::Unsupported(format!("values of type {ty} are too large"))),
    }
}

/// The all-zero value of a type (also what `undef`, `poison` and `zeroinit` evaluate to).
pub(crate) fn zero(ty: &Type) -> R<Val> {
    check_leaves(ty)?;
    Ok(zero_unchecked(ty))
}

fn zero_unchecked(ty: &Type) -> Val {
    match ty {
        Type::F32 => Val::F32(0.0),
        Type::F64 => Val::F64(0.0),
        Type::Ptr(_) => Val::Ptr(0),
        Type::Vector(elem, n) => Val::Vector(vec![zero_unchecked(elem); *n as usize]),
        Type::Array(elem, n) => Val::Aggregate(vec![zero_unchecked(elem); *n as usize]),
        Type::Struct(s) => Val::Aggregate(s.fields.iter().map(zero_unchecked).collect()),
        _ => Val::Int(0),
    }
}

/// Evaluates a constant of type `ty`; `address` resolves relocations to addresses.
pub fn constant(
    ty: &Type,
    c: &Constant,
    address: &dyn Fn(&crate::constant::Symbol) -> R<u64>,
) -> R<Val> {
    let bad = || malformed(format!("constant {c:?} does not fit type {ty}"));
    match c {
        Constant::Zero | Constant::Undef | Constant::Poison => zero(ty),
        Constant::Int(v) => match ty {
            Type::Ptr(_) => Ok(Val::Ptr(*v as u64)),
            t => Ok(Val::Int(mask_to_width(*v, t.int_bits().ok_or_else(bad)?))),
        },
        Constant::Float(bits) => match ty {
            Type::F32 => Ok(Val::F32(f32::from_bits(*bits as u32))),
            Type::F64 => Ok(Val::F64(f64::from_bits(*bits))),
            _ => Err(bad()),
        },
        Constant::Address { symbol, offset } => match ty {
            Type::Ptr(_) => Ok(Val::Ptr(address(symbol)?.wrapping_add(*offset as u64))),
            _ => Err(bad()),
        },
        Constant::Bytes(bytes) => match ty {
            Type::Array(elem, n) if **elem == Type::I8 && *n == bytes.len() as u64 => {
                Ok(Val::Aggregate(bytes.iter().map(|b| Val::Int(u128::from(*b))).collect()))
            }
            _ => Err(bad()),
        },
        Constant::Elements(elems) => {
            check_leaves(ty)?;
            let vals = |elem_ty: &dyn Fn(usize) -> Option<Type>| -> R<Vec<Val>> {
                elems
                    .iter()
                    .enumerate()
                    .map(|(i, e)| constant(&elem_ty(i).ok_or_else(bad)?, e, address))
                    .collect()
            };
            match ty {
                Type::Vector(elem, n) if elems.len() as u64 == u64::from(*n) => {
                    Ok(Val::Vector(vals(&|_| Some((**elem).clone()))?))
                }
                Type::Array(elem, n) if elems.len() as u64 == *n => {
                    Ok(Val::Aggregate(vals(&|_| Some((**elem).clone()))?))
                }
                Type::Struct(s) if elems.len() == s.fields.len() => {
                    Ok(Val::Aggregate(vals(&|i| s.fields.get(i).cloned())?))
                }
                _ => Err(bad()),
            }
        }
    }
}

/// Applies `f` lane by lane when `a` is a vector, directly otherwise.
pub(crate) fn map1(ty: &Type, a: &Val, f: impl Fn(&Type, &Val) -> R<Val>) -> R<Val> {
    match (ty, a) {
        (Type::Vector(elem, _), Val::Vector(lanes)) => {
            Ok(Val::Vector(lanes.iter().map(|l| f(elem, l)).collect::<R<_>>()?))
        }
        (Type::Vector(..), other) => {
            Err(malformed(format!("expected a vector, found {}", other.kind_name())))
        }
        _ => f(ty, a),
    }
}

/// Applies `f` to corresponding lanes of two operands of type `ty`.
pub(crate) fn map2(ty: &Type, a: &Val, b: &Val, f: impl Fn(&Type, &Val, &Val) -> R<Val>) -> R<Val> {
    match (ty, a, b) {
        (Type::Vector(elem, _), Val::Vector(x), Val::Vector(y)) if x.len() == y.len() => {
            Ok(Val::Vector(x.iter().zip(y).map(|(l, r)| f(elem, l, r)).collect::<R<_>>()?))
        }
        (Type::Vector(..), _, _) => Err(malformed("vector operands of different shapes")),
        _ => f(ty, a, b),
    }
}

/// Float operations shared by `f32` and `f64`, so that each is computed in its own type.
pub(crate) trait Float:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Neg<Output = Self>
{
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn copysign(self, sign: Self) -> Self;
    fn sqrt(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn round(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn abs(self) -> Self;
    fn wrap(self) -> Val;
    fn unwrap(v: &Val) -> R<Self>;
}

macro_rules! impl_float {
    ($t:ty, $variant:ident) => {
        impl Float for $t {
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            fn round(self) -> Self {
                <$t>::round(self)
            }
            fn round_ties_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn wrap(self) -> Val {
                Val::$variant(self)
            }
            fn unwrap(v: &Val) -> R<Self> {
                match v {
                    Val::$variant(x) => Ok(*x),
                    other => Err(malformed(format!(
                        "expected {}, found {}",
                        stringify!($t),
                        other.kind_name()
                    ))),
                }
            }
        }
    };
}

impl_float!(f32, F32);
impl_float!(f64, F64);

/// IEEE-754 minNum: a NaN operand yields the other operand; `-0.0` is taken as smaller
/// than `+0.0` so that the result is deterministic.
pub(crate) fn minnum<F: Float>(a: F, b: F) -> F {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE-754 maxNum; `+0.0` is taken as larger than `-0.0`.
pub(crate) fn maxnum<F: Float>(a: F, b: F) -> F {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a > b || (a == b && !a.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn float_binary<F: Float>(op: BinaryOp, a: &Val, b: &Val) -> R<Val> {
    let (x, y) = (F::unwrap(a)?, F::unwrap(b)?);
    let r = match op {
        BinaryOp::Fadd => x + y,
        BinaryOp::Fsub => x - y,
        BinaryOp::Fmul => x * y,
        BinaryOp::Fdiv => x / y,
        // Rust's `%` on floats is C's fmod: exact, with the sign of the dividend.
        BinaryOp::Frem => x % y,
        BinaryOp::Fminnum => minnum(x, y),
        BinaryOp::Fmaxnum => maxnum(x, y),
        BinaryOp::Copysign => x.copysign(y),
        _ => return Err(malformed(format!("{op} is not a float operation"))),
    };
    Ok(r.wrap())
}

fn int_bits(ty: &Type) -> R<u32> {
    ty.int_bits().ok_or_else(|| malformed(format!("expected an integer type, found {ty}")))
}

/// The signed minimum of a width, as a masked bit pattern.
fn signed_min(bits: u32) -> u128 {
    1u128 << (bits - 1)
}

pub(crate) fn int_binary(op: BinaryOp, bits: u32, a: u128, b: u128) -> R<u128> {
    // The common cases first, without the sign extensions the others need.
    match op {
        BinaryOp::Add => return Ok(mask_to_width(a.wrapping_add(b), bits)),
        BinaryOp::Sub => return Ok(mask_to_width(a.wrapping_sub(b), bits)),
        BinaryOp::Mul => return Ok(mask_to_width(a.wrapping_mul(b), bits)),
        _ => {}
    }
    let (sa, sb) = (sign_extend(a, bits), sign_extend(b, bits));
    let shift = |b: u128| (b % u128::from(bits)) as u32;
    let r = match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Udiv | BinaryOp::Urem if b == 0 => return Err(ErrorKind::DivisionByZero),
        BinaryOp::Udiv => a / b,
        BinaryOp::Urem => a % b,
        BinaryOp::Sdiv | BinaryOp::Srem if b == 0 => return Err(ErrorKind::DivisionByZero),
        BinaryOp::Sdiv | BinaryOp::Srem if a == signed_min(bits) && sb == -1 => {
            return Err(ErrorKind::SignedDivisionOverflow { op: op.name() })
        }
        BinaryOp::Sdiv => sa.wrapping_div(sb) as u128,
        BinaryOp::Srem => sa.wrapping_rem(sb) as u128,
        BinaryOp::Shl => a << shift(b),
        BinaryOp::Lshr => a >> shift(b),
        BinaryOp::Ashr => (sa >> shift(b)) as u128,
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::Smin => {
            if sa <= sb {
                a
            } else {
                b
            }
        }
        BinaryOp::Smax => {
            if sa >= sb {
                a
            } else {
                b
            }
        }
        BinaryOp::Umin => a.min(b),
        BinaryOp::Umax => a.max(b),
        _ => return Err(malformed(format!("{op} is not an integer operation"))),
    };
    Ok(mask_to_width(r, bits))
}

/// A binary operation on operands of type `ty` (vectors lane-wise).
pub fn binary(op: BinaryOp, ty: &Type, a: &Val, b: &Val) -> R<Val> {
    map2(ty, a, b, |lane, a, b| match lane {
        Type::F32 => float_binary::<f32>(op, a, b),
        Type::F64 => float_binary::<f64>(op, a, b),
        _ => Ok(Val::Int(int_binary(op, int_bits(lane)?, a.as_int()?, b.as_int()?)?)),
    })
}

fn float_unary<F: Float>(op: UnaryOp, a: &Val) -> R<Val> {
    let x = F::unwrap(a)?;
    let r = match op {
        UnaryOp::Fneg => -x,
        UnaryOp::Fabs => x.abs(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Ftrunc => x.trunc(),
        UnaryOp::Round => x.round(),
        UnaryOp::Roundeven => x.round_ties_even(),
        UnaryOp::Freeze => x,
        _ => return Err(malformed(format!("{op} is not a float operation"))),
    };
    Ok(r.wrap())
}

fn int_unary(op: UnaryOp, bits: u32, a: u128) -> R<u128> {
    let unused = 128 - bits;
    let r = match op {
        UnaryOp::Ctpop => u128::from(a.count_ones()),
        UnaryOp::Ctlz => u128::from(a.leading_zeros() - unused),
        UnaryOp::Cttz => u128::from(a.trailing_zeros().min(bits)),
        // Byte swap within the width: the low `bits/8` bytes reversed (identity for i1/i8).
        UnaryOp::Bswap if bits >= 16 => a.swap_bytes() >> unused,
        UnaryOp::Bswap => a,
        UnaryOp::Bitreverse => a.reverse_bits() >> unused,
        UnaryOp::Iabs => {
            let s = sign_extend(a, bits);
            s.wrapping_abs() as u128
        }
        UnaryOp::Freeze => a,
        _ => return Err(malformed(format!("{op} is not an integer operation"))),
    };
    Ok(mask_to_width(r, bits))
}

/// A one-operand operation on a value of type `ty` (vectors lane-wise).
pub fn unary(op: UnaryOp, ty: &Type, a: &Val) -> R<Val> {
    if op == UnaryOp::Freeze {
        return Ok(a.clone());
    }
    map1(ty, a, |lane, a| match lane {
        Type::F32 => float_unary::<f32>(op, a),
        Type::F64 => float_unary::<f64>(op, a),
        _ => Ok(Val::Int(int_unary(op, int_bits(lane)?, a.as_int()?)?)),
    })
}

/// `a * b + c` with a single rounding.
pub fn fma(ty: &Type, a: &Val, b: &Val, c: &Val) -> R<Val> {
    let ab = map2(ty, a, b, |_, a, b| Ok(Val::Aggregate(vec![a.clone(), b.clone()])))?;
    map2(ty, &ab, c, |lane, ab, c| {
        let Val::Aggregate(pair) = ab else {
            return Err(malformed("fma"));
        };
        match lane {
            Type::F32 => Ok(Val::F32(
                f32::unwrap(&pair[0])?.mul_add(f32::unwrap(&pair[1])?, f32::unwrap(c)?),
            )),
            Type::F64 => Ok(Val::F64(
                f64::unwrap(&pair[0])?.mul_add(f64::unwrap(&pair[1])?, f64::unwrap(c)?),
            )),
            other => Err(malformed(format!("fma of {other}"))),
        }
    })
}

pub(crate) fn icmp_scalar(cond: IntCC, bits: u32, a: u128, b: u128) -> bool {
    // Flipping the sign bit turns a signed order into an unsigned one.
    let flip = 1u128 << (bits.clamp(1, 128) - 1);
    let (sa, sb) = (a ^ flip, b ^ flip);
    match cond {
        IntCC::Eq => a == b,
        IntCC::Ne => a != b,
        IntCC::Ugt => a > b,
        IntCC::Uge => a >= b,
        IntCC::Ult => a < b,
        IntCC::Ule => a <= b,
        IntCC::Sgt => sa > sb,
        IntCC::Sge => sa >= sb,
        IntCC::Slt => sa < sb,
        IntCC::Sle => sa <= sb,
    }
}

/// Integer (or pointer) comparison; vectors give vectors of `i1`.
pub fn icmp(cond: IntCC, ty: &Type, a: &Val, b: &Val) -> R<Val> {
    map2(ty, a, b, |lane, a, b| {
        let bits = match lane {
            Type::Ptr(_) => 64,
            other => int_bits(other)?,
        };
        let (x, y) = match (a, b) {
            (Val::Int(_), Val::Int(_)) => (a.as_int()?, b.as_int()?),
            _ => (u128::from(a.as_ptr()?), u128::from(b.as_ptr()?)),
        };
        Ok(Val::bool(icmp_scalar(cond, bits, x, y)))
    })
}

/// The 16 float predicates: ordered ones are false on NaN, unordered ones true.
pub(crate) fn fcmp_scalar(cond: FloatCC, a: f64, b: f64) -> bool {
    let uno = a.is_nan() || b.is_nan();
    match cond {
        FloatCC::False => false,
        FloatCC::Oeq => !uno && a == b,
        FloatCC::Ogt => !uno && a > b,
        FloatCC::Oge => !uno && a >= b,
        FloatCC::Olt => !uno && a < b,
        FloatCC::Ole => !uno && a <= b,
        FloatCC::One => !uno && a != b,
        FloatCC::Ord => !uno,
        FloatCC::Ueq => uno || a == b,
        FloatCC::Ugt => uno || a > b,
        FloatCC::Uge => uno || a >= b,
        FloatCC::Ult => uno || a < b,
        FloatCC::Ule => uno || a <= b,
        FloatCC::Une => uno || a != b,
        FloatCC::Uno => uno,
        FloatCC::True => true,
    }
}

pub fn fcmp(cond: FloatCC, ty: &Type, a: &Val, b: &Val) -> R<Val> {
    map2(ty, a, b, |_, a, b| {
        // Widening f32 to f64 is exact, so comparing in f64 gives the f32 answer.
        let (x, y) = match (a, b) {
            (Val::F32(x), Val::F32(y)) => (f64::from(*x), f64::from(*y)),
            _ => (a.as_f64()?, b.as_f64()?),
        };
        Ok(Val::bool(fcmp_scalar(cond, x, y)))
    })
}

/// `select`: a scalar condition picks a whole operand, a vector condition picks lanes.
pub fn select(cond: &Val, a: &Val, b: &Val) -> R<Val> {
    match (cond, a, b) {
        (Val::Vector(c), Val::Vector(x), Val::Vector(y))
            if c.len() == x.len() && x.len() == y.len() =>
        {
            let lanes = c
                .iter()
                .zip(x.iter().zip(y))
                .map(|(c, (x, y))| Ok(if c.as_bool()? { x.clone() } else { y.clone() }))
                .collect::<R<_>>()?;
            Ok(Val::Vector(lanes))
        }
        (Val::Vector(_), _, _) => Err(malformed("select with a vector condition of another shape")),
        _ => Ok(if cond.as_bool()? { a.clone() } else { b.clone() }),
    }
}

/// Saturating float-to-integer conversion (NaN gives 0) to a `bits`-wide integer.
fn float_to_int(x: f64, bits: u32, signed: bool) -> u128 {
    if x.is_nan() {
        return 0;
    }
    if signed {
        let (lo, hi) = if bits >= 128 {
            (i128::MIN, i128::MAX)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        };
        let v = (x as i128).clamp(lo, hi);
        mask_to_width(v as u128, bits)
    } else {
        let v = x as u128;
        v.min(mask_to_width(u128::MAX, bits))
    }
}

fn float_to_int_f32(x: f32, bits: u32, signed: bool) -> u128 {
    // Every f32 is exactly representable as an f64, so this loses nothing.
    float_to_int(f64::from(x), bits, signed)
}

fn int_to_float(v: u128, from_bits: u32, signed: bool, to: &Type) -> R<Val> {
    let s = sign_extend(v, from_bits);
    // Rust's integer-to-float `as` rounds to nearest, ties to even, directly from 128 bits.
    match (to, signed) {
        (Type::F32, true) => Ok(Val::F32(s as f32)),
        (Type::F32, false) => Ok(Val::F32(v as f32)),
        (Type::F64, true) => Ok(Val::F64(s as f64)),
        (Type::F64, false) => Ok(Val::F64(v as f64)),
        (other, _) => Err(malformed(format!("int-to-float cast to {other}"))),
    }
}

fn cast_scalar(op: CastOp, from: &Type, to: &Type, v: &Val) -> R<Val> {
    let bad = || malformed(format!("{op} from {from} to {to}"));
    match op {
        CastOp::Zext | CastOp::Trunc => Ok(Val::Int(mask_to_width(v.as_int()?, int_bits(to)?))),
        CastOp::Sext => {
            let s = sign_extend(v.as_int()?, int_bits(from)?);
            Ok(Val::Int(mask_to_width(s as u128, int_bits(to)?)))
        }
        CastOp::Fptoui | CastOp::Fptosi => {
            let bits = int_bits(to)?;
            let signed = op == CastOp::Fptosi;
            Ok(Val::Int(match v {
                Val::F32(x) => float_to_int_f32(*x, bits, signed),
                Val::F64(x) => float_to_int(*x, bits, signed),
                _ => return Err(bad()),
            }))
        }
        CastOp::Uitofp | CastOp::Sitofp => {
            int_to_float(v.as_int()?, int_bits(from)?, op == CastOp::Sitofp, to)
        }
        CastOp::Fpext => match (v, to) {
            (Val::F32(x), Type::F64) => Ok(Val::F64(f64::from(*x))),
            (Val::F32(x), Type::F32) => Ok(Val::F32(*x)),
            (Val::F64(x), Type::F64) => Ok(Val::F64(*x)),
            _ => Err(bad()),
        },
        CastOp::Fptrunc => match (v, to) {
            // Rounds to nearest, ties to even.
            (Val::F64(x), Type::F32) => Ok(Val::F32(*x as f32)),
            (Val::F64(x), Type::F64) => Ok(Val::F64(*x)),
            (Val::F32(x), Type::F32) => Ok(Val::F32(*x)),
            _ => Err(bad()),
        },
        CastOp::Ptrtoint => Ok(Val::Int(mask_to_width(u128::from(v.as_ptr()?), int_bits(to)?))),
        CastOp::Inttoptr => match to {
            Type::Ptr(_) => Ok(Val::Ptr(v.as_int()? as u64)),
            _ => Err(bad()),
        },
        CastOp::Addrspacecast => match to {
            Type::Ptr(_) => Ok(Val::Ptr(v.as_ptr()?)),
            _ => Err(bad()),
        },
        CastOp::Bitcast => unreachable_bitcast(),
    }
}

fn unreachable_bitcast() -> R<Val> {
    Err(malformed("bitcast is handled as a whole value"))
}

/// A cast instruction from `from` to `to` (vectors lane-wise, bitcast bit-wise).
pub fn cast(op: CastOp, from: &Type, to: &Type, v: &Val) -> R<Val> {
    if op == CastOp::Bitcast {
        return super::memory::bitcast(from, to, v);
    }
    match (from, to, v) {
        (Type::Vector(fe, n), Type::Vector(te, m), Val::Vector(lanes))
            if n == m && lanes.len() as u64 == u64::from(*n) =>
        {
            Ok(Val::Vector(lanes.iter().map(|l| cast_scalar(op, fe, te, l)).collect::<R<_>>()?))
        }
        (Type::Vector(..), _, _) | (_, Type::Vector(..), _) => {
            Err(malformed(format!("{op} between {from} and {to}")))
        }
        _ => cast_scalar(op, from, to, v),
    }
}

/// A horizontal reduction of `v` (of vector type `ty`); `start` for `fadd`/`fmul`.
pub(crate) fn reduce(op: ReduceOp, ty: &Type, v: &Val, start: Option<&Val>) -> R<Val> {
    let lane_ty = ty.lane_type();
    let lanes = v.lanes()?;
    if op.has_start() {
        let start = start.ok_or_else(|| malformed(format!("{op} without a start value")))?;
        let bop = op.binary_op();
        // Ordered: ((start op l0) op l1) op ...
        return lanes.iter().try_fold(start.clone(), |acc, l| binary(bop, lane_ty, &acc, l));
    }
    let Some((first, rest)) = lanes.split_first() else {
        return Err(malformed(format!("{op} of an empty vector")));
    };
    let bop = op.binary_op();
    rest.iter().try_fold(first.clone(), |acc, l| binary(bop, lane_ty, &acc, l))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast1(op: CastOp, from: Type, to: Type, v: Val) -> Val {
        cast(op, &from, &to, &v).unwrap()
    }

    #[test]
    fn float_to_int_saturates() {
        assert_eq!(
            cast1(CastOp::Fptosi, Type::F64, Type::I32, Val::F64(1e10)),
            Val::Int(0x7fff_ffff)
        );
        assert_eq!(
            cast1(CastOp::Fptosi, Type::F64, Type::I32, Val::F64(-1e10)),
            Val::Int(0x8000_0000)
        );
        assert_eq!(cast1(CastOp::Fptosi, Type::F64, Type::I32, Val::F64(f64::NAN)), Val::Int(0));
        assert_eq!(cast1(CastOp::Fptosi, Type::F64, Type::I8, Val::F64(-3.9)), Val::Int(0xfd));
        assert_eq!(cast1(CastOp::Fptoui, Type::F64, Type::I8, Val::F64(300.0)), Val::Int(255));
        assert_eq!(cast1(CastOp::Fptoui, Type::F64, Type::I8, Val::F64(-5.0)), Val::Int(0));
        assert_eq!(cast1(CastOp::Fptosi, Type::F32, Type::I1, Val::F32(-7.0)), Val::Int(1));
        assert_eq!(cast1(CastOp::Fptosi, Type::F32, Type::I1, Val::F32(7.0)), Val::Int(0));
        assert_eq!(
            cast1(CastOp::Fptosi, Type::F64, Type::I128, Val::F64(f64::INFINITY)),
            Val::Int(i128::MAX as u128)
        );
        assert_eq!(
            cast1(CastOp::Fptosi, Type::F64, Type::I64, Val::F64(f64::NEG_INFINITY)),
            Val::Int(1u128 << 63)
        );
        assert_eq!(
            cast1(CastOp::Fptoui, Type::F64, Type::I128, Val::F64(1e300)),
            Val::Int(u128::MAX)
        );
    }

    #[test]
    fn int_to_float_rounds_once() {
        // 2^64 - 1 rounds up to 2^64.
        assert_eq!(
            cast1(CastOp::Uitofp, Type::I64, Type::F64, Val::Int(u128::from(u64::MAX))),
            Val::F64(18446744073709551616.0)
        );
        assert_eq!(cast1(CastOp::Sitofp, Type::I1, Type::F64, Val::Int(1)), Val::F64(-1.0));
        assert_eq!(cast1(CastOp::Uitofp, Type::I1, Type::F32, Val::Int(1)), Val::F32(1.0));
        // 2^24 + 1 is not representable in f32: ties to even gives 2^24.
        assert_eq!(
            cast1(CastOp::Sitofp, Type::I32, Type::F32, Val::Int(16_777_217)),
            Val::F32(16_777_216.0)
        );
        assert_eq!(
            cast1(CastOp::Fptrunc, Type::F64, Type::F32, Val::F64(1.0 + f64::EPSILON)),
            Val::F32(1.0)
        );
    }

    #[test]
    fn integer_casts() {
        assert_eq!(cast1(CastOp::Sext, Type::I8, Type::I32, Val::Int(0x80)), Val::Int(0xffff_ff80));
        assert_eq!(cast1(CastOp::Zext, Type::I8, Type::I32, Val::Int(0x80)), Val::Int(0x80));
        assert_eq!(cast1(CastOp::Trunc, Type::I32, Type::I8, Val::Int(0x1234)), Val::Int(0x34));
        assert_eq!(cast1(CastOp::Sext, Type::I1, Type::I128, Val::Int(1)), Val::Int(u128::MAX));
        assert_eq!(
            cast1(CastOp::Ptrtoint, Type::PTR, Type::I32, Val::Ptr(0x1_0000_0004)),
            Val::Int(4)
        );
        assert_eq!(cast1(CastOp::Inttoptr, Type::I64, Type::PTR, Val::Int(42)), Val::Ptr(42));
    }

    #[test]
    fn fcmp_truth_table() {
        use FloatCC::*;
        let nan = f64::NAN;
        // (cond, 1<2, 2<1, 1==1, nan vs 1)
        let table = [
            (False, false, false, false, false),
            (Oeq, false, false, true, false),
            (Ogt, false, true, false, false),
            (Oge, false, true, true, false),
            (Olt, true, false, false, false),
            (Ole, true, false, true, false),
            (One, true, true, false, false),
            (Ord, true, true, true, false),
            (Ueq, false, false, true, true),
            (Ugt, false, true, false, true),
            (Uge, false, true, true, true),
            (Ult, true, false, false, true),
            (Ule, true, false, true, true),
            (Une, true, true, false, true),
            (Uno, false, false, false, true),
            (True, true, true, true, true),
        ];
        assert_eq!(table.len(), FloatCC::ALL.len());
        for (cc, lt, gt, eq, un) in table {
            assert_eq!(fcmp_scalar(cc, 1.0, 2.0), lt, "{cc} lt");
            assert_eq!(fcmp_scalar(cc, 2.0, 1.0), gt, "{cc} gt");
            assert_eq!(fcmp_scalar(cc, 1.0, 1.0), eq, "{cc} eq");
            assert_eq!(fcmp_scalar(cc, nan, 1.0), un, "{cc} nan");
            assert_eq!(fcmp_scalar(cc, 1.0, nan), un, "{cc} nan rhs");
        }
        assert!(fcmp_scalar(Oeq, 0.0, -0.0));
    }

    #[test]
    fn integer_ops_wrap_and_trap() {
        use BinaryOp::*;
        assert_eq!(int_binary(Add, 8, 200, 100).unwrap(), 44);
        assert_eq!(int_binary(Add, 1, 1, 1).unwrap(), 0);
        assert_eq!(int_binary(Mul, 128, u128::MAX, 2).unwrap(), u128::MAX - 1);
        assert_eq!(int_binary(Shl, 32, 1, 33).unwrap(), 2);
        assert_eq!(int_binary(Ashr, 8, 0x80, 7).unwrap(), 0xff);
        assert_eq!(int_binary(Sdiv, 32, 0xffff_fff9, 2).unwrap(), 0xffff_fffd);
        assert_eq!(int_binary(Srem, 32, 0xffff_fff9, 2).unwrap(), 0xffff_ffff);
        assert!(matches!(int_binary(Udiv, 32, 1, 0), Err(ErrorKind::DivisionByZero)));
        assert!(matches!(
            int_binary(Sdiv, 32, 0x8000_0000, 0xffff_ffff),
            Err(ErrorKind::SignedDivisionOverflow { .. })
        ));
        assert!(matches!(
            int_binary(Srem, 128, 1 << 127, u128::MAX),
            Err(ErrorKind::SignedDivisionOverflow { .. })
        ));
    }

    #[test]
    fn bit_counting() {
        use UnaryOp::*;
        assert_eq!(int_unary(Ctlz, 32, 1).unwrap(), 31);
        assert_eq!(int_unary(Ctlz, 32, 0).unwrap(), 32);
        assert_eq!(int_unary(Cttz, 16, 0).unwrap(), 16);
        assert_eq!(int_unary(Bswap, 32, 0x1122_3344).unwrap(), 0x4433_2211);
        assert_eq!(int_unary(Bitreverse, 8, 1).unwrap(), 0x80);
        assert_eq!(int_unary(Iabs, 8, 0x80).unwrap(), 0x80);
        assert_eq!(int_unary(Iabs, 8, 0xff).unwrap(), 1);
    }

    #[test]
    fn min_max_num() {
        assert_eq!(minnum(f64::NAN, 1.0), 1.0);
        assert_eq!(maxnum(2.0, f64::NAN), 2.0);
        assert!(minnum(-0.0, 0.0).is_sign_negative());
        assert!(minnum(0.0, -0.0).is_sign_negative());
        assert!(!maxnum(-0.0, 0.0).is_sign_negative());
        assert!(minnum(f64::NAN, f64::NAN).is_nan());
    }
}
