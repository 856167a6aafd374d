//! The `llvm.nvvm.*` math intrinsics that libdevice's bodies call (rounding-mode
//! arithmetic, approximate transcendentals, conversions, and the halves of a double), each
//! one PTX instruction or a short scoped sequence.

use adc_ir::{Inst, Value};

use crate::function::FunctionEmitter;
use crate::PtxError;

/// The PTX operation of a one-instruction intrinsic (`llvm.nvvm.` stripped), with the
/// number of operands it takes.
fn simple(name: &str) -> Option<(String, usize)> {
    let (base, ty) = name.rsplit_once('.')?;
    let ty = match ty {
        "d" => "f64",
        "f" => "f32",
        _ => return None,
    };
    let (op, ftz) = match base.strip_suffix(".ftz") {
        Some(op) => (op, ".ftz"),
        None => (base, ""),
    };
    Some(match op {
        "add.rn" | "add.rz" | "add.rm" | "add.rp" | "mul.rn" | "mul.rz" | "mul.rm" | "mul.rp"
        | "div.rn" | "div.rz" | "div.rm" | "div.rp" => (format!("{op}{ftz}.{ty}"), 2),
        "fma.rn" | "fma.rz" | "fma.rm" | "fma.rp" => (format!("{op}{ftz}.{ty}"), 3),
        "sqrt.rn" | "sqrt.rz" | "sqrt.rm" | "sqrt.rp" | "sqrt.approx" | "rcp.rn" | "rcp.rz"
        | "rcp.rm" | "rcp.rp" | "rcp.approx" | "rsqrt.approx" | "ex2.approx" | "lg2.approx"
        | "sin.approx" | "cos.approx" => (format!("{op}{ftz}.{ty}"), 1),
        "fabs" => (format!("abs{ftz}.{ty}"), 1),
        "fmin" => (format!("min{ftz}.{ty}"), 2),
        "fmax" => (format!("max{ftz}.{ty}"), 2),
        "floor" => (format!("cvt.rmi{ftz}.{ty}.{ty}"), 1),
        "ceil" => (format!("cvt.rpi{ftz}.{ty}.{ty}"), 1),
        "trunc" => (format!("cvt.rzi{ftz}.{ty}.{ty}"), 1),
        "round" => (format!("cvt.rni{ftz}.{ty}.{ty}"), 1),
        "saturate" => (format!("cvt.sat{ftz}.{ty}.{ty}"), 1),
        _ => return None,
    })
}

/// Float-to-integer conversions with a rounding mode: `d2i.rn`, `f2i.rz.ftz`, `d2ll.rn`...
fn conversion(name: &str) -> Option<String> {
    let mut parts = name.split('.');
    let kind = parts.next()?;
    let rounding = parts.next()?;
    let ftz = if parts.next() == Some("ftz") { ".ftz" } else { "" };
    let (from, to) = match kind {
        "d2i" => ("f64", "s32"),
        "d2ui" => ("f64", "u32"),
        "d2ll" => ("f64", "s64"),
        "d2ull" => ("f64", "u64"),
        "f2i" => ("f32", "s32"),
        "f2ui" => ("f32", "u32"),
        "f2ll" => ("f32", "s64"),
        "f2ull" => ("f32", "u64"),
        "i2d" => ("s32", "f64"),
        "ui2d" => ("u32", "f64"),
        "ll2d" => ("s64", "f64"),
        "ull2d" => ("u64", "f64"),
        _ => return None,
    };
    let rounding = match rounding {
        "rn" | "rz" | "rm" | "rp" if from.starts_with('f') => format!("{rounding}i"),
        "rn" | "rz" | "rm" | "rp" => rounding.to_string(),
        _ => return None,
    };
    Some(format!("cvt.{rounding}{ftz}.{to}.{from}"))
}

/// The high half of an integer product: `mulhi.ull` (what adc makes of libdevice's
/// 128-bit multiply in inline assembly) and its signed and 32-bit forms.
fn multiply_high(name: &str) -> Option<&'static str> {
    Some(match name {
        "mulhi.i" => "mul.hi.s32",
        "mulhi.ui" => "mul.hi.u32",
        "mulhi.ll" => "mul.hi.s64",
        "mulhi.ull" => "mul.hi.u64",
        _ => return None,
    })
}

impl FunctionEmitter<'_> {
    /// Emits a libdevice math intrinsic; `Ok(false)` when `name` is not one.
    pub(crate) fn nvvm_math(
        &mut self,
        inst: Inst,
        result: Option<Value>,
        name: &str,
        args: &[Value],
    ) -> Result<bool, PtxError> {
        let Some(rest) = name.strip_prefix("llvm.nvvm.") else { return Ok(false) };
        let operands = |s: &mut Self| -> Result<Vec<String>, PtxError> {
            args.iter().map(|a| s.reg(*a, inst)).collect()
        };
        let dst = |s: &mut Self| -> Result<String, PtxError> {
            let value = result.ok_or_else(|| s.unsupported(inst, "intrinsic without a result"))?;
            s.reg(value, inst)
        };
        if let Some((op, arity)) = simple(rest) {
            if args.len() != arity {
                return Err(self.unsupported(inst, format!("@{name} takes {arity} operands")));
            }
            let (d, ops) = (dst(self)?, operands(self)?);
            self.line(format!("{op} {d}, {};", ops.join(", ")));
            return Ok(true);
        }
        if let Some(op) = conversion(rest) {
            let (d, ops) = (dst(self)?, operands(self)?);
            let [a] = ops.as_slice() else {
                return Err(self.unsupported(inst, format!("@{name} takes one operand")));
            };
            self.line(format!("{op} {d}, {a};"));
            return Ok(true);
        }
        if let Some(op) = multiply_high(rest) {
            let (d, ops) = (dst(self)?, operands(self)?);
            let [a, b] = ops.as_slice() else {
                return Err(self.unsupported(inst, format!("@{name} takes two operands")));
            };
            self.line(format!("{op} {d}, {a}, {b};"));
            return Ok(true);
        }
        match rest {
            "d2i.lo" | "d2i.hi" => {
                let (d, ops) = (dst(self)?, operands(self)?);
                let [a] = ops.as_slice() else {
                    return Err(self.unsupported(inst, format!("@{name} takes one operand")));
                };
                let halves =
                    if rest == "d2i.lo" { format!("{d}, %hi") } else { format!("%lo, {d}") };
                let unused = if rest == "d2i.lo" { "%hi" } else { "%lo" };
                self.line(format!("{{ .reg .b32 {unused}; mov.b64 {{{halves}}}, {a}; }}"));
                Ok(true)
            }
            "lohi.i2d" => {
                let (d, ops) = (dst(self)?, operands(self)?);
                let [lo, hi] = ops.as_slice() else {
                    return Err(self.unsupported(inst, format!("@{name} takes two operands")));
                };
                self.line(format!("mov.b64 {d}, {{{lo}, {hi}}};"));
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
