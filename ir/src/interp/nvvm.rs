//! The `llvm.nvvm.*` math intrinsics that libdevice's bodies call, so that linked
//! libdevice functions run in the interpreter (on the CPU or in a simulated grid). Exact
//! operations (`add.rn`, `fma.rn`, `sqrt.rn`, conversions, the halves of a double) are
//! computed exactly; the hardware approximations (`rcp.approx`, `ex2.approx`, ...) are
//! computed correctly rounded, which is within their documented error, so results of code
//! using them may differ from a device's in the last bits.

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
        "add.rn.f" => f2(|a, b| a + b),
        "mul.rn.f" => f2(|a, b| a * b),
        "div.rn.f" => f2(|a, b| a / b),
        "fma.rn.f" => f(0).and_then(|a| Ok(Val::F32(a.mul_add(f(1)?, f(2)?)))),
        "sqrt.rn.d" => d(0).map(|x| Val::F64(x.sqrt())),
        "sqrt.rn.f" | "sqrt.approx.f" => f(0).map(|x| Val::F32(x.sqrt())),
        "rcp.rn.d" | "rcp.approx.d" => d(0).map(|x| Val::F64(1.0 / x)),
        "rcp.rn.f" | "rcp.approx.f" => f(0).map(|x| Val::F32(1.0 / x)),
        "ex2.approx.f" => f(0).map(|x| Val::F32(x.exp2())),
        "lg2.approx.f" => f(0).map(|x| Val::F32(x.log2())),
        "fabs.d" => d(0).map(|x| Val::F64(x.abs())),
        "fabs.f" => f(0).map(|x| Val::F32(x.abs())),
        "floor.d" => d(0).map(|x| Val::F64(x.floor())),
        "floor.f" => f(0).map(|x| Val::F32(x.floor())),
        "trunc.d" => d(0).map(|x| Val::F64(x.trunc())),
        "trunc.f" => f(0).map(|x| Val::F32(x.trunc())),
        "round.f" => f(0).map(|x| Val::F32(x.round_ties_even())),
        "saturate.f" => f(0).map(|x| Val::F32(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })),
        "d2i.rn" => d(0).map(|x| int(x.round_ties_even() as i32 as u32)),
        "f2i.rn" => f(0).map(|x| int(x.round_ties_even() as i32 as u32)),
        _ => return None,
    };
    Some(result)
}
