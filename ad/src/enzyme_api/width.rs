//! The vector forward mode markers of Enzyme's C API: `enzyme_width, N` right after the
//! function (N a compile-time constant: the derivative's shape depends on it), after
//! which every duplicated argument takes N shadows, and `enzyme_dupv, stride, x, dx`,
//! whose N shadows lie `stride` bytes apart from `dx` on.

use adc_ir::{CastOp, Constant, Function, InstFlags, InstructionData, Module, Type, Value};

use super::{origin, Inserter, Marker, Origin};
use crate::request::DiffMode;

/// The widest vector forward mode accepted: wider requests are almost certainly a wrong
/// argument, and every lane costs code size.
const MAX_WIDTH: u64 = 64;

/// Consumes a leading `enzyme_width, N` from the arguments and returns N (1 without it).
pub(super) fn take_width<I: Iterator<Item = Value>>(
    module: &Module,
    func: &Function,
    mode: DiffMode,
    rest: &mut std::iter::Peekable<I>,
) -> Result<u32, String> {
    let Some(&first) = rest.peek() else { return Ok(1) };
    if origin(module, func, first) != Origin::Marker(Marker::Width) {
        return Ok(1);
    }
    rest.next();
    if mode != DiffMode::Forward {
        return Err("enzyme_width (vector mode) is supported in forward mode only".into());
    }
    let Some(value) = rest.next() else {
        return Err("enzyme_width at the end of the argument list without a width".into());
    };
    match super::split_api::constant_int(module, func, value) {
        Some(n) if (1..=MAX_WIDTH).contains(&n) => Ok(n as u32),
        Some(n) => Err(format!("enzyme_width {n}: the width must be between 1 and {MAX_WIDTH}")),
        None => Err(format!(
            "enzyme_width must be followed by a compile-time constant, not `{}`",
            super::value_text(module, func, value)
        )),
    }
}

/// Consumes the stride of `enzyme_dupv` (any integer value, in bytes).
pub(super) fn take_stride<I: Iterator<Item = Value>>(
    module: &Module,
    func: &Function,
    rest: &mut std::iter::Peekable<I>,
) -> Result<Value, String> {
    let Some(stride) = rest.next() else {
        return Err("enzyme_dupv at the end of the argument list without a stride".into());
    };
    if !func.dfg.value_type(stride).is_int() {
        return Err(format!(
            "enzyme_dupv takes a byte stride, not `{}`",
            super::value_text(module, func, stride)
        ));
    }
    Ok(stride)
}

/// The message for a duplicated argument whose shadows run out.
pub(super) fn missing_shadow(what: &str, lane: u32, width: u32) -> String {
    if width == 1 {
        format!("duplicated, but the argument list ends before its {what}")
    } else {
        format!(
            "duplicated with enzyme_width {width}, but the argument list ends before its \
             {what} {} of {width} (too few shadows)",
            lane + 1
        )
    }
}

/// The shadows of `enzyme_dupv`: `base + lane·stride` for every lane.
pub(super) fn strided_shadows(
    ins: &mut Inserter,
    base: Value,
    stride: Value,
    width: usize,
) -> Result<Vec<Value>, String> {
    let stride_ty = ins.func.dfg.value_type(stride).clone();
    let stride = if stride_ty == Type::I64 {
        stride
    } else {
        ins.value(InstructionData::Cast { op: CastOp::Sext, arg: stride, ty: Type::I64 })?
    };
    let mut shadows = vec![base];
    for lane in 1..width {
        let index = ins.constant(&Type::I64, Constant::Int(lane as u128))?;
        let offset = ins.value(InstructionData::Binary {
            op: adc_ir::BinaryOp::Mul,
            flags: InstFlags::empty(),
            args: [stride, index],
        })?;
        let flags = InstFlags::empty();
        shadows.push(ins.value(InstructionData::PtrAdd { flags, ptr: base, offset })?);
    }
    Ok(shadows)
}
