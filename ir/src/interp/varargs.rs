//! Calls of defined variadic functions: the caller's variable arguments laid out in memory
//! exactly as x86-64 System V code finds them (see `crate::varargs`), so that clang's
//! `va_arg` lowering, loads and stores through the `va_list`, runs unchanged.
//!
//! Each call gets a 176-byte register save area and an overflow area (two `alloca`-like
//! blocks of the callee's frame). Named arguments are passed as values; only the registers
//! they took are counted, so variadic ones start where a native caller would put them.
//! Save-area slots no argument went to stay uninitialized: a `va_arg` past the arguments
//! given reads them and is reported. `va_start` writes the four fields of the `va_list`;
//! `va_copy` copies them; `va_end` checks its operand and does nothing else.
//!
//! The `v*printf` family reads its arguments through such a `va_list` ([`VaListArgs`]),
//! advancing it as the C library does.

use crate::function::Function;
use crate::types::Type;
use crate::varargs::{self as abi, Slot, VaIntrinsic};

use super::memory::{Access, AllocKind, Memory};
use super::value::Val;
use super::{ErrorKind, Interpreter, R};

/// The variable arguments of one activation of a variadic function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct VaArea {
    pub save: u64,
    pub overflow: u64,
    /// `va_list` fields once the named parameters took their registers.
    pub gp_offset: u32,
    pub fp_offset: u32,
}

impl<'m> Interpreter<'m> {
    /// Lays out the arguments of a call of `f` after its named parameters (`extra`, whose
    /// types are `tys`) in a fresh save area and overflow area.
    pub(crate) fn va_area(&mut self, f: &Function, extra: &[Val], tys: &[Type]) -> R<VaArea> {
        let (_, mut assigner) = abi::named_params(f).map_err(ErrorKind::Unsupported)?;
        let (gp_offset, fp_offset, _) = assigner.va_start_fields();
        // Named stack parameters are values here, not memory: the overflow area holds the
        // variable arguments alone.
        assigner.stack_bytes = 0;
        let mut placed = Vec::new();
        for (k, (val, ty)) in extra.iter().zip(tys).enumerate() {
            let what = format!("variable argument {k} of @{}", f.name);
            if !ty.is_scalar() {
                return Err(ErrorKind::Unsupported(format!(
                    "{what} has type {ty}; the interpreter passes scalars only"
                )));
            }
            let slot = match assigner.assign(ty, &what).map_err(ErrorKind::Unsupported)?[..] {
                [(_, _, slot)] => slot,
                _ => return Err(ErrorKind::Unsupported(format!("{what} has type {ty}"))),
            };
            placed.push((slot, ty, val));
        }
        let kind = || AllocKind::Stack { func: f.name.clone() };
        let save = self.mem.allocate(abi::REG_SAVE_AREA_BYTES, 16, kind(), false)?;
        let overflow = self.mem.allocate(assigner.stack_bytes.max(1), 16, kind(), false)?;
        for (slot, ty, val) in placed {
            let at = match slot {
                Slot::Stack(offset) => overflow + offset,
                register => save + register.save_area_offset().unwrap_or(0),
            };
            self.mem.store(at, ty, val, Access::write("variadic call"))?;
        }
        Ok(VaArea { save, overflow, gp_offset, fp_offset })
    }

