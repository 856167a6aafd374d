//! Forward-mode synthesis (`__enzyme_fwddiff`): one new function that runs the primal and
//! propagates tangents alongside it in a single pass.
//!
//! The derivative is a copy of the primal's reachable blocks, visited in reverse
//! post-order so that every operand is translated before its uses. Next to every active
//! primal value it holds a *shadow*: for a float (or vector/aggregate of floats) its
//! tangent, for a pointer a shadow pointer whose pointee holds the tangents of the
//! primal's pointee, for an integer loaded from shadow memory the bits of the shadow
//! memory (when the type analysis says they may hold a float's bits). Active block
//! parameters get a shadow block parameter (after all the primal ones), and every branch
//! passes the shadows of its arguments (zero for inactive floats).
//!
//! Which values get a shadow is decided by the activity analysis ([`Activity`], on the
//! type analysis): active values get one, inactive ones read as zero where a shadow is
//! needed. Invariants the synthesis keeps, so that a wrong tangent is never produced
//! silently: a pointer that the analysis says needs a shadow but that has none here (a
//! global, a heap block) is an [`AdError`], as is an active value passed to a call or an
//! atomic, or integer arithmetic on bits that may hold a float.
//!
//! The instruction families live in `arith.rs` (arithmetic, casts, selects, lanes and
//! aggregates, libm calls), `memory.rs` (allocas, loads, stores, pointer arithmetic,
//! memcpy/memset) and `control.rs` (branches, returns, other calls).

mod arith;
mod control;
mod custom_calls;
mod memory;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use adc_ir::builder::FunctionBuilder;
use adc_ir::dominance::DomTree;
use adc_ir::{
    Block, Constant, FuncId, Function, Inst, InstructionData, Linkage, Module, Signature, Type,
    Value, ValueDef,
};

use crate::activity::Activity;
use crate::rules::{self, Differentiable};
use crate::typetree::TypeAnalysis;
use crate::{AdError, AdErrorKind, ArgActivity, DiffMode, DiffRequest, RetActivity, Site};

/// Synthesizes the forward-mode derivative of `request.function` as a new internal
/// function named `name` and returns its id.
///
/// Signature (see [`crate::request`]): each primal parameter, followed by its shadow when
/// its activity is `Dup`/`DupNoNeed` (the tangent for a float, a shadow pointer for a
/// pointer); the result is the primal's for `RetActivity::Const`, the tangent of the
/// result for `Active`, and `{primal, tangent}` for `Dup`.
pub fn synthesize_forward(
    module: &mut Module,
    request: &DiffRequest,
    name: &str,
) -> Result<FuncId, AdError> {
    let primal_id = request.function;
    let primal_name = module.functions.get(primal_id).map(|f| f.name.clone()).ok_or_else(|| {
        AdError::new(
            Site::function(name),
            AdErrorKind::BadApiCall {
                api: "__enzyme_fwddiff".into(),
                reason: format!("the request names {primal_id}, which is not in the module"),
            },
        )
    })?;
    let site = Site::function(&primal_name);
    let signature = derivative_signature(module, request, &site)?;
    // Synthesis walks the primal assuming SSA dominance and well-typed operands.
    adc_ir::verify::verify_function(module, &module.functions[primal_id]).map_err(|d| {
        AdError::new(
            site.clone(),
            AdErrorKind::Unsupported { what: format!("a function that does not verify: {d}") },
        )
    })?;
    if module.function_by_name(name).is_some() {
        return Err(AdError::new(
            site,
            AdErrorKind::Unsupported {
                what: format!("the derivative: a function named @{name} already exists"),
            },
        ));
    }
    declare_rule_callees(module, primal_id)?;

    // Which values need a tangent and which pointers a shadow: the activity analysis, on
    // the type analysis (which tells integer-typed moves of floats from integers).
    let types = TypeAnalysis::analyze(module);
    let activity = Activity::analyze(module, request, &types)?;
    let primal = &module.functions[primal_id];
    let mut derivative = Function::new(name, signature);
    derivative.linkage = Linkage::Internal;
    {
        let module_ref: &Module = module;
        let sigs = |id: FuncId| module_ref.signature(id);
        let builder = FunctionBuilder::new(&mut derivative, &sigs);
        let mut synth = Synth {
            module: module_ref,
            primal,
            request,
            activity: &activity,
            b: builder,
            values: HashMap::new(),
            shadows: HashMap::new(),
            blocks: HashMap::new(),
            pointer_slots: HashSet::new(),
        };
        synth.pointer_slots = synth.find_pointer_slots();
        synth.run()?;
    }
    adc_ir::verify::verify_function(module, &derivative).map_err(|d| {
        AdError::new(
            Site::function(&primal_name),
            AdErrorKind::Unsupported {
                what: format!(
                    "this function: the synthesized derivative does not verify (a bug in adc): {d}"
                ),
            },
        )
    })?;
    Ok(module.add_function(derivative))
}

