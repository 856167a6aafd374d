//! Variadic function definitions on x86-64 System V: the three intrinsics that a function
//! defining `...` uses (`va_start`, `va_end`, `va_copy`) and where the caller put each
//! argument, which is what `va_start` must describe.
//!
//! The intrinsics are calls to declarations named `llvm.va_start(ptr)`,
//! `llvm.va_end(ptr)` and `llvm.va_copy(ptr dst, ptr src)` (like the nvvm intrinsics:
//! passes see an ordinary call of an external function, which is conservative). Their
//! operand is a `va_list`, the 24-byte System V structure
//! `{ i32 gp_offset; i32 fp_offset; ptr overflow_arg_area; ptr reg_save_area }`. clang
//! lowers `va_arg` itself into loads and stores through that structure, so nothing else
//! is needed as long as `va_start` fills it in exactly as the ABI says:
//! - `reg_save_area` holds the six integer argument registers (rdi, rsi, rdx, rcx, r8, r9)
//!   at 0..48 and the eight vector registers (xmm0..xmm7) at 48..176, 16 bytes each;
//! - `gp_offset` is 8 x the integer registers the named parameters took, `fp_offset` is
//!   48 + 16 x the vector registers they took;
//! - `overflow_arg_area` is the first stack-passed variadic argument: the caller's argument
//!   area (the stack right above the return address) after the named stack parameters.
//!
//! [`ArgAssigner`] assigns arguments to registers and stack slots one scalar leaf at a
//! time, as Cranelift and LLVM do for the IR-level parameters clang emits (clang has
//! already coerced C structs into scalars or `byval` pointers). The backend and the
//! interpreter share it, so that they agree with each other and with clang's callers.

use crate::function::Function;
use crate::instructions::ParamAttrs;
use crate::types::Type;

/// Bytes of a System V `va_list` (`__va_list_tag`).
pub const VA_LIST_BYTES: u64 = 24;
/// Bytes of the integer-register part of the register save area.
pub const GP_SAVE_BYTES: u64 = 48;
/// Bytes of the register save area: six 8-byte integer and eight 16-byte vector registers.
pub const REG_SAVE_AREA_BYTES: u64 = 176;
/// Integer and vector registers that carry arguments.
pub const GP_REGISTERS: u32 = 6;
pub const XMM_REGISTERS: u32 = 8;
/// Field offsets in the `va_list`.
pub const GP_OFFSET_FIELD: u64 = 0;
pub const FP_OFFSET_FIELD: u64 = 4;
pub const OVERFLOW_AREA_FIELD: u64 = 8;
pub const REG_SAVE_AREA_FIELD: u64 = 16;

/// One of the intrinsics of a variadic function definition.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum VaIntrinsic {
    /// `call @llvm.va_start(%ap)`: fills in the `va_list` at `%ap` (variadic functions only).
    Start,
    /// `call @llvm.va_end(%ap)`: nothing to do on x86-64.
    End,
    /// `call @llvm.va_copy(%dst, %src)`: copies the 24 bytes of a `va_list`.
    Copy,
}

impl VaIntrinsic {
    pub const ALL: [VaIntrinsic; 3] = [VaIntrinsic::Start, VaIntrinsic::End, VaIntrinsic::Copy];

    /// The name of the declaration that calls of this intrinsic call.
    pub fn name(self) -> &'static str {
        match self {
            VaIntrinsic::Start => "llvm.va_start",
            VaIntrinsic::End => "llvm.va_end",
            VaIntrinsic::Copy => "llvm.va_copy",
        }
    }

    pub fn from_name(name: &str) -> Option<VaIntrinsic> {
        VaIntrinsic::ALL.into_iter().find(|i| i.name() == name)
    }

    /// The declaration's parameter count; every parameter is a `ptr` and nothing is returned.
    pub fn operand_count(self) -> usize {
        match self {
            VaIntrinsic::Copy => 2,
            VaIntrinsic::Start | VaIntrinsic::End => 1,
        }
    }

    pub fn signature(self) -> crate::function::Signature {
        crate::function::Signature::new(vec![Type::PTR; self.operand_count()], None)
    }
}

