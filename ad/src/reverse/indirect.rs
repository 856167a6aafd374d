//! Indirect calls in reverse mode: a call through a function pointer with active
//! operands goes through the split function (see `calls`) of whichever function the
//! pointer holds at run time, for the activity of the call site.
//!
//! Function-pointer shadows. The shadow of a function pointer is what the derivative
//! calls instead of the target: the target's split function for the call's activity.
//! adc computes it from the primal pointer, not from shadow memory:
//!
//! - a pointer that is a known function address (`const ptr @f`, after constant
//!   propagation the common case) calls `@f`'s split function directly;
//! - any other pointer (an argument, a load from an array or a struct of function
//!   pointers, a `select`, a block parameter) is compared with the functions whose address
//!   the module takes and that have the call's type (the **candidates**): a `select` chain
//!   picks the split function of the matching candidate. The choice is a pure forward
//!   value, recomputed or cached for the reverse phase like any other.
//!
//! Reading the shadow from shadow memory instead (Enzyme's way) would make the gradient
//! depend on what the caller wrote into its shadow buffers: a struct of parameters passed
//! with `enzyme_dup` holds in its shadow whatever the caller put there (zeros, usually),
//! not a shadow function. Dispatching on the primal pointer needs nothing from the caller.
//! So that stores of function pointers into shadowed memory (a struct with a function
//! pointer and active fields) mirror something, a function address is its own shadow.
//!
//! Every candidate gets a split function for every activity it is called with (they are
//! synthesized whether or not that call happens at run time, so a candidate that cannot be
//! differentiated is an error naming it). An indirect call with active operands and no
//! candidate of its type is an error: its target cannot be known. A target that is not a
//! candidate (a function of another object file) reaches a null split function: the
//! derivative traps instead of returning a wrong gradient.

use adc_ir::{Constant, FuncId, Inst, InstFlags, InstructionData, IntCC, Signature, Type, Value};

use super::calls::{SplitLayout, SplitTarget};
use super::Synth;
use crate::callees::{indirect_call_candidates, same_type};
use crate::error::AdError;
use crate::request::{ArgActivity, DiffRequest};

/// What the forward pass needs to call a split function for one indirect call: the
/// primal arguments, their activity, the split function's layout and the target.
pub(super) type SplitPlan = (Vec<Value>, Vec<ArgActivity>, SplitLayout, SplitTarget);

impl<'a> Synth<'a> {
    /// The function whose address a primal value is (`const ptr @f`), if it is one.
    pub(super) fn function_address(&self, value: Value) -> Option<FuncId> {
        self.primal.dfg.function_address(value)
    }

    /// The split call of an indirect call with active operands (`None` when no operand is
    /// active: the call stays primal-only). Emits the choice of the split function at the
    /// current forward position.
    pub(super) fn plan_indirect_call(&mut self, inst: Inst) -> Result<Option<SplitPlan>, AdError> {
        let InstructionData::CallIndirect { sig, callee, args, .. } =
            self.primal.dfg.insts[inst].clone()
        else {
            return Ok(None);
        };
        // An active result, or an active call, with nothing active going in: a target
        // reads or writes a global shadowed from the start. (A returned pointer that needs
        // a shadow is an allocation's, see `heap`.)
        let result = self.primal.dfg.inst_result(inst);
        let active_result = result
            .is_some_and(|r| self.activity.is_active_value(r) && !self.activity.needs_shadow(r));
        let writes_global = self.activity.is_active_inst(inst)
            && !result.is_some_and(|r| self.activity.needs_shadow(r));
        if !active_result && !writes_global && !args.iter().any(|a| self.operand_is_active(*a)) {
            return Ok(None);
        }
        if sig.varargs {
            return Err(self.unsupported(inst, "an indirect call of a variadic function type"));
        }
        let (activities, ret) = self.call_activity(inst, &args, "the indirect call")?;
        let layout = SplitLayout::for_activity(&sig, &activities, ret);
        let signature = layout.signature(&sig, &activities);
        let split_of = |synth: &mut Self, f: FuncId| {
            let request = DiffRequest::reverse(f, activities.clone(), ret);
            synth.splits.id_for(&request, signature.clone())
        };
        if let Some(f) = self.function_address(callee) {
            let function = &self.module.functions[f];
            let problem = if function.is_declaration() {
                Some("a function without a body")
            } else if !same_type(&function.signature, &sig) {
                Some("a function of another type")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(self.unsupported(
                    inst,
                    format!("an indirect call of @{} ({problem})", function.name),
                ));
            }
            let split = split_of(self, f);
            return Ok(Some((args, activities, layout, SplitTarget::Direct(split))));
        }
        let candidates = indirect_call_candidates(self.module, &sig);
        if candidates.is_empty() {
            return Err(self.unsupported(
                inst,
                format!(
                    "an indirect call whose target cannot be known: no function of type {} with a body has its address taken in the module",
                    describe(&sig)
                ),
            ));
        }
        if !self.vmap.contains_key(&callee) {
            return Err(self.unsupported(inst, "an operand that does not dominate its use"));
        }
        let target = self.fwd(callee);
        let mut choice = self.constant(Type::PTR, Constant::Int(0));
        for candidate in candidates.into_iter().rev() {
            let split = split_of(self, candidate);
            let address = self.constant(Type::PTR, Constant::function(candidate));
            let is_it =
                self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [target, address] });
            let split = self.constant(Type::PTR, Constant::function(split));
            choice = self.val(InstructionData::Select {
                flags: InstFlags::empty(),
                args: [is_it, split, choice],
            });
        }
        let target = SplitTarget::Indirect { split: choice, signature };
        Ok(Some((args, activities, layout, target)))
    }
}

fn describe(sig: &Signature) -> String {
    let params: Vec<String> = sig.params.iter().map(|t| t.to_string()).collect();
    let ret = sig.ret.as_ref().map_or("void".to_string(), |t| t.to_string());
    format!("({}) -> {ret}", params.join(", "))
}