/// The derivative's signature, or why the request does not fit the primal.
fn derivative_signature(
    module: &Module,
    request: &DiffRequest,
    site: &Site,
) -> Result<Signature, AdError> {
    let bad = |reason: String| {
        AdError::new(
            site.clone(),
            AdErrorKind::BadApiCall { api: "__enzyme_fwddiff".into(), reason },
        )
    };
    let primal = &module.functions[request.function];
    if request.mode != DiffMode::Forward {
        return Err(bad("the request is not for forward mode".into()));
    }
    if request.width != 1 {
        return Err(AdError::new(
            site.clone(),
            AdErrorKind::Unsupported {
                what: format!("vector forward mode (width {}) is not implemented", request.width),
            },
        ));
    }
    if primal.is_declaration() {
        return Err(AdError::new(
            site.clone(),
            AdErrorKind::Unsupported {
                what: format!("@{}: it is only declared, its body is not available", primal.name),
            },
        ));
    }
    let sig = &primal.signature;
    if sig.varargs {
        return Err(AdError::new(
            site.clone(),
            AdErrorKind::Unsupported { what: "a variadic function".into() },
        ));
    }
    if request.args.len() != sig.params.len() {
        return Err(bad(format!(
            "@{} takes {} arguments, the request gives {} activities",
            primal.name,
            sig.params.len(),
            request.args.len()
        )));
    }
    let mut params = Vec::new();
    for (index, (ty, activity)) in sig.params.iter().zip(&request.args).enumerate() {
        params.push(ty.clone());
        match activity {
            ArgActivity::Const => {}
            ArgActivity::Active => {
                return Err(bad(format!(
                    "argument {index} is `active` (enzyme_out), which is reverse mode only; \
                     forward mode takes `dup` with a tangent"
                )))
            }
            ArgActivity::Dup | ArgActivity::DupNoNeed => {
                if !carries_derivative(ty) && !ty.is_int() {
                    return Err(bad(format!("argument {index} of type {ty} cannot have a shadow")));
                }
                params.push(ty.clone());
            }
        }
    }
    let ret = match (request.ret, &sig.ret) {
        (RetActivity::Const, ret) => ret.clone(),
        (RetActivity::Active | RetActivity::Dup, None) => {
            return Err(bad(format!("@{} returns void; its return must be const", primal.name)))
        }
        (RetActivity::Active | RetActivity::Dup, Some(ty)) if !contains_float(ty) => {
            return Err(bad(format!(
                "@{} returns {ty}, which has no tangent; its return must be const",
                primal.name
            )))
        }
        (RetActivity::Active, Some(ty)) => Some(ty.clone()),
        (RetActivity::Dup, Some(ty)) => Some(Type::structure(vec![ty.clone(), ty.clone()], false)),
    };
    Ok(Signature::new(params, ret))
}

