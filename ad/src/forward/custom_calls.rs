//! Calls to functions with a registered forward derivative
//! (`__enzyme_register_derivative_NAME = {f, f_fwd}`, see `crate::custom`): the call
//! becomes a call to `f_fwd` with each pointer and float argument followed by its shadow
//! or tangent (a null shadow or zero tangent where the argument carries none), and its
//! `{primal, tangent}` result gives the call's result and tangent. A call to an
//! `__enzyme_function_like` function keeps the primal call and takes its tangent from the
//! library function's rule.

use adc_ir::{Constant, FuncAttrs, Inst, InstructionData};

use super::Synth;
use crate::custom::{forward_result, CustomDerivative};
use crate::error::AdError;
use crate::rules::Differentiable;

impl Synth<'_> {
    pub(crate) fn translate_custom_call(
        &mut self,
        inst: Inst,
        derivative: &CustomDerivative,
    ) -> Result<(), AdError> {
        let InstructionData::Call { args, .. } = self.primal.inst(inst).clone() else {
            return Err(self.unsupported(inst, "a registered derivative on an indirect call"));
        };
        let primal_sig = self.module.functions[derivative.primal].signature.clone();
        let mut call_args = Vec::new();
        for arg in &args {
            call_args.push(self.value(*arg));
            let ty = self.primal_type(*arg);
            if ty.is_ptr() || ty.lane_type().is_float() {
                let shadow = match self.active_shadow(*arg) {
                    Some(shadow) => shadow,
                    None => self.b.constant(ty, Constant::Zero),
                };
                call_args.push(shadow);
            }
        }
        let data = InstructionData::Call {
            callee: derivative.forward,
            args: call_args,
            attrs: FuncAttrs::empty(),
        };
        let (_, out) = self.b.ins(data);
        let Some(result) = self.primal.dfg.inst_result(inst) else { return Ok(()) };
        let out =
            out.ok_or_else(|| self.unsupported(inst, "a forward derivative without result"))?;
        let pair = forward_result(&primal_sig) != primal_sig.ret;
        if !pair {
            self.values.insert(result, out);
            return Ok(());
        }
        let primal = InstructionData::ExtractValue { aggregate: out, indices: vec![0] };
        let primal = self.b.ins(primal).1.expect("extractvalue has a result");
        self.values.insert(result, primal);
        if self.wants_shadow(result) {
            let tangent = InstructionData::ExtractValue { aggregate: out, indices: vec![1] };
            let tangent = self.b.ins(tangent).1.expect("extractvalue has a result");
            self.record_shadow(result, tangent);
        }
        Ok(())
    }

    pub(crate) fn translate_function_like(
        &mut self,
        inst: Inst,
        library: &str,
    ) -> Result<(), AdError> {
        let InstructionData::Call { args, .. } = self.primal.inst(inst).clone() else {
            return Err(self.unsupported(inst, "a function_like call without a direct callee"));
        };
        let Some(result) = self.copy_primal(inst) else { return Ok(()) };
        let primal_result = self.primal.dfg.inst_result(inst).expect("copied a result");
        if !self.wants_shadow(primal_result) {
            return Ok(());
        }
        let tangent = self.rule_tangent(inst, Differentiable::Call(library), &args, result)?;
        self.record_shadow(primal_result, tangent);
        Ok(())
    }
}