    /// Runs `va_start`, `va_end` or `va_copy` in a frame whose variable arguments (if it
    /// has any) are `area`.
    pub(crate) fn va_intrinsic(
        &mut self,
        intrinsic: VaIntrinsic,
        area: Option<VaArea>,
        func: &Function,
        args: &[Val],
    ) -> R<()> {
        let bad = |detail: String| ErrorKind::BadExternalCall {
            name: intrinsic.name().to_string(),
            detail,
        };
        let ptr = |i: usize| match args.get(i) {
            Some(Val::Ptr(p)) => Ok(*p),
            other => Err(bad(format!("operand {i} should be a va_list pointer, found {other:?}"))),
        };
        match intrinsic {
            VaIntrinsic::Start => {
                let area = area.ok_or_else(|| {
                    bad(format!("@{} was not called with variable arguments", func.name))
                })?;
                let ap = ptr(0)?;
                let w = Access::write("va_start");
                let int32 = |v: u32| Val::Int(u128::from(v));
                self.mem.store(ap + abi::GP_OFFSET_FIELD, &Type::I32, &int32(area.gp_offset), w)?;
                self.mem.store(ap + abi::FP_OFFSET_FIELD, &Type::I32, &int32(area.fp_offset), w)?;
                let overflow = Val::Ptr(area.overflow);
                self.mem.store(ap + abi::OVERFLOW_AREA_FIELD, &Type::PTR, &overflow, w)?;
                self.mem.store(
                    ap + abi::REG_SAVE_AREA_FIELD,
                    &Type::PTR,
                    &Val::Ptr(area.save),
                    w,
                )?;
            }
            VaIntrinsic::End => {
                self.mem.check(ptr(0)?, abi::VA_LIST_BYTES, Access::read("va_end"))?;
            }
            VaIntrinsic::Copy => {
                self.mem.copy(ptr(0)?, ptr(1)?, abi::VA_LIST_BYTES, false, "va_copy")?;
            }
        }
        Ok(())
    }
}

/// Where the arguments of a `printf`-style conversion come from.
pub(crate) trait FormatArgs {
    /// The next integer argument of `bits` bits (32 or 64: C promotes narrower ones).
    fn int(&mut self, mem: &mut Memory, bits: u32) -> R<u128>;
    fn float(&mut self, mem: &mut Memory) -> R<f64>;
    fn ptr(&mut self, mem: &mut Memory) -> R<u64>;
}

/// The arguments of a `v*printf` call: read through a System V `va_list` at `ap`, which
/// advances past each one.
pub(crate) struct VaListArgs<'n> {
    pub name: &'n str,
    pub ap: u64,
}

impl VaListArgs<'_> {
    /// The address of the next argument and advances the `va_list`: from the save area
    /// while `offset_field` is below `limit`, else from the overflow area.
    fn next(&self, mem: &mut Memory, offset_field: u64, limit: u32, step: u32) -> R<u64> {
        let (r, w) = (Access::read("va_arg"), Access::write("va_arg"));
        let offset = mem.load(self.ap + offset_field, &Type::I32, r)?.as_int()? as u32;
        if offset < limit {
            let save = mem.load(self.ap + abi::REG_SAVE_AREA_FIELD, &Type::PTR, r)?.as_ptr()?;
            let advanced = Val::Int(u128::from(offset + step));
            mem.store(self.ap + offset_field, &Type::I32, &advanced, w)?;
            return Ok(save + u64::from(offset));
        }
        let overflow = mem.load(self.ap + abi::OVERFLOW_AREA_FIELD, &Type::PTR, r)?.as_ptr()?;
        mem.store(self.ap + abi::OVERFLOW_AREA_FIELD, &Type::PTR, &Val::Ptr(overflow + 8), w)?;
        Ok(overflow)
    }

    fn gp(&self, mem: &mut Memory, ty: &Type) -> R<Val> {
        let at = self.next(mem, abi::GP_OFFSET_FIELD, abi::GP_SAVE_BYTES as u32, 8)?;
        mem.load(at, ty, Access::read("va_arg"))
    }
}

impl FormatArgs for VaListArgs<'_> {
    fn int(&mut self, mem: &mut Memory, bits: u32) -> R<u128> {
        let ty = if bits <= 32 { Type::I32 } else { Type::I64 };
        self.gp(mem, &ty)?.as_int()
    }

    fn float(&mut self, mem: &mut Memory) -> R<f64> {
        let limit = abi::REG_SAVE_AREA_BYTES as u32;
        let at = self.next(mem, abi::FP_OFFSET_FIELD, limit, 16)?;
        match mem.load(at, &Type::F64, Access::read("va_arg"))? {
            Val::F64(x) => Ok(x),
            other => Err(ErrorKind::BadExternalCall {
                name: self.name.to_string(),
                detail: format!("a double argument read as {}", other.kind_name()),
            }),
        }
    }

    fn ptr(&mut self, mem: &mut Memory) -> R<u64> {
        self.gp(mem, &Type::PTR)?.as_ptr()
    }
}
