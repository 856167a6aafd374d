//! Forward mode for memory: shadow memory mirrors the primal's byte for byte. An active
//! alloca gets a zeroed shadow alloca, pointer arithmetic is repeated on the shadow
//! pointer, loads read the shadow, stores write the tangent (or zero: a stored constant
//! has none), memcpy/memmove copy the shadow bytes too and memset zeroes them (the bytes
//! it writes are constants).
//!
//! Which memory has a shadow follows the activity analysis. A write through a pointer
//! that the analysis says needs a shadow but that has none here (a global, a heap block)
//! is an error: its tangent would be lost and a later load would read a zero. Writes
//! through pointers whose memory the analysis found not to matter are not mirrored.

use adc_ir::{Constant, Inst, InstructionData, Type, Value};

use crate::{AdError, AdErrorKind};

use super::Synth;

impl Synth<'_> {
    pub(crate) fn translate_memory(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let data = self.primal.inst(inst).clone();
        let active_atomic = match data {
            I::AtomicRmw { ptr, value, .. } => self.has_shadow(ptr) || self.carries(value),
            I::CmpXchg { ptr, new, .. } => self.has_shadow(ptr) || self.carries(new),
            _ => false,
        };
        if active_atomic {
            let what =
                format!("{} of active memory (atomics are not differentiated)", data.opcode_name());
            return Err(self.unsupported(inst, &what));
        }
        self.copy_primal(inst);
        for lane in self.lanes() {
            self.in_lane(lane, |s| s.lane_memory(inst, data.clone()))?;
        }
        Ok(())
    }

    /// The shadow-memory side of a memory operation, in the current lane.
    fn lane_memory(&mut self, inst: Inst, data: InstructionData) -> Result<(), AdError> {
        use InstructionData as I;
        match data {
            I::Alloca { ty, count, align } => {
                let primal_result = self.primal.dfg.inst_result(inst).expect("alloca result");
                if !self.wants_shadow(primal_result) {
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
                let primal_result = self.primal.dfg.inst_result(inst).expect("load result");
                if !self.wants_shadow(primal_result) {
                    return Ok(());
                }
                let shadow_ptr = self.shadow(ptr, inst)?;
                let data = I::Load { ty, ptr: shadow_ptr, align, volatile };
                let shadow = self.b.ins(data).1.expect("load result");
                self.record_shadow(primal_result, shadow);
            }
            I::Store { value, ptr, align, volatile } => {
                if self.has_shadow_memory(ptr, inst)? {
                    let shadow_value = self.shadow(value, inst)?;
                    let shadow_ptr = self.shadow(ptr, inst)?;
                    let data = I::Store { value: shadow_value, ptr: shadow_ptr, align, volatile };
                    self.b.ins(data);
                } else if self.activity.is_active_value(value) {
                    // Never drop a tangent bound for the caller's memory.
                    crate::activity::check_store_into_argument(self.primal, self.request, ptr)
                        .map_err(|what| self.error(inst, AdErrorKind::Internal { what }))?;
                }
            }
            I::PtrAdd { flags, ptr, offset } => {
                let primal_result = self.primal.dfg.inst_result(inst).expect("ptradd result");
                // Offsets into memory with a shadow keep one (cheap, and stores through
                // them must reach the shadow whatever the analysis says of the offset).
                if !self.wants_shadow(primal_result) && !self.has_shadow(ptr) {
                    return Ok(());
                }
                let shadow_ptr = self.shadow(ptr, inst)?;
                let offset = self.value(offset);
                let data = I::PtrAdd { flags, ptr: shadow_ptr, offset };
                let shadow = self.b.ins(data).1.expect("ptradd result");
                self.record_shadow(primal_result, shadow);
            }
            I::MemCopy { dst, src, len, may_overlap, volatile } => {
                let len = self.value(len);
                let dst_shadowed = self.has_shadow_memory(dst, inst)?;
                match (dst_shadowed, self.has_shadow(src)) {
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
                    // The analysis found that the destination's derivative is not needed.
                    (false, _) => {}
                }
            }
            I::MemSet { dst, len, .. } => {
                if self.has_shadow_memory(dst, inst)? {
                    let len = self.value(len);
                    let dst = self.shadow(dst, inst)?;
                    self.zero_memory(dst, len);
                }
            }
            I::AtomicRmw { .. } | I::CmpXchg { .. } => {}
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

    /// Whether writes through `ptr` must be mirrored in shadow memory: when it has a
    /// shadow. A pointer that the activity analysis says needs one but that has none (a
    /// global, a heap block) cannot be mirrored: an error, or the derivative would be lost.
    fn has_shadow_memory(&self, ptr: Value, inst: Inst) -> Result<bool, AdError> {
        if self.has_shadow(ptr) {
            return Ok(true);
        }
        if self.activity.is_active_value(ptr) || self.activity.needs_shadow(ptr) {
            if let Some(global) = self.global_named_by(ptr) {
                return Err(self.global_without_shadow(inst, global));
            }
            return Err(self.error(
                inst,
                AdErrorKind::Unsupported {
                    what: format!(
                        "a write through {}, which points to memory whose derivative is \
                         needed but has no shadow memory (a global, a heap block or an \
                         untracked pointer)",
                        self.describe_value(ptr)
                    ),
                },
            ));
        }
        Ok(false)
    }

    pub(crate) fn unsupported(&self, inst: Inst, what: &str) -> AdError {
        self.error(inst, AdErrorKind::Unsupported { what: what.to_string() })
    }
}
