//! Forward mode for calls. A libm call gets its tangent from the rule table; an
//! integer-valued libm call (`lround`) stays as it is; the C heap functions get shadow
//! blocks next to the primal's (`malloc`/`calloc` a zeroed block of the same size,
//! `realloc` resizes the shadow too, `free` frees both), and so do the tape buffers a
//! reverse derivative keeps across calls (forward over reverse: the shadow of
//! `__adc_tape_take` is a zeroed `malloc`, `__adc_tape_give` frees it); a call with active operands to a
//! defined function calls that function's forward derivative, requested from the
//! [`super::CalleeRegistry`] for the call's activity (an operand with a shadow is
//! duplicated, others are constant) and width; an indirect one calls the derivative of
//! its target (chosen at run time among reverse mode's candidates when the pointer is not
//! a known address). Anything else with an active operand is an error naming the callee.

use adc_ir::{
    Allocation, Constant, FuncAttrs, FuncId, HeapFunction, Inst, InstructionData, IntCC, Type,
    Value,
};

use crate::rules::{self, Differentiable};
use crate::{AdError, AdErrorKind, ArgActivity, DiffMode, DiffRequest, RetActivity, Site};

use super::{derivative_signature, Synth};
use crate::request::{carries_derivative, has_float, has_pointer, may_carry_float_bits};

/// What a call with active operands calls the forward derivative of.
enum CallTarget {
    Direct(FuncId),
    /// Through `pointer`, whose run-time value is one of `candidates`.
    Indirect {
        pointer: Value,
        candidates: Vec<FuncId>,
    },
}

/// The heap functions whose blocks get shadow blocks: the shadow of a block comes from
/// the same function called with the same operands.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum HeapCall {
    /// An allocator returning its block (`malloc`, `calloc`, `aligned_alloc`, `new`).
    Allocate(Allocation),
    Realloc,
    /// `free` or an `operator delete`.
    Release,
    /// `__adc_tape_take(slot, bytes)` of a reverse derivative (`crate::reverse::tape_reuse`):
    /// its shadow is a zeroed `malloc(bytes)`, not kept across calls.
    TapeTake,
    /// `__adc_tape_give(slot, data)`: the shadow of `data` is freed.
    TapeGive,
}

impl HeapCall {
    fn from_name(name: &str) -> Option<HeapCall> {
        match HeapFunction::of(name)? {
            HeapFunction::Allocate(a) if a.returns_block() => Some(HeapCall::Allocate(a)),
            // `posix_memalign` stores its block: its shadow would go to the slot's shadow.
            HeapFunction::Allocate(_) => None,
            HeapFunction::Reallocate => Some(HeapCall::Realloc),
            HeapFunction::Release => Some(HeapCall::Release),
        }
    }

    /// The tape-reuse helpers a reverse derivative calls (forward over reverse).
    fn tape_helper(name: &str) -> Option<HeapCall> {
        match name {
            crate::callees::TAPE_TAKE => Some(HeapCall::TapeTake),
            crate::callees::TAPE_GIVE => Some(HeapCall::TapeGive),
            _ => None,
        }
    }
}

