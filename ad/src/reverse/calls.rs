//! Calls in the reverse pass.
//!
//! - Allocators and `free`: memory bookkeeping (see `memory`); shadows of heap blocks are
//!   freed where their allocation is undone.
//! - libm functions (declarations the rules table knows): the rule's contributions.
//! - Inactive calls stay primal-only: no operand carries a derivative (no active float
//!   argument, no pointer argument with a shadow) — whatever the callee computes from
//!   inactive inputs is a constant for the derivative. Known output-only library
//!   functions (`printf`, `puts`, ...) are inactive whatever their arguments, and so are
//!   functions registered in a global array `__enzyme_inactivefn` (Enzyme's convention:
//!   `void* __enzyme_inactivefn[] = {(void*)f};`).
//! - Calls to defined functions with active operands go through the callee's **split
//!   function** `__adc_split_<g>` (one per callee and activity, memoised by the
//!   `Differentiator`; see `SplitLayout`). Chosen design: one synthesized function holds
//!   both the augmented forward pass and the reverse pass of `g`, selected by a trailing
//!   `i1` phase parameter. The forward phase (`false`) runs `g` with all its effects and
//!   shadows, allocates a heap **frame** holding every value its reverse pass needs (the
//!   slots and tape headers of `crate::cache`), and returns `{result, shadow of the
//!   result, frame, zeros}`. The reverse phase (`true`) takes the same primal arguments
//!   and shadows, the adjoint of the result and the frame, runs `g`'s reverse pass
//!   (accumulating into the shadows), frees the frame and its tapes, and returns
//!   `{zeros, frame, adjoints of the active arguments}`. The caller keeps the frame
//!   pointer like any other forward value (a slot, or a loop tape inside loops), so each
//!   dynamic call gets its own frame. Recursion works because a split function refers to
//!   itself (and to other split functions) by a `FuncId` reserved before its body is
//!   built. Calls to `readnone` callees of floats use combined mode instead (see
//!   `combined`).
//! - Indirect calls with active operands go through the split function of the target
//!   the pointer holds at run time (see `indirect`).
//! - Any other call with active operands is an error, never a silently wrong derivative:
//!   an unknown external is `UnknownExternal` (naming the call site, also inside a
//!   callee).

use std::collections::HashMap;

use adc_ir::{Constant, FuncAttrs, FuncId, Inst, InstructionData, Signature, Type, Value};

use super::custom_calls::CustomForward;
use super::memory::is_allocator;
use super::Synth;
use crate::callees::is_inactive_library;
use crate::error::AdError;
use crate::request::{has_float, has_pointer, may_carry_float_bits};
use crate::request::{ArgActivity, DiffRequest, RetActivity};
use crate::rules::{self, Differentiable};

/// The return value of a split function: a struct of, in order, the primal result (when
/// the callee returns one), the shadow of a returned pointer (`RetActivity::Dup`), the
/// frame pointer, and the adjoints of the `Active` arguments in argument order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SplitLayout {
    pub ret: Option<Type>,
    pub shadow_ret: bool,
    pub adjoints: Vec<Type>,
    /// Whether the reverse phase takes the adjoint of the result (`RetActivity::Active`).
    pub takes_d_ret: bool,
}

impl SplitLayout {
    pub fn new(primal: &Signature, request: &DiffRequest) -> SplitLayout {
        SplitLayout::for_activity(primal, &request.args, request.ret)
    }

    pub fn for_activity(primal: &Signature, args: &[ArgActivity], ret: RetActivity) -> SplitLayout {
        let adjoints = primal
            .params
            .iter()
            .zip(args)
            .filter(|(_, a)| **a == ArgActivity::Active)
            .map(|(t, _)| t.clone())
            .collect();
        SplitLayout {
            ret: primal.ret.clone(),
            shadow_ret: ret == RetActivity::Dup,
            adjoints,
            takes_d_ret: ret == RetActivity::Active,
        }
    }

    pub fn ret_index(&self) -> u32 {
        0
    }

    pub fn shadow_index(&self) -> u32 {
        u32::from(self.ret.is_some())
    }