/// Declares the libm functions that the tangent rules of the primal's operations call
/// (`cos` for `sin`), so that the builder can resolve them.
fn declare_rule_callees(module: &mut Module, primal_id: FuncId) -> Result<(), AdError> {
    let primal = &module.functions[primal_id];
    let mut needed: Vec<(&'static str, Signature)> = Vec::new();
    let like = crate::custom::Registrations::read(module).unwrap_or_default();
    for (_, inst) in primal.layout.insts() {
        let Some(result) = primal.dfg.inst_result(inst) else { continue };
        let ty = primal.dfg.value_type(result);
        if !matches!(ty.lane_type(), Type::F32 | Type::F64) {
            continue;
        }
        let op = match primal.inst(inst) {
            InstructionData::Unary { op, .. } => Differentiable::Unary(*op),
            InstructionData::Binary { op, .. } => Differentiable::Binary(*op),
            InstructionData::Fma { .. } => Differentiable::Fma,
            InstructionData::Call { callee, .. } => match module.functions.get(*callee) {
                Some(f) if rules::lookup_call(&f.name).is_some() => Differentiable::Call(&f.name),
                _ => match like.like(*callee) {
                    Some(library) => Differentiable::Call(library),
                    None => continue,
                },
            },
            _ => continue,
        };
        // An operation without a rule is reported where it is differentiated (only when
        // its operands are active), not here.
        if let Ok(list) = rules::externs_needed(op, ty) {
            for (name, sig) in list {
                if !needed.iter().any(|(n, _)| *n == name) {
                    needed.push((name, sig));
                }
            }
        }
    }
    for (name, sig) in needed {
        match module.function_by_name(name) {
            Some(existing) if module.functions[existing].signature != sig => {
                return Err(AdError::new(
                    Site::function(&module.functions[primal_id].name),
                    AdErrorKind::Unsupported {
                        what: format!(
                            "the derivative: it calls @{name}, but the module declares it with \
                             another signature"
                        ),
                    },
                ));
            }
            Some(_) => {}
            None => {
                let mut decl = Function::new(name, sig);
                decl.attrs = rules::DERIVATIVE_CALL_ATTRS;
                module.add_function(decl);
            }
        }
    }
    Ok(())
}

/// Whether values of this type have a tangent (floats) or a shadow (pointers) that must
/// not be lost.
pub(crate) fn carries_derivative(ty: &Type) -> bool {
    ty.is_ptr() || contains_float(ty)
}

/// Whether a type holds a float anywhere (scalar, lane, field or element).
pub(crate) fn contains_float(ty: &Type) -> bool {
    match ty {
        Type::F32 | Type::F64 => true,
        Type::Vector(elem, _) | Type::Array(elem, _) => contains_float(elem),
        Type::Struct(s) => s.fields.iter().any(contains_float),
        _ => false,
    }
}

/// Whether a type holds a pointer anywhere.
pub(crate) fn contains_ptr(ty: &Type) -> bool {
    match ty {
        Type::Ptr(_) => true,
        Type::Vector(elem, _) | Type::Array(elem, _) => contains_ptr(elem),
        Type::Struct(s) => s.fields.iter().any(contains_ptr),
        _ => false,
    }
}

/// The state of one synthesis: the primal, the builder of the derivative, and the maps
/// from primal values and blocks to the derivative's.
pub(crate) struct Synth<'a> {
    pub(crate) module: &'a Module,
    pub(crate) primal: &'a Function,
    pub(crate) request: &'a DiffRequest,
    pub(crate) activity: &'a Activity,
    pub(crate) b: FunctionBuilder<'a>,
    /// Primal value -> the same value in the derivative.
    pub(crate) values: HashMap<Value, Value>,
    /// Primal value -> its shadow (tangent or shadow pointer) in the derivative.
    pub(crate) shadows: HashMap<Value, Value>,
    pub(crate) blocks: HashMap<Block, Block>,
    /// Allocas that hold a pointer with a shadow: its shadow pointer lives in their shadow
    /// memory, whatever the activity analysis says about the slot itself.
    pub(crate) pointer_slots: HashSet<Value>,
}

