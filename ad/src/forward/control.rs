//! Forward mode for control flow: branches pass the shadows of their arguments (lane by
//! lane) to the shadow parameters of active blocks; returns give the primal result, its
//! tangent(s), or both, as the request asks.

use adc_ir::{Inst, InstructionData, Value};

use crate::{AdError, RetActivity};

use super::Synth;

impl Synth<'_> {
    pub(crate) fn translate_terminator(&mut self, inst: Inst) -> Result<(), AdError> {
        let mut data = self.primal.inst(inst).clone();
        if let InstructionData::Return { value } = data {
            return self.translate_return(inst, value);
        }
        // Shadow arguments first: they may need zero constants, which must come before the
        // terminator in this block.
        let mut extra: Vec<Vec<Value>> = Vec::new();
        for target in data.branch_targets() {
            let params = self.primal.dfg.block_params(target.block);
            let mut shadows = Vec::new();
            for lane in self.lanes() {
                for (param, arg) in params.iter().zip(&target.args) {
                    if self.wants_shadow(*param) {
                        shadows.push(self.in_lane(lane, |s| s.shadow(*arg, inst))?);
                    }
                }
            }
            extra.push(shadows);
        }
        data.map_args(|v| self.values[&v]);
        for (target, shadows) in data.branch_targets_mut().into_iter().zip(extra) {
            target.block = self.blocks[&target.block];
            target.args.extend(shadows);
        }
        self.b.ins(data);
        Ok(())
    }

    fn translate_return(&mut self, inst: Inst, value: Option<Value>) -> Result<(), AdError> {
        let returned = match (self.request.ret, value) {
            (RetActivity::Const, value) => value.map(|v| self.value(v)),
            (RetActivity::Active, Some(v)) if self.lanes().len() == 1 => {
                Some(self.shadow(v, inst)?)
            }
            (ret @ (RetActivity::Active | RetActivity::Dup), Some(v)) => {
                // A struct: the primal first for `Dup`, then the tangent of every lane.
                let mut fields = Vec::new();
                if ret == RetActivity::Dup {
                    fields.push(self.value(v));
                }
                for lane in self.lanes() {
                    fields.push(self.in_lane(lane, |s| s.shadow(v, inst))?);
                }
                let ty = self.b.func.signature.ret.clone().expect("checked with the signature");
                let mut aggregate = self.b.constant(ty, adc_ir::Constant::Undef);
                for (index, field) in fields.into_iter().enumerate() {
                    aggregate = self.insert_field(aggregate, field, index as u32);
                }
                Some(aggregate)
            }
            (_, None) => return Err(self.unsupported(inst, "a `ret` without a value")),
        };
        self.b.ret(returned);
        Ok(())
    }

    fn insert_field(&mut self, aggregate: Value, value: Value, index: u32) -> Value {
        let data = InstructionData::InsertValue { aggregate, value, indices: vec![index] };
        self.b.ins(data).1.expect("insertvalue has a result")
    }
}