/// Where the caller put one scalar leaf of an argument.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The n-th integer argument register (its bytes at `8 * n` in the save area).
    Gpr(u32),
    /// The n-th vector argument register (at `48 + 16 * n` in the save area).
    Xmm(u32),
    /// At this byte offset in the caller's argument area.
    Stack(u64),
}

impl Slot {
    /// The slot's byte offset in the register save area, for register slots.
    pub fn save_area_offset(self) -> Option<u64> {
        match self {
            Slot::Gpr(n) => Some(8 * u64::from(n)),
            Slot::Xmm(n) => Some(GP_SAVE_BYTES + 16 * u64::from(n)),
            Slot::Stack(_) => None,
        }
    }
}

/// Where the caller put one named parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamHome {
    /// Each scalar leaf: its byte offset inside the parameter's value, its type, its slot.
    Leaves(Vec<(u64, Type, Slot)>),
    /// A `byval` aggregate copied into the caller's argument area at this offset; the
    /// parameter is its address.
    Byval(u64),
}

/// Assigns arguments, left to right, to registers and stack slots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgAssigner {
    pub gp_used: u32,
    pub xmm_used: u32,
    /// Bytes of the caller's argument area taken so far.
    pub stack_bytes: u64,
}

impl ArgAssigner {
    /// The slots of a value of type `ty`, one per scalar leaf (lane form). `what` names the
    /// argument in errors.
    pub fn assign(&mut self, ty: &Type, what: &str) -> Result<Vec<(u64, Type, Slot)>, String> {
        let mut out = Vec::new();
        for (offset, leaf) in scalar_leaves(ty, what)? {
            let slot = self.leaf(&leaf, what)?;
            out.push((offset, leaf, slot));
        }
        Ok(out)
    }

    fn leaf(&mut self, ty: &Type, what: &str) -> Result<Slot, String> {
        let vector_class = ty.is_float();
        if *ty == Type::I128 {
            return Err(format!("{what} is an i128, whose System V register pairs adc does not model in variadic functions"));
        }
        if vector_class && self.xmm_used < XMM_REGISTERS {
            self.xmm_used += 1;
            return Ok(Slot::Xmm(self.xmm_used - 1));
        }
        if !vector_class && self.gp_used < GP_REGISTERS {
            self.gp_used += 1;
            return Ok(Slot::Gpr(self.gp_used - 1));
        }
        Ok(Slot::Stack(self.take_stack(8)))
    }

    /// A `byval` aggregate of `size` bytes: copied into the argument area, 8-byte aligned.
    pub fn byval(&mut self, size: u64) -> u64 {
        self.take_stack(size.div_ceil(8).max(1) * 8)
    }

    fn take_stack(&mut self, bytes: u64) -> u64 {
        let at = self.stack_bytes;
        self.stack_bytes += bytes;
        at
    }

    /// The `va_list` that `va_start` writes once the named parameters took what this
    /// assigner says: `(gp_offset, fp_offset, overflow offset in the argument area)`.
    pub fn va_start_fields(&self) -> (u32, u32, u64) {
        (8 * self.gp_used, GP_SAVE_BYTES as u32 + 16 * self.xmm_used, self.stack_bytes)
    }
}

/// Where the caller of `func`, a variadic function, put each named parameter, and the
/// assigner's state after them (what `va_start` describes).
pub fn named_params(func: &Function) -> Result<(Vec<ParamHome>, ArgAssigner), String> {
    let mut assigner = ArgAssigner::default();
    let mut homes = Vec::new();
    for (i, ty) in func.signature.params.iter().enumerate() {
        let attrs = func.param_attrs.get(i).copied().unwrap_or_default();
        let what = format!("parameter {i} of variadic @{}", func.name);
        if attrs.contains(ParamAttrs::BYVAL) {
            let size = func
                .byval_sizes
                .get(i)
                .copied()
                .flatten()
                .ok_or_else(|| format!("{what} is byval without a size"))?;
            homes.push(ParamHome::Byval(assigner.byval(u64::from(size))));
        } else {
            homes.push(ParamHome::Leaves(assigner.assign(ty, &what)?));
        }
    }
    Ok((homes, assigner))
}

