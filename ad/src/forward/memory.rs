//! Forward mode for memory: shadow memory mirrors the primal's byte for byte. An active
//! alloca gets a zeroed shadow alloca, pointer arithmetic is repeated on the shadow
//! pointer, loads read the shadow, stores write the tangent (or zero: a stored constant
//! has none), memcpy/memmove copy the shadow bytes too and memset zeroes them (the bytes
//! it writes are constants).
//!
//! An active value that would be written where no shadow exists (through a pointer that
//! is not derived from a `Dup` argument or an alloca) is an error: its tangent would be
//! lost and a later load would read a zero.

use adc_ir::{Constant, Inst, InstructionData, Type, Value};

use crate::{AdError, AdErrorKind};

use super::Synth;

impl Synth<'_> {
    pub(crate) fn translate_memory(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let data = self.primal.inst(inst).clone();
        match data {
            I::Alloca { ty, count, align } => {
                self.copy_primal(inst);
                let primal_result = self.primal.dfg.inst_result(inst).expect("alloca result");
                if !self.activity.is_active(primal_result) {
                    return Ok(());
                }
                let count = count.map(|c| self.value(c));
                let shadow = self.b.alloca(ty.clone(), count, align);
                let size = ty.size() as i128;
                let len = match count {
                    Some(count) => {
                        let count_ty = self.b.func.dfg.value_type(count).clone();
                        let size = self.b.iconst(count_ty, size);
                        self.b.binary(adc_ir::BinaryOp::Mul, count, size)
                    }
                    None => self.b.iconst(Type::I64, size),
                };
                self.zero_memory(shadow, len);
                self.record_shadow(primal_result, shadow);
            }
            I::Load { ty, ptr, align, volatile } => {
                self.copy_primal(inst);
                let primal_result = self.primal.dfg.inst_result(inst).expect("load result");
                if !self.activity.is_active(primal_result) {
                    return Ok(());
                }
                let shadow_ptr = self.shadow(ptr, inst)?;
                let data = I::Load { ty, ptr: shadow_ptr, align, volatile };
                let shadow = self.b.ins(data).1.expect("load result");
                self.record_shadow(primal_result, shadow);
            }
            I::Store { value, ptr, align, volatile } => {
                self.copy_primal(inst);
                if self.activity.is_active(ptr) {
                    let shadow_value = self.shadow(value, inst)?;
                    let shadow_ptr = self.shadow(ptr, inst)?;
                    let data = I::Store { value: shadow_value, ptr: shadow_ptr, align, volatile };
                    self.b.ins(data);
                } else if self.carries(value) {
                    return Err(self.lost_derivative(inst, value, ptr));
                }
            }
            I::PtrAdd { flags, ptr, offset } => {
                self.copy_primal(inst);
                let primal_result = self.primal.dfg.inst_result(inst).expect("ptradd result");
                if !self.activity.is_active(primal_result) {
                    return Ok(());
                }
                let shadow_ptr = self.shadow(ptr, inst)?;
                let offset = self.value(offset);
                let data = I::PtrAdd { flags, ptr: shadow_ptr, offset };
                let shadow = self.b.ins(data).1.expect("ptradd result");
                self.record_shadow(primal_result, shadow);
            }
            I::MemCopy { dst, src, len, may_overlap, volatile } => {
                self.copy_primal(inst);
                let len = self.value(len);
                match (self.activity.is_active(dst), self.activity.is_active(src)) {
                    (true, true) => {
                        let dst = self.shadow(dst, inst)?;
                        let src = self.shadow(src, inst)?;
                        self.b.ins(I::MemCopy { dst, src, len, may_overlap, volatile });
                    }
                    (true, false) => {
                        // Bytes from untracked memory are constants: their tangents are 0.
                        let dst = self.shadow(dst, inst)?;
                        self.zero_memory(dst, len);
                    }
                    (false, true) => return Err(self.lost_derivative(inst, src, dst)),
                    (false, false) => {}
                }
            }
            I::MemSet { dst, len, .. } => {
                self.copy_primal(inst);
                if self.activity.is_active(dst) {
                    let len = self.value(len);
                    let dst = self.shadow(dst, inst)?;
                    self.zero_memory(dst, len);
                }
            }
            I::AtomicRmw { ptr, value, .. } => {
                if self.activity.is_active(ptr) || self.carries(value) {
                    return Err(
                        self.unsupported(inst, "an atomic read-modify-write of active memory")
                    );
                }
                self.copy_primal(inst);
            }
            I::CmpXchg { ptr, new, .. } => {
                if self.activity.is_active(ptr) || self.carries(new) {
                    return Err(self.unsupported(inst, "a compare-and-exchange of active memory"));
                }
                self.copy_primal(inst);
            }
            other => {
                return Err(self.unsupported(
                    inst,
                    &format!("{} as a memory operation (a bug in adc)", other.opcode_name()),
                ))
            }
        }
        Ok(())
    }

    fn zero_memory(&mut self, dst: Value, len: Value) {
        let byte = self.b.constant(Type::I8, Constant::Int(0));
        self.b.ins(InstructionData::MemSet { dst, byte, len, volatile: false });
    }

    fn lost_derivative(&self, inst: Inst, value: Value, ptr: Value) -> AdError {
        self.error(
            inst,
            AdErrorKind::Unsupported {
                what: format!(
                    "a write of the active {} through {}, which has no shadow memory (a \
                     global, a heap block or an untracked pointer): its derivative would be \
                     lost",
                    self.describe_value(value),
                    self.describe_value(ptr)
                ),
            },
        )
    }

    pub(crate) fn unsupported(&self, inst: Inst, what: &str) -> AdError {
        self.error(inst, AdErrorKind::Unsupported { what: what.to_string() })
    }
}
