//! The `llvm.nvvm.*` math intrinsics that libdevice's bodies call, so that linked
//! libdevice functions run in the interpreter (on the CPU or in a simulated grid). Exact
//! operations (`add.rn`, `fma.rn`, `sqrt.rn`, conversions, the halves of a double) are
//! computed exactly; the hardware approximations (`rcp.approx`, `ex2.approx`, ...) are
//! computed correctly rounded, which is within their documented error, so results of code
//! using them may differ from a device's in the last bits. Additions with a directed
//! rounding mode (`add.rz`, `add.rm`, `add.rp`, what libdevice's `__nv_dsub_rz` and
//! friends reach) are rounded exactly.

use super::value::Val;
use super::{ErrorKind, R};

fn f64_arg(args: &[Val], i: usize) -> R<f64> {
    match args.get(i) {
        Some(Val::F64(x)) => Ok(*x),
        other => Err(ErrorKind::Malformed(format!("nvvm intrinsic operand {i}: {other:?}"))),
    }
}

fn f32_arg(args: &[Val], i: usize) -> R<f32> {
    match args.get(i) {
        Some(Val::F32(x)) => Ok(*x),
        other => Err(ErrorKind::Malformed(format!("nvvm intrinsic operand {i}: {other:?}"))),
    }
}

fn int_arg(args: &[Val], i: usize) -> R<u32> {
    match args.get(i) {
        Some(Val::Int(v)) => Ok(*v as u32),
        other => Err(ErrorKind::Malformed(format!("nvvm intrinsic operand {i}: {other:?}"))),
    }
}

fn int64_args(args: &[Val]) -> R<(u64, u64)> {
    match args {
        [Val::Int(a), Val::Int(b)] => Ok((*a as u64, *b as u64)),
        other => Err(ErrorKind::Malformed(format!("nvvm intrinsic operands {other:?}"))),
    }
}

#[derive(Copy, Clone)]
enum Rounding {
    Zero,
    Down,
    Up,
}

/// The sum of `a` and `b` when it is exactly zero, with IEEE's sign: `x + x` keeps the
/// sign of zero `x`, cancellation gives -0 when rounding down and +0 otherwise.
fn zero_sum(a: f64, b: f64, mode: Rounding) -> f64 {
    if a == 0.0 && b == 0.0 && a.is_sign_negative() == b.is_sign_negative() {
        a
    } else if matches!(mode, Rounding::Down) {
        -0.0
    } else {
        0.0
    }
}

/// `a + b` rounded toward zero, -inf or +inf: the nearest sum `sum` moved by one ulp when
/// the exact sum lies on the other side of it. `below` says whether the exact sum is
/// below `sum` (`Some(false)`: above; `None`: equal).
fn directed(sum: f64, below: Option<bool>, mode: Rounding, finite_operands: bool) -> f64 {
    if sum.is_infinite() {
        // A finite sum that overflowed: the directions pointing back stop at the largest
        // finite value.
        let back = finite_operands
            && match mode {
                Rounding::Zero => true,
                Rounding::Down => sum > 0.0,
                Rounding::Up => sum < 0.0,
            };
        return if back { f64::MAX.copysign(sum) } else { sum };
    }
    let Some(below) = below else { return sum };
    let toward_minus = match mode {
        Rounding::Down => below,
        Rounding::Up => return if below { sum } else { next_up(sum) },
        Rounding::Zero => below && sum > 0.0,
    };
    let toward_plus = matches!(mode, Rounding::Zero) && !below && sum < 0.0;
    if toward_minus {
        next_down(sum)
    } else if toward_plus {
        next_up(sum)
    } else {
        sum
    }
}

/// Knuth's two-sum: the exact rounding error of `a + b` (nearest), as `exact - sum`.
fn two_sum_error(a: f64, b: f64, sum: f64) -> f64 {
    let bb = sum - a;
    (a - (sum - bb)) + (b - bb)
}

fn side(error: f64) -> Option<bool> {
    (error != 0.0).then_some(error < 0.0)
}

fn directed_add(a: f64, b: f64, mode: Rounding) -> f64 {
    let sum = a + b;
    if sum == 0.0 {
        return zero_sum(a, b, mode);
    }
    let finite = a.is_finite() && b.is_finite();
    let error = if sum.is_finite() { two_sum_error(a, b, sum) } else { 0.0 };
    directed(sum, side(error), mode, finite)
}