    pub fn frame_index(&self) -> u32 {
        self.shadow_index() + u32::from(self.shadow_ret)
    }

    pub fn adjoint_index(&self, k: usize) -> u32 {
        self.frame_index() + 1 + k as u32
    }

    pub fn ret_type(&self) -> Type {
        let mut fields = Vec::new();
        fields.extend(self.ret.clone());
        if self.shadow_ret {
            fields.push(Type::PTR);
        }
        fields.push(Type::PTR);
        fields.extend(self.adjoints.iter().cloned());
        Type::structure(fields, false)
    }

    /// Primal parameters each followed by its shadow, then the result's adjoint (when
    /// `takes_d_ret`), the arena to allocate the frame from (`arena`), the frame pointer
    /// and the phase flag.
    pub fn signature(&self, primal: &Signature, args: &[ArgActivity]) -> Signature {
        let mut params = Vec::new();
        for (ty, activity) in primal.params.iter().zip(args) {
            params.push(ty.clone());
            if activity.has_shadow() {
                params.push(ty.clone());
            }
        }
        if self.takes_d_ret {
            params.extend(self.ret.clone());
        }
        params.push(Type::PTR);
        params.push(Type::PTR);
        params.push(Type::I1);
        Signature::new(params, Some(self.ret_type()))
    }
}

/// A function a synthesis reserved: added by the `Differentiator` afterwards (in id
/// order, as a declaration first) and then synthesized.
#[derive(Clone, Debug)]
pub(crate) struct Reserved {
    pub request: DiffRequest,
    pub id: FuncId,
    pub signature: Signature,
    /// A combined-mode callee's plain reverse derivative (`__adc_reverse_<g>`) rather
    /// than a split function.
    pub combined: bool,
}

/// Split functions (and combined-mode derivatives) known to one synthesis: those already
/// in the module and those it reserves (ids past the end of the module, added by the
/// `Differentiator` afterwards, in order, before their bodies are synthesized).
#[derive(Debug, Default)]
pub(crate) struct SplitRegistry {
    pub known: HashMap<DiffRequest, FuncId>,
    /// Plain reverse derivatives, as memoised by the `Differentiator`.
    pub known_combined: HashMap<DiffRequest, FuncId>,
    pub pending: Vec<Reserved>,
    pub next_id: u32,
}

impl SplitRegistry {
    pub fn new(
        known: HashMap<DiffRequest, FuncId>,
        known_combined: HashMap<DiffRequest, FuncId>,
        next_id: usize,
    ) -> SplitRegistry {
        SplitRegistry { known, known_combined, pending: Vec::new(), next_id: next_id as u32 }
    }

    pub fn id_for(&mut self, request: &DiffRequest, signature: Signature) -> FuncId {
        self.reserve(request, signature, false)
    }

    pub(super) fn combined_id_for(
        &mut self,
        request: &DiffRequest,
        signature: Signature,
    ) -> FuncId {
        self.reserve(request, signature, true)
    }

    fn reserve(&mut self, request: &DiffRequest, signature: Signature, combined: bool) -> FuncId {
        let known = if combined { &mut self.known_combined } else { &mut self.known };
        if let Some(id) = known.get(request) {
            return *id;
        }
        let id = FuncId::from_u32(self.next_id);
        self.next_id += 1;
        known.insert(request.clone(), id);
        self.pending.push(Reserved { request: request.clone(), id, signature, combined });
        id
    }

    pub fn signature_of(&self, id: FuncId) -> Option<Signature> {
        self.pending.iter().find(|r| r.id == id).map(|r| r.signature.clone())
    }
}

/// Which split function a call goes through.
#[derive(Clone, Debug)]
pub(crate) enum SplitTarget {
    /// A direct call's (or a call through a known function address's) split function.
    Direct(FuncId),
    /// An indirect call: the forward value holding the split function's address (chosen
    /// by the primal target, see `indirect`) and the split function's signature.
    Indirect { split: Value, signature: Signature },
    /// Combined mode (see `combined`): the primal call stays in the forward pass and the
    /// callee's plain reverse derivative runs where the reverse pass undoes the call.
    Combined(FuncId),
}

