//! Forward mode for control flow and calls: branches pass the shadows of their arguments
//! to the shadow parameters of active blocks; returns give the primal result, its
//! tangent, or both, as the request asks; calls stay as they are when no derivative
//! reaches them, libm calls get their tangent from the rule table, and anything else
//! with an active operand is refused (differentiating calls is not implemented yet).

use adc_ir::{Inst, InstructionData, Value};

use crate::rules::{self, Differentiable};
use crate::{AdError, AdErrorKind, RetActivity};

use super::{carries_derivative, contains_ptr, Synth};

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
            for (param, arg) in params.iter().zip(&target.args) {
                if self.wants_shadow(*param) {
                    shadows.push(self.shadow(*arg, inst)?);
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
            (RetActivity::Active, Some(v)) => Some(self.shadow(v, inst)?),
            (RetActivity::Dup, Some(v)) => {
                let tangent = self.shadow(v, inst)?;
                let primal = self.value(v);
                let ty = self.b.func.signature.ret.clone().expect("checked with the signature");
                let undef = self.b.constant(ty, adc_ir::Constant::Undef);
                let with_primal = self.insert_field(undef, primal, 0);
                Some(self.insert_field(with_primal, tangent, 1))
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

    pub(crate) fn translate_call(&mut self, inst: Inst) -> Result<(), AdError> {
        let data = self.primal.inst(inst).clone();
        let active_args: Vec<Value> =
            data.args().into_iter().filter(|a| self.carries(*a)).collect();
        let callee = match &data {
            InstructionData::Call { callee, .. } => self.module.functions.get(*callee),
            _ => None,
        };
        if let InstructionData::Call { callee, .. } = &data {
            // A registered forward derivative (`crate::custom`) replaces the rules.
            let registered = crate::custom::derivative_of(self.module, *callee)?;
            if let Some(derivative) = registered.filter(|_| !active_args.is_empty()) {
                return self.translate_custom_call(inst, &derivative);
            }
            if let Some(library) = crate::custom::function_like(self.module, *callee) {
                return self.translate_function_like(inst, &library);
            }
        }
        let callee_name = callee.map(|f| f.name.clone());
        let has_rule = callee_name.as_deref().is_some_and(|n| rules::lookup_call(n).is_some());
        if has_rule {
            return self.translate_arith_call(inst, &data);
        }
        // `lround(x)` and friends: an integer result of floats, nothing written to
        // memory: the derivative is zero wherever it exists, the call stays as it is.
        let integer_result_only = callee.is_some_and(|f| {
            rules::non_differentiable_call(&f.name).is_some()
                && f.signature.ret.as_ref().is_some_and(|t| !carries_derivative(t))
                && !f.signature.params.iter().any(contains_ptr)
        });
        if integer_result_only {
            self.copy_primal(inst);
            return Ok(());
        }
        if let Some(&first) = active_args.first() {
            let operand = self.describe_value(first);
            let kind = match (callee, callee_name) {
                (Some(f), Some(name)) if !f.is_declaration() => AdErrorKind::Unsupported {
                    what: format!(
                        "the call to @{name} with the active operand {operand}: calls to \
                         other functions are not differentiated in forward mode yet"
                    ),
                },
                (Some(_), Some(name)) => match rules::non_differentiable_call(&name) {
                    Some(reason) => AdErrorKind::Unsupported {
                        what: format!("the call to @{name} on the active {operand}: {reason}"),
                    },
                    None => AdErrorKind::UnknownExternal { callee: name },
                },
                _ => AdErrorKind::Unsupported {
                    what: format!("an indirect call with the active operand {operand}"),
                },
            };
            return Err(self.error(inst, kind));
        }
        self.copy_primal(inst);
        Ok(())
    }

    /// A libm call with a rule: the copy, and its tangent when the result is active.
    fn translate_arith_call(&mut self, inst: Inst, data: &InstructionData) -> Result<(), AdError> {
        let InstructionData::Call { callee, args, .. } = data else {
            return Err(self.unsupported(inst, "a call without a direct callee (a bug in adc)"));
        };
        let name = self.module.functions[*callee].name.clone();
        let Some(result) = self.copy_primal(inst) else { return Ok(()) };
        let primal_result = self.primal.dfg.inst_result(inst).expect("copied a result");
        if !self.wants_shadow(primal_result) {
            return Ok(());
        }
        let tangent = self.rule_tangent(inst, Differentiable::Call(&name), args, result)?;
        self.record_shadow(primal_result, tangent);
        Ok(())
    }
}