impl Synth<'_> {
    pub(crate) fn translate_call(&mut self, inst: Inst) -> Result<(), AdError> {
        let data = self.primal.inst(inst).clone();
        let callee_id = match &data {
            InstructionData::Call { callee, .. } => Some(*callee),
            _ => None,
        };
        let callee = callee_id.and_then(|id| self.module.functions.get(id));
        if let Some(id) = callee_id {
            // A registered forward derivative (`crate::custom`) replaces the rules.
            let any_active = data.args().iter().any(|a| self.carries(*a));
            let registered = self.registrations.derivative(id).filter(|_| any_active).cloned();
            if let Some(derivative) = registered {
                return self.translate_custom_call(inst, &derivative);
            }
            if let Some(library) = self.registrations.like(id).map(str::to_string) {
                return self.translate_function_like(inst, &library);
            }
        }
        let callee_name = callee.map(|f| f.name.clone());
        if callee_name.as_deref().is_some_and(|n| rules::lookup_call(n).is_some()) {
            return self.translate_arith_call(inst, &data);
        }
        // `lround(x)` and friends: an integer result of floats, nothing written to
        // memory: the derivative is zero wherever it exists, the call stays as it is.
        let integer_result_only = callee.is_some_and(|f| {
            rules::non_differentiable_call(&f.name).is_some()
                && f.signature.ret.as_ref().is_some_and(|t| !carries_derivative(t))
                && !f.signature.params.iter().any(has_pointer)
        });
        if integer_result_only {
            self.copy_primal(inst);
            return Ok(());
        }
        let heap = callee.and_then(|f| match f.is_declaration() {
            true => HeapCall::from_name(&f.name),
            false => HeapCall::tape_helper(&f.name),
        });
        if let Some(heap) = heap {
            return self.translate_heap_call(inst, heap);
        }
        let args = data.args();
        let Some(&first) = args.iter().find(|a| self.has_shadow(**a)) else {
            // Nothing active goes in, but a returned pointer may need its shadow (a helper
            // returning a block it allocated): the callee's derivative makes it.
            let shadowed_result =
                self.primal.dfg.inst_result(inst).is_some_and(|r| self.wants_shadow(r));
            if let (true, Some(id), Some(f)) = (shadowed_result, callee_id, callee) {
                if !f.is_declaration() {
                    return self.call_derivative(inst, CallTarget::Direct(id), &args);
                }
            }
            if shadowed_result && callee_id.is_none() {
                return self.translate_indirect_allocation(inst);
            }
            self.copy_primal(inst);
            return Ok(());
        };
        match (callee_id, callee) {
            (Some(id), Some(f)) if !f.is_declaration() => {
                self.call_derivative(inst, CallTarget::Direct(id), &args)
            }
            (None, _) if args.iter().any(|a| self.carries(*a)) => {
                let (target, call_args) = self.indirect_target(inst)?;
                self.call_derivative(inst, target, &call_args)
            }
            // Pointers into shadowed memory that a library function only reads, and
            // integers: no derivative flows through the call.
            _ if !args.iter().any(|a| self.carries(*a)) => {
                self.copy_primal(inst);
                Ok(())
            }
            (_, Some(f)) => {
                let operand = self.describe_value(first);
                let kind = match rules::non_differentiable_call(&f.name) {
                    Some(reason) => AdErrorKind::Unsupported {
                        what: format!("the call to @{} on the active {operand}: {reason}", f.name),
                    },
                    None => AdErrorKind::UnknownExternal { callee: f.name.clone() },
                };
                Err(self.error(inst, kind))
            }
            // An id that names no function (every indirect call with active operands
            // went to `indirect_target` above).
            _ => Err(self.unsupported(inst, "a call of a function that is not in the module")),
        }
    }

    /// An indirect call whose possible targets are all C allocators (see
    /// `crate::callees::indirect_allocators`: a `malloc` kept in a function pointer)
    /// returning a block that needs a shadow: the shadow comes from calling the same
    /// pointer again, zeroed, as for a direct allocator call.
    fn translate_indirect_allocation(&mut self, inst: Inst) -> Result<(), AdError> {
        let InstructionData::CallIndirect { sig, callee, args, attrs } =
            self.primal.inst(inst).clone()
        else {
            return Err(self.unsupported(inst, "a call without a callee"));
        };
        let Some((allocation, _)) = crate::callees::indirect_allocators(self.module, &sig) else {
            return Err(self.unsupported(
                inst,
                "a shadow for the pointer an indirect call returns (only calls whose possible \
                 targets are all C allocators, such as a `malloc` kept in a function pointer, \
                 get one)",
            ));
        };
        self.copy_primal(inst);
        let result = self.primal.dfg.inst_result(inst).expect("an allocator returns its block");
        for lane in self.lanes() {
            self.in_lane(lane, |s| {
                let pointer = s.value(callee);
                let shadow_args: Vec<Value> = args.iter().map(|a| s.value(*a)).collect();
                let len = shadow_args[allocation.bytes];
                let data = InstructionData::CallIndirect {
                    sig: sig.clone(),
                    callee: pointer,
                    args: shadow_args,
                    attrs,
                };
                let shadow = s.b.ins(data).1.expect("an allocator returns its block");
                if !allocation.zeroed() {
                    let byte = s.b.constant(Type::I8, Constant::Int(0));
                    s.b.ins(InstructionData::MemSet { dst: shadow, byte, len, volatile: false });
                }
                s.record_shadow(result, shadow);
            });
        }
        Ok(())
    }

    /// The forward derivative an indirect call with active operands calls: that of the
    /// function the pointer is when it is a known address, else one chosen at run time
    /// among the functions of the call's type whose address the module takes (the
    /// candidates of reverse mode, `crate::callees::indirect_call_candidates`); a target
    /// that is none of them selects null, so the derivative traps instead of returning a
    /// wrong tangent.
    fn indirect_target(&mut self, inst: Inst) -> Result<(CallTarget, Vec<Value>), AdError> {
        let InstructionData::CallIndirect { sig, callee, args, .. } =
            self.primal.inst(inst).clone()
        else {
            return Err(self.unsupported(inst, "a call without a callee"));
        };
        if sig.varargs {
            return Err(self.unsupported(inst, "an indirect call of a variadic function type"));
        }
        let same_type = |f: &adc_ir::Function| {
            f.signature.params == sig.params && f.signature.ret == sig.ret && !f.signature.varargs
        };
        if let Some(f) = self.primal.dfg.function_address(callee) {
            let function = &self.module.functions[f];
            if !function.is_declaration() && same_type(function) {
                return Ok((CallTarget::Direct(f), args));
            }
            let name = function.name.clone();
            return Err(self.unsupported(
                inst,
                &format!("an indirect call of @{name} (a declaration, or another type)"),
            ));
        }
        let candidates = crate::callees::indirect_call_candidates(self.module, &sig);
        if candidates.is_empty() {
            return Err(self.unsupported(
                inst,
                "an indirect call whose target cannot be known: no function of its type with \
                 a body has its address taken in the module",
            ));
        }
        Ok((CallTarget::Indirect { pointer: callee, candidates }, args))
    }

    /// A call of a defined function with active operands: a call of its forward
    /// derivative for this call's activity, which returns `{primal, tangents...}` when
    /// the result is active.
    fn call_derivative(
        &mut self,
        inst: Inst,
        target: CallTarget,
        args: &[Value],
    ) -> Result<(), AdError> {
        let callee = match &target {
            CallTarget::Direct(f) => *f,
            CallTarget::Indirect { candidates, .. } => candidates[0],
        };
        let activities: Vec<ArgActivity> = args
            .iter()
            .map(|a| if self.has_shadow(*a) { ArgActivity::Dup } else { ArgActivity::Const })
            .collect();
        let primal_result = self.primal.dfg.inst_result(inst);
        let ret = match primal_result {
            Some(r) if self.wants_shadow(r) && has_pointer(&self.primal_type(r)) => {
                if !self.primal_type(r).is_ptr() {
                    return Err(self.unsupported(
                        inst,
                        &format!(
                            "the call to @{}: it returns an aggregate holding pointers into \
                             memory whose derivative is tracked",
                            self.module.functions[callee].name
                        ),
                    ));
                }
                RetActivity::Dup
            }
            Some(r) if self.wants_shadow(r) && has_float(&self.primal_type(r)) => RetActivity::Dup,
            // Float bits returned as an integer: the tangent travels as bits too, never
            // dropped (the activity analysis keeps integers it proves plain inactive).
            Some(r) if self.wants_shadow(r) && may_carry_float_bits(&self.primal_type(r)) => {
                RetActivity::Dup
            }
            _ => RetActivity::Const,
        };
        let request = DiffRequest {
            function: callee,
            mode: DiffMode::Forward,
            args: activities.clone(),
            ret,
            width: self.request.width,
        };
        let site = Site::inst(self.module, self.primal, inst);
        // Candidates have the call's type, so their derivatives share one signature.
        let signature = derivative_signature(self.module, &request, &site)?;
        let derivative_of = |s: &mut Self, function: FuncId| {
            let request = DiffRequest { function, ..request.clone() };
            s.registry.borrow_mut().id_for(&request, signature.clone())
        };
        let mut call_args = Vec::new();
        for (arg, activity) in args.iter().zip(&activities) {
            call_args.push(self.value(*arg));
            if activity.has_shadow() {
                for lane in self.lanes() {
                    call_args.push(self.in_lane(lane, |s| s.shadow(*arg, inst))?);
                }
            }
        }
        let (new_inst, result) = match target {
            CallTarget::Direct(f) => {
                let derivative = derivative_of(self, f);
                self.b.call(derivative, call_args)
            }
            CallTarget::Indirect { pointer, candidates } => {
                let pointer = self.value(pointer);
                let mut choice = self.b.constant(Type::PTR, Constant::Int(0));
                for candidate in candidates.into_iter().rev() {
                    let derivative = derivative_of(self, candidate);
                    let address = self.b.constant(Type::PTR, Constant::function(candidate));
                    let is_it = self.b.icmp(IntCC::Eq, pointer, address);
                    let derivative = self.b.constant(Type::PTR, Constant::function(derivative));
                    choice = self.b.select(is_it, derivative, choice);
                }
                self.b.ins(InstructionData::CallIndirect {
                    sig: Box::new(signature.clone()),
                    callee: choice,
                    args: call_args,
                    attrs: FuncAttrs::empty(),
                })
            }
        };
        if let Some(loc) = self.primal.dfg.debug_locs.get(inst).cloned().flatten() {
            self.b.func.dfg.debug_locs[new_inst] = Some(loc);
        }
        let (Some(primal_result), Some(result)) = (primal_result, result) else { return Ok(()) };
        if ret == RetActivity::Const {
            self.values.insert(primal_result, result);
            return Ok(());
        }
        let primal = self.extract_field(result, 0);
        self.values.insert(primal_result, primal);
        for lane in self.lanes() {
            let tangent = self.extract_field(result, 1 + lane as u32);
            self.in_lane(lane, |s| s.record_shadow(primal_result, tangent));
        }
        Ok(())
    }

    fn extract_field(&mut self, aggregate: Value, index: u32) -> Value {
        let data = InstructionData::ExtractValue { aggregate, indices: vec![index] };
        self.b.ins(data).1.expect("extractvalue has a result")
    }

    /// `malloc`, `calloc`, `realloc`, `free`: the primal call, and the same on the shadow
    /// block of every lane when the block carries derivatives.
    fn translate_heap_call(&mut self, inst: Inst, heap: HeapCall) -> Result<(), AdError> {
        let data = self.primal.inst(inst).clone();
        let InstructionData::Call { callee, args, attrs } = data else {
            return Err(
                self.unsupported(inst, "a heap call without a direct callee (a bug in adc)")
            );
        };
        let known = HeapFunction::of(&self.module.functions[callee].name);
        if known.is_some_and(|f| args.len() < f.min_operands()) {
            return Err(self.unsupported(inst, "a heap function called with too few operands"));
        }
        self.copy_primal(inst);
        let primal_result = self.primal.dfg.inst_result(inst);
        let shadowed = match heap {
            HeapCall::Release | HeapCall::Realloc => self.has_shadow(args[0]),
            HeapCall::TapeGive => self.has_shadow(args[1]),
            HeapCall::Allocate(_) | HeapCall::TapeTake => {
                primal_result.is_some_and(|r| self.wants_shadow(r))
            }
        };
        if matches!(heap, HeapCall::TapeTake | HeapCall::TapeGive) {
            return match shadowed {
                true => self.shadow_tape_buffer(inst, heap, &args),
                false => Ok(()),
            };
        }
        if !shadowed {
            if heap == HeapCall::Realloc && primal_result.is_some_and(|r| self.wants_shadow(r)) {
                return Err(self.unsupported(
                    inst,
                    "a realloc of a block without shadow memory into one whose derivative is \
                     tracked",
                ));
            }
            return Ok(());
        }
        for lane in self.lanes() {
            self.in_lane(lane, |s| {
                let mut shadow_args: Vec<Value> = args.iter().map(|a| s.value(*a)).collect();
                if matches!(heap, HeapCall::Release | HeapCall::Realloc) {
                    shadow_args[0] = s.shadow(args[0], inst)?;
                }
                let unzeroed_len = match heap {
                    HeapCall::Allocate(a) if !a.zeroed() => Some(shadow_args[a.bytes]),
                    _ => None,
                };
                let data = InstructionData::Call { callee, args: shadow_args, attrs };
                let shadow = s.b.ins(data).1;
                if let (Some(r), Some(shadow)) = (primal_result, shadow) {
                    if let Some(len) = unzeroed_len {
                        // Tangents of memory the primal has not written yet read as zero.
                        let byte = s.b.constant(Type::I8, Constant::Int(0));
                        s.b.ins(InstructionData::MemSet {
                            dst: shadow,
                            byte,
                            len,
                            volatile: false,
                        });
                    }
                    s.record_shadow(r, shadow);
                }
                Ok::<(), AdError>(())
            })?;
        }
        Ok(())
    }

    /// The shadow of a kept tape buffer is an ordinary heap block: a zeroed
    /// `malloc(bytes)` for `__adc_tape_take(slot, bytes)`, `free(shadow)` for
    /// `__adc_tape_give(slot, data)`.
    fn shadow_tape_buffer(
        &mut self,
        inst: Inst,
        heap: HeapCall,
        args: &[Value],
    ) -> Result<(), AdError> {
        let name = if heap == HeapCall::TapeTake { "malloc" } else { "free" };
        let Some(callee) = self.module.function_by_name(name) else {
            return Err(self.unsupported(
                inst,
                &format!("a tape buffer's shadow without a declaration of @{name}"),
            ));
        };
        let primal_result = self.primal.dfg.inst_result(inst);
        for lane in self.lanes() {
            self.in_lane(lane, |s| {
                if heap == HeapCall::TapeGive {
                    let shadow = s.shadow(args[1], inst)?;
                    let free = InstructionData::Call {
                        callee,
                        args: vec![shadow],
                        attrs: adc_ir::FuncAttrs::empty(),
                    };
                    s.b.ins(free);
                    return Ok(());
                }
                let len = s.value(args[1]);
                let malloc = InstructionData::Call {
                    callee,
                    args: vec![len],
                    attrs: adc_ir::FuncAttrs::empty(),
                };
                let (Some(r), Some(shadow)) = (primal_result, s.b.ins(malloc).1) else {
                    return Ok(());
                };
                let byte = s.b.constant(Type::I8, Constant::Int(0));
                s.b.ins(InstructionData::MemSet { dst: shadow, byte, len, volatile: false });
                s.record_shadow(r, shadow);
                Ok::<(), AdError>(())
            })?;
        }
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
        for lane in self.lanes() {
            self.in_lane(lane, |s| {
                let tangent = s.rule_tangent(inst, Differentiable::Call(&name), args, result)?;
                s.record_shadow(primal_result, tangent);
                Ok::<(), AdError>(())
            })?;
        }
        Ok(())
    }
}