impl Synth<'_> {
    fn run(&mut self) -> Result<(), AdError> {
        let dom = DomTree::for_function(self.primal).ok_or_else(|| {
            AdError::new(
                Site::function(&self.primal.name),
                AdErrorKind::Unsupported { what: "a function without a body".into() },
            )
        })?;
        let order = dom.rpo().to_vec();
        self.create_blocks(&order);
        for &block in &order {
            self.b.switch_to_block(self.blocks[&block]);
            for &inst in self.primal.layout.block_insts(block) {
                self.translate(inst)?;
            }
        }
        Ok(())
    }

    /// Creates the derivative's blocks in the primal's layout order (reachable ones only),
    /// with their parameters and the shadow parameters of active ones.
    fn create_blocks(&mut self, reachable: &[Block]) {
        let entry = self.primal.entry_block();
        let layout: Vec<Block> =
            self.primal.layout.blocks().iter().copied().filter(|b| reachable.contains(b)).collect();
        for block in layout {
            let new = self.b.create_block();
            if let Some(name) = self.primal.dfg.block_name(block) {
                self.b.func.dfg.set_block_name(new, name);
            }
            self.blocks.insert(block, new);
            if Some(block) == entry {
                self.create_entry_params(block, new);
                continue;
            }
            // The primal parameters, then the shadows of the active ones in the same
            // order: branches append the shadow arguments after the primal ones.
            let primal = self.primal;
            let params = primal.dfg.block_params(block);
            for &param in params {
                let ty = self.primal.dfg.value_type(param).clone();
                let value = self.b.append_block_param(new, ty);
                self.record(param, value);
            }
            for &param in params {
                if self.wants_shadow(param) {
                    let ty = self.primal.dfg.value_type(param).clone();
                    let shadow = self.b.append_block_param(new, ty);
                    self.record_shadow(param, shadow);
                }
            }
        }
    }

    fn create_entry_params(&mut self, primal_entry: Block, entry: Block) {
        let params = self.primal.dfg.block_params(primal_entry).to_vec();
        for (param, activity) in params.into_iter().zip(self.request.args.clone()) {
            let ty = self.primal.dfg.value_type(param).clone();
            let value = self.b.append_block_param(entry, ty.clone());
            self.record(param, value);
            if activity.has_shadow() {
                let shadow = self.b.append_block_param(entry, ty);
                self.record_shadow(param, shadow);
            }
        }
    }

    /// The allocas (through `ptradd` chains) into which a pointer that keeps a shadow is
    /// stored.
    fn find_pointer_slots(&self) -> HashSet<Value> {
        let mut slots = HashSet::new();
        for (_, inst) in self.primal.layout.insts() {
            let InstructionData::Store { value, ptr, .. } = self.primal.inst(inst) else {
                continue;
            };
            if !self.primal_type(*value).is_ptr() || !self.wants_shadow(*value) {
                continue;
            }
            let mut base = *ptr;
            while let ValueDef::Result(def) = self.primal.dfg.value_def(base) {
                match self.primal.inst(def) {
                    InstructionData::PtrAdd { ptr, .. } => base = *ptr,
                    InstructionData::Alloca { .. } => {
                        slots.insert(base);
                        break;
                    }
                    _ => break,
                }
            }
        }
        slots
    }

    fn record(&mut self, primal: Value, value: Value) {
        if let Some(name) = self.primal.dfg.value_name(primal) {
            self.b.func.dfg.set_value_name(value, name);
        }
        self.values.insert(primal, value);
    }

    pub(crate) fn record_shadow(&mut self, primal: Value, shadow: Value) {
        if let Some(name) = self.primal.dfg.value_name(primal) {
            self.b.func.dfg.set_value_name(shadow, &format!("d.{name}"));
        }
        self.shadows.insert(primal, shadow);
    }

    /// The derivative's copy of a primal value.
    pub(crate) fn value(&self, primal: Value) -> Value {
        // Reverse post-order guarantees that operands are translated first; a missing one
        // would be a use not dominated by its definition, which the verifier rejects.
        self.values[&primal]
    }

    pub(crate) fn primal_type(&self, primal: Value) -> Type {
        self.primal.dfg.value_type(primal).clone()
    }

    /// The shadow of a primal value: its recorded shadow, or for an inactive value a zero
    /// (floats and integers: constants have no tangent; a null pointer: a null shadow).
    /// An inactive pointer other than null has no shadow memory to offer: an error.
    pub(crate) fn shadow(&mut self, primal: Value, inst: Inst) -> Result<Value, AdError> {
        if let Some(shadow) = self.shadows.get(&primal) {
            return Ok(*shadow);
        }
        let ty = self.primal_type(primal);
        if contains_ptr(&ty) && !self.is_null_constant(primal) {
            return Err(self.error(
                inst,
                AdErrorKind::Unsupported {
                    what: format!(
                        "a pointer without shadow memory ({}) where a shadow is needed: it \
                         flows together with, or is stored into, memory whose derivative is \
                         tracked",
                        self.describe_value(primal)
                    ),
                },
            ));
        }
        Ok(self.b.constant(ty, Constant::Zero))
    }

    fn is_null_constant(&self, primal: Value) -> bool {
        match self.primal.dfg.value_def(primal) {
            ValueDef::Result(inst) => matches!(
                self.primal.inst(inst),
                InstructionData::Const {
                    value: Constant::Zero | Constant::Int(0) | Constant::Undef | Constant::Poison,
                    ..
                }
            ),
            ValueDef::Param(..) => false,
        }
    }

    /// The shadow when the primal value is active, `None` otherwise (for tangent rules,
    /// which skip inactive operands).
    pub(crate) fn active_shadow(&self, primal: Value) -> Option<Value> {
        self.shadows.get(&primal).copied()
    }

    /// Whether the derivative keeps a shadow for this primal value: an active value, or a
    /// pointer to memory that holds derivatives (the analysis may find the memory
    /// shadowed without every pointer into it being active).
    pub(crate) fn wants_shadow(&self, primal: Value) -> bool {
        self.activity.is_active_value(primal)
            || (contains_ptr(&self.primal_type(primal)) && self.activity.needs_shadow(primal))
            || self.pointer_slots.contains(&primal)
    }

    /// Whether the value is active and of a type whose derivative must not be lost.
    pub(crate) fn carries(&self, primal: Value) -> bool {
        self.shadows.contains_key(&primal) && carries_derivative(&self.primal_type(primal))
    }

    pub(crate) fn describe_value(&self, primal: Value) -> String {
        adc_ir::text::FunctionPrinter::new(self.module, self.primal).value(primal)
    }

    pub(crate) fn error(&self, inst: Inst, kind: AdErrorKind) -> AdError {
        AdError::new(Site::inst(self.module, self.primal, inst), kind)
    }

    /// Appends a copy of the primal instruction with its operands mapped, and records its
    /// result. Branch targets are mapped by `control.rs`, not here.
    pub(crate) fn copy_primal(&mut self, inst: Inst) -> Option<Value> {
        let mut data = self.primal.inst(inst).clone();
        data.map_args(|v| self.values[&v]);
        let (new_inst, result) = self.b.ins(data);
        if let Some(loc) = self.primal.dfg.debug_locs.get(inst).cloned().flatten() {
            self.b.func.dfg.debug_locs[new_inst] = Some(loc);
        }
        if let (Some(old), Some(new)) = (self.primal.dfg.inst_result(inst), result) {
            self.record(old, new);
        }
        result
    }

    fn translate(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        match self.primal.inst(inst) {
            I::Const { .. } | I::Icmp { .. } | I::Fcmp { .. } | I::Fence { .. } => {
                self.copy_primal(inst);
                Ok(())
            }
            I::Unary { .. }
            | I::Binary { .. }
            | I::Fma { .. }
            | I::Select { .. }
            | I::Cast { .. }
            | I::ExtractLane { .. }
            | I::InsertLane { .. }
            | I::Shuffle { .. }
            | I::Reduce { .. }
            | I::ExtractValue { .. }
            | I::InsertValue { .. } => self.translate_arith(inst),
            I::Alloca { .. }
            | I::Load { .. }
            | I::Store { .. }
            | I::PtrAdd { .. }
            | I::MemCopy { .. }
            | I::MemSet { .. }
            | I::AtomicRmw { .. }
            | I::CmpXchg { .. } => self.translate_memory(inst),
            I::Call { .. } | I::CallIndirect { .. } => self.translate_call(inst),
            I::Jump { .. }
            | I::Brif { .. }
            | I::Switch { .. }
            | I::Return { .. }
            | I::Unreachable => self.translate_terminator(inst),
        }
    }
}