/// In single precision: the double sum of two floats plus its two-sum error is the exact
/// sum, whose position relative to the nearest float gives the direction.
fn directed_add_f32(a: f32, b: f32, mode: Rounding) -> f32 {
    let (wide_a, wide_b) = (f64::from(a), f64::from(b));
    let sum = wide_a + wide_b;
    if sum == 0.0 {
        return zero_sum(wide_a, wide_b, mode) as f32;
    }
    let nearest = sum as f32;
    if nearest.is_infinite() {
        let finite = a.is_finite() && b.is_finite();
        let back = directed(f64::INFINITY.copysign(sum), Some(true), mode, finite);
        return if back.is_finite() { f32::MAX.copysign(nearest) } else { nearest };
    }
    // exact - nearest = (sum - nearest) + error, the first term exact (Sterbenz).
    let offset = (sum - f64::from(nearest)) + two_sum_error(wide_a, wide_b, sum);
    let Some(below) = side(offset) else { return nearest };
    let step = |x: f32, up: bool| {
        let bits = x.to_bits();
        // Away from zero adds one to the magnitude's bits; toward zero removes one.
        let away = up == (x > 0.0);
        f32::from_bits(if away { bits + 1 } else { bits - 1 })
    };
    match mode {
        Rounding::Down if below => step(nearest, false),
        Rounding::Up if !below => step(nearest, true),
        Rounding::Zero if below && nearest > 0.0 => step(nearest, false),
        Rounding::Zero if !below && nearest < 0.0 => step(nearest, true),
        _ => nearest,
    }
}

fn next_up(x: f64) -> f64 {
    if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}

fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

fn int(v: u32) -> Val {
    Val::Int(u128::from(v))
}

