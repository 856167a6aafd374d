//! Calls to functions with registered custom derivatives (`crate::custom`), in the
//! reverse pass: a registered gradient replaces the split function (the augmented forward
//! function runs in the forward pass and its tape is kept like any other forward value;
//! the reverse function runs where the call is undone), and a `__enzyme_function_like`
//! function is differentiated with its library function's rule.

use adc_ir::{Constant, FuncAttrs, Inst, InstructionData, Type, Value};

use super::Synth;
use crate::custom::CustomGradient;
use crate::error::AdError;
use crate::rules::Differentiable;

/// A primal call differentiated through a registered gradient.
#[derive(Clone, Debug)]
pub(crate) struct CustomCall {
    pub gradient: CustomGradient,
    /// The tape returned by the augmented forward function (a forward value).
    pub tape: Option<Value>,
}

/// How the forward pass handles a call.
pub(super) enum CustomForward {
    /// No registration: the ordinary call machinery applies.
    NotCustom,
    /// Keep the primal call as it is (`function_like`, or nothing active).
    Primal,
    /// The augmented forward function was called.
    Emitted,
}

impl Synth<'_> {
    /// Forward pass of a call whose callee has a registration.
    pub(super) fn forward_custom_call(&mut self, inst: Inst) -> Result<CustomForward, AdError> {
        let InstructionData::Call { callee, args, .. } = self.primal.dfg.insts[inst].clone() else {
            return Ok(CustomForward::NotCustom);
        };
        let registrations = &self.facts.registrations;
        if registrations.like(callee).is_some() {
            return Ok(CustomForward::Primal);
        }
        let Some(gradient) = registrations.gradient(callee).cloned() else {
            return Ok(CustomForward::NotCustom);
        };
        let result = self.primal.dfg.inst_result(inst);
        let active = args.iter().any(|a| self.is_active(*a) || self.shadows.contains_key(a))
            || result.is_some_and(|r| self.is_active(r));
        if !active {
            return Ok(CustomForward::Primal);
        }
        if let Some(r) = result.filter(|r| self.activity.needs_shadow(*r)) {
            if self.primal.dfg.value_type(r).is_ptr() {
                return Err(self.unsupported(
                    inst,
                    format!(
                        "the pointer returned by @{}, which has a registered gradient: a \
                         returned shadow is not part of the custom gradient convention",
                        self.module.functions[callee].name
                    ),
                ));
            }
        }
        if args.iter().any(|a| !self.vmap.contains_key(a)) {
            return Err(self.unsupported(inst, "an operand that does not dominate its use"));
        }
        let mut call_args = Vec::new();
        for arg in &args {
            call_args.push(self.fwd(*arg));
            if self.primal.dfg.value_type(*arg).is_ptr() {
                let shadow = match self.shadows.get(arg) {
                    Some(shadow) => *shadow,
                    None => self.constant(Type::PTR, Constant::Int(0)),
                };
                call_args.push(shadow);
            }
        }
        let out = self.ins(InstructionData::Call {
            callee: gradient.augmented,
            args: call_args,
            attrs: FuncAttrs::empty(),
        });
        let (primal, tape) = match out {
            Some(out) if gradient.returns_pair(self.module) => {
                let tape =
                    self.val(InstructionData::ExtractValue { aggregate: out, indices: vec![0] });
                let primal =
                    self.val(InstructionData::ExtractValue { aggregate: out, indices: vec![1] });
                (Some(primal), Some(tape))
            }
            Some(out) if result.is_some() && gradient.augmented_returns_primal => (Some(out), None),
            out => (None, gradient.tape.as_ref().and(out)),
        };
        // An augmented function that does not return the primal result: `f` computes it.
        let primal = match (result, primal) {
            (Some(_), None) => {
                let args = args.iter().map(|a| self.fwd(*a)).collect();
                self.ins(InstructionData::Call { callee, args, attrs: FuncAttrs::empty() })
            }
            (_, primal) => primal,
        };
        if let (Some(result), Some(primal)) = (result, primal) {
            if let Some(name) = self.primal.dfg.value_name(result) {
                self.f.dfg.set_value_name(primal, name);
            }
            self.vmap.insert(result, primal);
        }
        self.custom_calls.insert(inst, CustomCall { gradient, tape });
        Ok(CustomForward::Emitted)
    }

    /// Reverse pass of a call with a registration; `false` when it has none.
    pub(super) fn reverse_custom_call(&mut self, inst: Inst) -> Result<bool, AdError> {
        let InstructionData::Call { callee, args, .. } = self.primal.dfg.insts[inst].clone() else {
            return Ok(false);
        };
        let result = self.primal.dfg.inst_result(inst);
        if let Some(library) = self.facts.registrations.like(callee).map(str::to_string) {
            if let Some(result) = result.filter(|r| self.is_active(*r)) {
                let d = self.take_adjoint(result);
                self.apply_rule(inst, Differentiable::Call(&library), &args, result, d)?;
            }
            return Ok(true);
        }
        let Some(call) = self.custom_calls.get(&inst).cloned() else { return Ok(false) };
        let primal_sig = self.module.functions[callee].signature.clone();
        let mut call_args = Vec::new();
        for arg in &args {
            call_args.push(self.primal_in_reverse(*arg));
            if self.primal.dfg.value_type(*arg).is_ptr() {
                let shadow = match self.shadow_in_reverse(*arg) {
                    Some(shadow) => shadow,
                    None => self.constant(Type::PTR, Constant::Int(0)),
                };
                call_args.push(shadow);
            }
        }
        if let Some(ty) = primal_sig.ret.as_ref().filter(|t| t.lane_type().is_float()) {
            let d = match result.filter(|r| self.is_active(*r)) {
                Some(result) => self.take_adjoint(result),
                None => self.zero(ty),
            };
            call_args.push(d);
        }
        if let Some(tape) = call.tape {
            call_args.push(self.avail(tape));
        }
        let out = self.ins(InstructionData::Call {
            callee: call.gradient.reverse,
            args: call_args,
            attrs: FuncAttrs::empty(),
        });
        let floats: Vec<Value> = args
            .iter()
            .copied()
            .filter(|a| self.primal.dfg.value_type(*a).lane_type().is_float())
            .collect();
        for (k, arg) in floats.iter().enumerate() {
            if !self.is_active(*arg) {
                continue;
            }
            let Some(out) = out else { break };
            let d = if floats.len() == 1 {
                out
            } else {
                self.val(InstructionData::ExtractValue { aggregate: out, indices: vec![k as u32] })
            };
            self.add_adjoint(*arg, d);
        }
        Ok(true)
    }
}