/// A call of the primal differentiated through a split function.
#[derive(Clone, Debug)]
pub(crate) struct SplitCall {
    pub target: SplitTarget,
    pub activities: Vec<ArgActivity>,
    pub layout: SplitLayout,
    /// The frame returned by the forward phase (a forward value); none in combined mode.
    pub frame: Option<Value>,
}

impl<'a> Synth<'a> {
    pub(super) fn operand_is_active(&self, value: Value) -> bool {
        self.is_active(value) || self.shadows.contains_key(&value)
    }

    /// The request of the split function a call to a defined function with active
    /// operands goes through; `None` when the call stays primal-only or is handled
    /// elsewhere (allocators, libm, externals).
    fn split_request(&self, inst: Inst) -> Result<Option<DiffRequest>, AdError> {
        let InstructionData::Call { callee, args, .. } = &self.primal.dfg.insts[inst] else {
            return Ok(None);
        };
        let function = &self.module.functions[*callee];
        let name = function.name.as_str();
        // A call with nothing active going in still needs the callee's derivative when the
        // pointer it returns needs a shadow (a helper returning a block it allocated), when
        // its result is active (a helper reading a global shadowed from the start), or when
        // the callee writes such a global (the activity marks the call active).
        let result = self.primal.dfg.inst_result(inst);
        let active_result = result
            .is_some_and(|r| self.activity.needs_shadow(r) || self.activity.is_active_value(r));
        if function.is_declaration()
            || is_allocator(name)
            || is_inactive_library(name)
            || self.facts.registrations.is_inactive(*callee)
            || !(active_result
                || self.activity.is_active_inst(inst)
                || args.iter().any(|a| self.operand_is_active(*a)))
        {
            return Ok(None);
        }
        let (activities, ret) = self.call_activity(inst, args, &format!("@{name}"))?;
        Ok(Some(DiffRequest::reverse(*callee, activities, ret)))
    }

