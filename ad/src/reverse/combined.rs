//! Combined mode for calls: a callee whose reverse pass can run right where the caller's
//! reverse pass undoes the call, with no frame kept between the two.
//!
//! A call through a split function keeps the callee's frame (a heap block) from the
//! forward phase to the reverse phase. When the callee is `readnone` — it reads and
//! writes no memory the caller can see, so its result and its derivative depend only on
//! its arguments — that state can be recomputed instead: the forward pass keeps the
//! primal call as it is, and the reverse pass calls the callee's plain reverse derivative
//! `__adc_reverse_<g>` (forward and reverse in one activation, its caches on its own stack
//! and tapes) with the same arguments, which the caller's cache planner makes available
//! like any other forward value.
//!
//! Why this is the split call's derivative: the plain derivative seeds the result's
//! adjoint with 1.0, while the split function takes it as a parameter `d`. A reverse pass
//! is linear in its seed (every adjoint is a sum of products of the seed with partial
//! derivatives that depend on primal values only), so the argument adjoints for the seed
//! `d` are `d` times those for 1.0; the caller multiplies. Readnone callees have no
//! shadows to update, so nothing else differs. The conditions, checked per call:
//!
//! - the callee is defined and `readnone` (inferred by `infer-effects`; code
//!   differentiated before the pipelines has no such facts and keeps split calls);
//! - its result is an active `f32` or `f64`, and every active argument has that same
//!   type (so the multiplication is one `fmul` per argument); no argument has a shadow.
//!
//! The cost: the callee's forward computation runs twice (once in the caller's forward
//! pass, once inside its derivative), against a `malloc`/`free` of a frame per dynamic
//! call. In a recursion `f(n)` calling `f(n/2)` the recomputation nests: `O(log² n)`
//! primal work instead of `O(log n)`.

use adc_ir::{BinaryOp, FuncAttrs, FuncId, Inst, InstructionData, Signature, Type};

use super::calls::{SplitCall, SplitLayout, SplitTarget};
use super::Synth;
use crate::request::{ArgActivity, DiffRequest, RetActivity};

impl<'a> Synth<'a> {
    /// Whether the call `inst` with the callee request `request` is differentiated in
    /// combined mode; if so, records it for the reverse pass (the forward pass clones the
    /// primal call).
    pub(super) fn plan_combined_call(&mut self, inst: Inst, request: &DiffRequest) -> bool {
        let callee = &self.module.functions[request.function];
        let Some(ret) = callee.signature.ret.clone() else { return false };
        let params = &callee.signature.params;
        let active: Vec<&Type> = params
            .iter()
            .zip(&request.args)
            .filter(|(_, a)| **a == ArgActivity::Active)
            .map(|(t, _)| t)
            .collect();
        let eligible = !callee.is_declaration()
            && callee.attrs.contains(FuncAttrs::READNONE)
            && request.ret == RetActivity::Active
            && matches!(ret, Type::F32 | Type::F64)
            && request.args.iter().all(|a| matches!(a, ArgActivity::Active | ArgActivity::Const))
            && !active.is_empty()
            && active.iter().all(|t| **t == ret);
        if !eligible {
            return false;
        }
        let adjoints = match active.len() {
            1 => ret.clone(),
            n => Type::structure(vec![ret.clone(); n], false),
        };
        let signature = Signature::new(params.clone(), Some(adjoints));
        let layout = SplitLayout::new(&callee.signature, request);
        let derivative = self.splits.combined_id_for(request, signature);
        let call = SplitCall {
            target: SplitTarget::Combined(derivative),
            activities: request.args.clone(),
            layout,
            frame: None,
        };
        self.split_calls.insert(inst, call);
        true
    }

    /// The reverse of a combined-mode call: the callee's derivative with the call's
    /// arguments, its adjoints scaled by the result's adjoint.
    pub(super) fn reverse_combined_call(
        &mut self,
        inst: Inst,
        derivative: FuncId,
        activities: &[ArgActivity],
    ) {
        let InstructionData::Call { args, .. } = self.primal.dfg.insts[inst].clone() else {
            return;
        };
        let result = self.primal.dfg.inst_result(inst).expect("combined calls return");
        let d = self.take_adjoint(result);
        let call_args = args.iter().map(|a| self.primal_in_reverse(*a)).collect();
        let out = self.val(self.split_call_data(&SplitTarget::Combined(derivative), call_args));
        let active: Vec<_> =
            args.iter().zip(activities).filter(|(_, a)| **a == ArgActivity::Active).collect();
        let several = active.len() > 1;
        for (k, (arg, _)) in active.into_iter().enumerate() {
            let adjoint = if several { self.extract(out, k as u32) } else { out };
            let scaled = self.binary(BinaryOp::Fmul, adjoint, d);
            self.add_adjoint(*arg, scaled);
        }
    }
}