/// The scalar leaves of `ty` with their byte offsets, vectors lane by lane.
fn scalar_leaves(ty: &Type, what: &str) -> Result<Vec<(u64, Type)>, String> {
    let mut out = Vec::new();
    push_leaves(ty, 0, what, &mut out)?;
    Ok(out)
}

fn push_leaves(ty: &Type, base: u64, what: &str, out: &mut Vec<(u64, Type)>) -> Result<(), String> {
    const MAX_LEAVES: usize = 64;
    if out.len() > MAX_LEAVES {
        return Err(format!("{what} has more than {MAX_LEAVES} scalar parts"));
    }
    match ty {
        Type::Vector(elem, _) if **elem == Type::I1 => {
            return Err(format!("{what} is a vector of i1, which has no System V form"))
        }
        Type::Vector(elem, n) => {
            for k in 0..u64::from(*n) {
                push_leaves(elem, base + k * elem.size(), what, out)?;
            }
        }
        Type::Array(elem, n) => {
            for k in 0..*n {
                push_leaves(elem, base + k * elem.size(), what, out)?;
            }
        }
        Type::Struct(s) => {
            for (field, offset) in s.fields.iter().zip(s.field_offsets()) {
                push_leaves(field, base + offset, what, out)?;
            }
        }
        scalar => out.push((base, scalar.clone())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::Signature;

    fn func(params: Vec<Type>) -> Function {
        let mut f = Function::new("f", Signature { params, ret: None, varargs: true });
        f.byval_sizes = Vec::new();
        f
    }

    #[test]
    fn named_registers_set_the_offsets() {
        let f = func(vec![Type::PTR, Type::F64, Type::I32, Type::F32]);
        let (homes, a) = named_params(&f).unwrap();
        assert_eq!(homes[1], ParamHome::Leaves(vec![(0, Type::F64, Slot::Xmm(0))]));
        assert_eq!(homes[2], ParamHome::Leaves(vec![(0, Type::I32, Slot::Gpr(1))]));
        assert_eq!(a.va_start_fields(), (16, 48 + 32, 0));
    }

    #[test]
    fn named_parameters_past_the_registers_go_to_the_stack() {
        let f = func(vec![Type::I64; 8]);
        let (homes, a) = named_params(&f).unwrap();
        assert_eq!(homes[6], ParamHome::Leaves(vec![(0, Type::I64, Slot::Stack(0))]));
        assert_eq!(homes[7], ParamHome::Leaves(vec![(0, Type::I64, Slot::Stack(8))]));
        assert_eq!(a.va_start_fields(), (48, 48, 16));
    }

    #[test]
    fn byval_parameters_take_rounded_stack_space() {
        let mut f = func(vec![Type::PTR, Type::I32]);
        f.param_attrs[0] = ParamAttrs::BYVAL;
        f.byval_sizes = vec![Some(20)];
        let (homes, a) = named_params(&f).unwrap();
        assert_eq!(homes[0], ParamHome::Byval(0));
        assert_eq!(homes[1], ParamHome::Leaves(vec![(0, Type::I32, Slot::Gpr(0))]));
        assert_eq!(a.va_start_fields(), (8, 48, 24));
    }

    #[test]
    fn unsupported_parameters_are_named() {
        let e = named_params(&func(vec![Type::I32, Type::I128])).unwrap_err();
        assert!(e.contains("parameter 1 of variadic @f") && e.contains("i128"), "{e}");
    }

    #[test]
    fn intrinsic_names_round_trip() {
        for i in VaIntrinsic::ALL {
            assert_eq!(VaIntrinsic::from_name(i.name()), Some(i));
            assert_eq!(i.signature().params.len(), i.operand_count());
        }
        assert_eq!(VaIntrinsic::from_name("llvm.va_arg"), None);
    }
}