    /// The activity a call's operands and result give its callee: a pointer argument
    /// with a shadow is `Dup`, an active float argument `Active`, anything else `Const`;
    /// the result is `Active` when it carries a derivative and `Dup` for a returned
    /// pointer that needs a shadow. `callee` names the callee in errors.
    pub(super) fn call_activity(
        &self,
        inst: Inst,
        args: &[Value],
        callee: &str,
    ) -> Result<(Vec<ArgActivity>, RetActivity), AdError> {
        let mut activities = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            let ty = self.primal.dfg.value_type(*arg);
            let activity = if ty.is_ptr() && self.shadows.contains_key(arg) {
                ArgActivity::Dup
            } else if self.is_active(*arg) && has_float(ty) {
                if has_pointer(ty) {
                    return Err(self.unsupported(
                        inst,
                        format!(
                            "argument {index} of {callee}: an active aggregate holding pointers"
                        ),
                    ));
                }
                ArgActivity::Active
            } else if self.is_active(*arg) && !ty.is_ptr() {
                // An integer holding float bits (a `double` passed as its `i64` bits at
                // -O2): active, with its adjoint passed back as bits of the same integer
                // type (see `derivative_signature`).
                if !may_carry_float_bits(ty) || !self.float_views.contains_key(arg) {
                    return Err(self.unsupported(
                        inst,
                        format!(
                            "argument {index} of {callee}: an active {ty} whose float type is unknown"
                        ),
                    ));
                }
                ArgActivity::Active
            } else {
                ArgActivity::Const
            };
            activities.push(activity);
        }
        let ret = match self.primal.dfg.inst_result(inst) {
            Some(r) => {
                let ty = self.primal.dfg.value_type(r);
                if ty.is_ptr() && self.activity.needs_shadow(r) {
                    RetActivity::Dup
                } else if self.is_active(r) && has_float(ty) && !has_pointer(ty) {
                    RetActivity::Active
                } else if self.is_active(r)
                    && may_carry_float_bits(ty)
                    && self.float_views.contains_key(&r)
                {
                    // Float bits returned as an integer (a `bits_of(x)` helper): active,
                    // its adjoint passed in as bits of the same type.
                    RetActivity::Active
                } else if self.is_active(r) && !ty.is_ptr() {
                    return Err(self.unsupported(
                        inst,
                        format!(
                            "the result of {callee}: an active {ty} whose float type is unknown"
                        ),
                    ));
                } else {
                    RetActivity::Const
                }
            }
            None => RetActivity::Const,
        };
        Ok((activities, ret))
    }

    /// Forward pass of a call through a split function (direct, or indirect through a
    /// function pointer): calls its forward phase, binds the primal result (and the
    /// shadow of a returned pointer) and remembers the frame. Returns `false` when the
    /// call is not differentiated this way.
    pub(super) fn forward_split_call(&mut self, inst: Inst) -> Result<bool, AdError> {
        match self.forward_custom_call(inst)? {
            CustomForward::Emitted => return Ok(true),
            CustomForward::Primal => return Ok(false),
            CustomForward::NotCustom => {}
        }
        let (args, activities, layout, target) = match self.primal.dfg.insts[inst].clone() {
            InstructionData::Call { args, .. } => {
                let Some(request) = self.split_request(inst)? else { return Ok(false) };
                let callee = &self.module.functions[request.function];
                if callee.signature.varargs {
                    let what = format!("an active call of @{}, which takes variable arguments: they cannot be differentiated", callee.name);
                    return Err(self.unsupported(inst, what));
                }
                if self.plan_combined_call(inst, &request) {
                    // The primal call is cloned as it is.
                    return Ok(false);
                }
                let callee_sig = self.module.functions[request.function].signature.clone();
                let layout = SplitLayout::new(&callee_sig, &request);
                let signature = layout.signature(&callee_sig, &request.args);
                let split = self.splits.id_for(&request, signature);
                (args, request.args, layout, SplitTarget::Direct(split))
            }
            InstructionData::CallIndirect { .. } => {
                let Some(plan) = self.plan_indirect_call(inst)? else { return Ok(false) };
                plan
            }
            _ => return Ok(false),
        };
        if args.iter().any(|a| !self.vmap.contains_key(a)) {
            return Err(self.unsupported(inst, "an operand that does not dominate its use"));
        }
        let mut call_args = Vec::new();
        for (arg, activity) in args.iter().zip(&activities) {
            call_args.push(self.fwd(*arg));
            if activity.has_shadow() {
                call_args.push(self.shadows[arg]);
            }
        }
        if layout.takes_d_ret {
            let ty = layout.ret.clone().expect("an active result has a type");
            call_args.push(self.zero(&ty));
        }
        call_args.push(self.arena_for_calls());
        call_args.push(self.constant(Type::PTR, Constant::Int(0)));
        call_args.push(self.iconst(Type::I1, 0));
        let out = self.val(self.split_call_data(&target, call_args));
        if let Some(result) = self.primal.dfg.inst_result(inst) {
            let value = self.extract(out, layout.ret_index());
            if let Some(name) = self.primal.dfg.value_name(result) {
                self.f.dfg.set_value_name(value, name);
            }
            self.vmap.insert(result, value);
            if layout.shadow_ret {
                let shadow = self.extract(out, layout.shadow_index());
                self.set_shadow(result, shadow);
            }
        }
        let frame = Some(self.extract(out, layout.frame_index()));
        self.split_calls.insert(inst, SplitCall { target, activities, layout, frame });
        Ok(true)
    }

    /// The call of a split function (either phase); `target` holds forward values, so the
    /// reverse pass passes one made available with `avail`.
    pub(super) fn split_call_data(
        &self,
        target: &SplitTarget,
        args: Vec<Value>,
    ) -> InstructionData {
        match target {
            SplitTarget::Direct(split) => {
                InstructionData::Call { callee: *split, args, attrs: FuncAttrs::empty() }
            }
            SplitTarget::Indirect { split, signature } => InstructionData::CallIndirect {
                sig: Box::new(signature.clone()),
                callee: *split,
                args,
                attrs: FuncAttrs::empty(),
            },
            SplitTarget::Combined(derivative) => {
                InstructionData::Call { callee: *derivative, args, attrs: FuncAttrs::empty() }
            }
        }
    }

    pub(super) fn extract(&mut self, aggregate: Value, index: u32) -> Value {
        self.val(InstructionData::ExtractValue { aggregate, indices: vec![index] })
    }

    /// Reverse pass of a call through a split function: its reverse phase with the
    /// arguments, shadows and frame of this dynamic call, then the argument adjoints.
    fn reverse_split_call(&mut self, inst: Inst, call: SplitCall) {
        if let SplitTarget::Combined(derivative) = call.target {
            return self.reverse_combined_call(inst, derivative, &call.activities);
        }
        let args = match &self.primal.dfg.insts[inst] {
            InstructionData::Call { args, .. } | InstructionData::CallIndirect { args, .. } => {
                args.clone()
            }
            _ => return,
        };
        let mut call_args = Vec::new();
        for (arg, activity) in args.iter().zip(&call.activities) {
            call_args.push(self.primal_in_reverse(*arg));
            if activity.has_shadow() {
                let shadow = self.shadow_in_reverse(*arg).expect("dup arguments have shadows");
                call_args.push(shadow);
            }
        }
        if call.layout.takes_d_ret {
            let result = self.primal.dfg.inst_result(inst).expect("an active result exists");
            let d = self.take_adjoint(result);
            let d = self.adjoint_as_bits(result, d);
            call_args.push(d);
        }
        let frame = call.frame.expect("split calls have frames");
        let frame = self.avail(frame);
        // The reverse phase finds everything in its frame.
        call_args.push(self.constant(Type::PTR, Constant::Int(0)));
        call_args.push(frame);
        call_args.push(self.iconst(Type::I1, 1));
        let target = match call.target {
            SplitTarget::Indirect { split, signature } => {
                SplitTarget::Indirect { split: self.avail(split), signature }
            }
            direct => direct,
        };
        let out = self.val(self.split_call_data(&target, call_args));
        let active = args.iter().zip(&call.activities).filter(|(_, a)| **a == ArgActivity::Active);
        for (k, (arg, _)) in active.enumerate() {
            let d = self.extract(out, call.layout.adjoint_index(k));
            let d = self.adjoint_from_bits(*arg, d);
            self.add_adjoint(*arg, d);
        }
    }

    pub(super) fn reverse_call(&mut self, inst: Inst) -> Result<(), AdError> {
        if self.reverse_custom_call(inst)? {
            return Ok(());
        }
        if let Some(call) = self.split_calls.get(&inst).cloned() {
            self.reverse_split_call(inst, call);
            return Ok(());
        }
        let data = self.primal.dfg.insts[inst].clone();
        let result = self.primal.dfg.inst_result(inst);
        let result_active = result.is_some_and(|r| self.is_active(r));
        let (callee, args) = match &data {
            InstructionData::Call { callee, args, .. } => (*callee, args.clone()),
            InstructionData::CallIndirect { args, .. } => {
                if args.iter().any(|a| self.operand_is_active(*a)) {
                    return Err(self.unsupported(
                        inst,
                        "an indirect call with active arguments that was not split in the forward pass",
                    ));
                }
                // An allocation through a function pointer frees its shadow here.
                if self.heap_shadows.contains_key(&inst) {
                    self.reverse_heap(inst);
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let function = &self.module.functions[callee];
        let name = function.name.clone();
        if is_allocator(&name) {
            return self.reverse_memory(inst);
        }
        if is_inactive_library(&name) || self.facts.registrations.is_inactive(callee) {
            return Ok(());
        }
        let active_args = args.iter().any(|a| self.operand_is_active(*a));
        if !active_args {
            return Ok(());
        }
        if function.is_declaration() {
            if let Err(e) = rules::rule_for(Differentiable::Call(&name)) {
                return Err(self.error(inst, e.into()));
            }
            if !result_active {
                return Ok(());
            }
            let result = result.expect("active results exist");
            let d = self.take_adjoint(result);
            return self.apply_rule(inst, Differentiable::Call(&name), &args, result, d);
        }
        Err(self.unsupported(
            inst,
            format!(
                "call to @{name}, which carries derivatives, was not split in the forward pass"
            ),
        ))
    }
}