/// Evaluates the nvvm math intrinsic `name`; `None` when it is not one of them.
pub(crate) fn call(name: &str, args: &[Val]) -> Option<R<Val>> {
    let rest = name.strip_prefix("llvm.nvvm.")?;
    // Rounding modes other than nearest and flush-to-zero are not modelled.
    let op = rest.replace(".ftz", "");
    let d = |i| f64_arg(args, i);
    let f = |i| f32_arg(args, i);
    let d2 = |op: fn(f64, f64) -> f64| -> R<Val> { Ok(Val::F64(op(d(0)?, d(1)?))) };
    let f2 = |op: fn(f32, f32) -> f32| -> R<Val> { Ok(Val::F32(op(f(0)?, f(1)?))) };
    let result = match op.as_str() {
        "d2i.lo" => d(0).map(|x| int(x.to_bits() as u32)),
        "d2i.hi" => d(0).map(|x| int((x.to_bits() >> 32) as u32)),
        "lohi.i2d" => int_arg(args, 0).and_then(|lo| {
            let hi = int_arg(args, 1)?;
            Ok(Val::F64(f64::from_bits(u64::from(hi) << 32 | u64::from(lo))))
        }),
        "add.rn.d" => d2(|a, b| a + b),
        "mul.rn.d" => d2(|a, b| a * b),
        "div.rn.d" => d2(|a, b| a / b),
        "fma.rn.d" => d(0).and_then(|a| Ok(Val::F64(a.mul_add(d(1)?, d(2)?)))),
        "add.rz.d" => d2(|a, b| directed_add(a, b, Rounding::Zero)),
        "add.rm.d" => d2(|a, b| directed_add(a, b, Rounding::Down)),
        "add.rp.d" => d2(|a, b| directed_add(a, b, Rounding::Up)),
        "add.rz.f" => f2(|a, b| directed_add_f32(a, b, Rounding::Zero)),
        "add.rm.f" => f2(|a, b| directed_add_f32(a, b, Rounding::Down)),
        "add.rp.f" => f2(|a, b| directed_add_f32(a, b, Rounding::Up)),
        "add.rn.f" => f2(|a, b| a + b),
        "mul.rn.f" => f2(|a, b| a * b),
        "div.rn.f" => f2(|a, b| a / b),
        "fma.rn.f" => f(0).and_then(|a| Ok(Val::F32(a.mul_add(f(1)?, f(2)?)))),
        "sqrt.rn.d" => d(0).map(|x| Val::F64(x.sqrt())),
        "sqrt.rn.f" | "sqrt.approx.f" => f(0).map(|x| Val::F32(x.sqrt())),
        "rcp.rn.d" | "rcp.approx.d" => d(0).map(|x| Val::F64(1.0 / x)),
        "rcp.rn.f" | "rcp.approx.f" => f(0).map(|x| Val::F32(1.0 / x)),
        "rsqrt.approx.d" => d(0).map(|x| Val::F64(1.0 / x.sqrt())),
        "rsqrt.approx.f" => f(0).map(|x| Val::F32(1.0 / x.sqrt())),
        "mulhi.ull" => {
            int64_args(args).map(|(a, b)| Val::Int((u128::from(a) * u128::from(b)) >> 64))
        }
        "mulhi.ll" => int64_args(args).map(|(a, b)| {
            let product = i128::from(a as i64) * i128::from(b as i64);
            Val::Int(u128::from((product >> 64) as u64))
        }),
        "mulhi.ui" => int_arg(args, 0)
            .and_then(|a| Ok(int(((u64::from(a) * u64::from(int_arg(args, 1)?)) >> 32) as u32))),
        "mulhi.i" => int_arg(args, 0).and_then(|a| {
            let product = i64::from(a as i32) * i64::from(int_arg(args, 1)? as i32);
            Ok(int((product >> 32) as u32))
        }),
        "ex2.approx.f" => f(0).map(|x| Val::F32(x.exp2())),
        "lg2.approx.f" => f(0).map(|x| Val::F32(x.log2())),
        "fabs.d" => d(0).map(|x| Val::F64(x.abs())),
        "fabs.f" => f(0).map(|x| Val::F32(x.abs())),
        "floor.d" => d(0).map(|x| Val::F64(x.floor())),
        "floor.f" => f(0).map(|x| Val::F32(x.floor())),
        "trunc.d" => d(0).map(|x| Val::F64(x.trunc())),
        "trunc.f" => f(0).map(|x| Val::F32(x.trunc())),
        // PTX's cvt.rni: to nearest, ties to even.
        "round.f" => f(0).map(|x| Val::F32(x.round_ties_even())),
        "round.d" => d(0).map(|x| Val::F64(x.round_ties_even())),
        "ceil.d" => d(0).map(|x| Val::F64(x.ceil())),
        "ceil.f" => f(0).map(|x| Val::F32(x.ceil())),
        "fmin.d" => d2(f64::min),
        "fmax.d" => d2(f64::max),
        "fmin.f" => f2(f32::min),
        "fmax.f" => f2(f32::max),
        "saturate.f" => f(0).map(|x| Val::F32(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })),
        "d2i.rn" => d(0).map(|x| int(x.round_ties_even() as i32 as u32)),
        "f2i.rn" => f(0).map(|x| int(x.round_ties_even() as i32 as u32)),
        _ => return None,
    };
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_of(name: &str, a: f64, b: f64) -> f64 {
        match call(name, &[Val::F64(a), Val::F64(b)]) {
            Some(Ok(Val::F64(x))) => x,
            other => panic!("{name}: {other:?}"),
        }
    }

    fn f32_of(name: &str, a: f32, b: f32) -> f32 {
        match call(name, &[Val::F32(a), Val::F32(b)]) {
            Some(Ok(Val::F32(x))) => x,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn directed_additions_round_the_exact_sum() {
        let tiny = f64::from_bits(1);
        // 1 + tiny lies just above 1.
        assert_eq!(f64_of("llvm.nvvm.add.rz.d", 1.0, tiny), 1.0);
        assert_eq!(f64_of("llvm.nvvm.add.rm.d", 1.0, tiny), 1.0);
        assert_eq!(f64_of("llvm.nvvm.add.rp.d", 1.0, tiny), next_up(1.0));
        // -1 - tiny lies just below -1.
        assert_eq!(f64_of("llvm.nvvm.add.rz.d", -1.0, -tiny), -1.0);
        assert_eq!(f64_of("llvm.nvvm.add.rm.d", -1.0, -tiny), next_down(-1.0));
        assert_eq!(f64_of("llvm.nvvm.add.rp.d", -1.0, -tiny), -1.0);
        // 1 - tiny lies just below 1.
        assert_eq!(f64_of("llvm.nvvm.add.rz.d", 1.0, -tiny), next_down(1.0));
        assert_eq!(f64_of("llvm.nvvm.add.rp.d", 1.0, -tiny), 1.0);
        // Exact sums and zeros.
        assert_eq!(f64_of("llvm.nvvm.add.rz.d", 1.5, 2.25), 3.75);
        assert!(f64_of("llvm.nvvm.add.rm.d", 1.0, -1.0).is_sign_negative());
        assert!(f64_of("llvm.nvvm.add.rp.d", 1.0, -1.0).is_sign_positive());
        assert_eq!(f64_of("llvm.nvvm.add.rz.d", f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(f64_of("llvm.nvvm.add.rp.d", f64::MAX, f64::MAX), f64::INFINITY);

        let t32 = f32::from_bits(1);
        assert_eq!(f32_of("llvm.nvvm.add.rp.f", 1.0, t32), f32::from_bits(1.0f32.to_bits() + 1));
        assert_eq!(f32_of("llvm.nvvm.add.rz.ftz.f", 1.0, t32), 1.0);
        assert_eq!(
            f32_of("llvm.nvvm.add.rm.f", -1.0, -t32),
            f32::from_bits((-1.0f32).to_bits() + 1)
        );
        assert_eq!(f32_of("llvm.nvvm.add.rz.f", 1.0, -t32), f32::from_bits(1.0f32.to_bits() - 1));
        assert_eq!(f32_of("llvm.nvvm.add.rm.f", 0.5, 0.25), 0.75);
    }

    #[test]
    fn high_halves_of_products() {
        let hi = |name: &str, a: u128, b: u128| match call(name, &[Val::Int(a), Val::Int(b)]) {
            Some(Ok(Val::Int(x))) => x,
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(
            hi("llvm.nvvm.mulhi.ull", u128::from(u64::MAX), u128::from(u64::MAX)),
            u128::from(u64::MAX - 1)
        );
        assert_eq!(hi("llvm.nvvm.mulhi.ll", u128::from(u64::MAX), 2), u128::from(u64::MAX));
        assert_eq!(hi("llvm.nvvm.mulhi.ui", 0xffff_ffff, 0x10), 0xf);
        assert_eq!(hi("llvm.nvvm.mulhi.i", 0xffff_ffff, 0x10), 0xffff_ffff);
    }
}
