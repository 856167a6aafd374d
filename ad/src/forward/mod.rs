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
//! memcpy/memset) and `control.rs` (branches, returns, other calls). Vector forward mode
//! emits each lane as scalar code; `packing.rs` then rewrites the lanes' float tangent
//! arithmetic into IR vector instructions (unless `ForwardOptions::lane_packing` is off).

mod arith;
mod calls;
mod control;
mod custom_calls;
mod memory;
mod packing;

pub use packing::PackStats;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use adc_ir::builder::FunctionBuilder;
use adc_ir::dominance::DomTree;
use adc_ir::{
    Block, Constant, FuncId, Function, Inst, InstructionData, Linkage, Module, Signature, Type,
    Value, ValueDef,
};

use crate::activity::{Activity, ModuleFacts, RequestAnalyses};
use crate::callees::fresh_name;
use crate::request::{carries_derivative, has_float, has_pointer, may_carry_float_bits};
use crate::rules::{self, Differentiable};
use crate::typetree::TypeAnalysis;
use crate::{AdError, AdErrorKind, ArgActivity, DiffMode, DiffRequest, RetActivity, Site};

/// Synthesizes the forward-mode derivative of `request.function` as a new internal
/// function named `name` and returns its id, with the forward derivatives of the
/// functions it calls (see [`synthesize_forward_with`]).
pub fn synthesize_forward(
    module: &mut Module,
    request: &DiffRequest,
    name: &str,
) -> Result<FuncId, AdError> {
    synthesize_forward_with(
        module,
        request,
        name,
        &mut HashMap::new(),
        &mut Default::default(),
        ForwardOptions::default(),
    )
}

/// Switches of forward-mode synthesis (ablations).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ForwardOptions {
    /// Vector forward mode computes the float tangents of its lanes with IR vector
    /// instructions (`lane-packing`, see `packing.rs`); off, every lane is scalar code.
    pub lane_packing: bool,
}

impl Default for ForwardOptions {
    fn default() -> Self {
        ForwardOptions { lane_packing: true }
    }
}

/// The toggle names accepted in `--passes` (with `-` or `+`).
pub const TOGGLES: &[(&str, &str)] =
    &[("lane-packing", "compute the lanes of vector forward mode with IR vector instructions")];

impl ForwardOptions {
    /// Takes the forward-mode toggles (`-lane-packing`, `+lane-packing`) out of a
    /// `--passes` list and applies them; returns the remaining words, `None` when
    /// nothing is left (as `CacheOptions::split_toggles`).
    pub fn split_toggles(&mut self, passes: &str) -> Option<String> {
        crate::toggles::take(passes, TOGGLES, |_, on| self.lane_packing = on)
    }
}

/// As [`synthesize_forward`], memoised in `memo`: a request already there is answered
/// from it, and the derivative and every callee derivative synthesized for it are added.
///
/// Signature (see [`crate::request`]): each primal parameter, followed by its `width`
/// shadows when its activity is `Dup`/`DupNoNeed` (tangents for a float, shadow pointers
/// for a pointer); the result is the primal's for `RetActivity::Const`, the tangent of the
/// result for `Active` (a struct of `width` tangents when the width is above 1), and
/// `{primal, tangent, ...}` for `Dup`.
///
/// A call with active operands to a defined function calls that function's forward
/// derivative, requested per (callee, activity, width). Their ids are reserved past the
/// end of the module while the caller is built and added as declarations right after it;
/// their bodies follow from a worklist. So a recursive call finds its own derivative's id.
pub fn synthesize_forward_with(
    module: &mut Module,
    request: &DiffRequest,
    name: &str,
    memo: &mut HashMap<DiffRequest, FuncId>,
    analyses: &mut RequestAnalyses,
    options: ForwardOptions,
) -> Result<FuncId, AdError> {
    if let Some(id) = memo.get(request) {
        return Ok(*id);
    }
    let primal_name =
        module.functions.get(request.function).map(|f| f.name.clone()).ok_or_else(|| {
            AdError::new(
                Site::function(name),
                AdErrorKind::BadApiCall {
                    api: "__enzyme_fwddiff".into(),
                    reason: format!(
                        "the request names {}, which is not in the module",
                        request.function
                    ),
                },
            )
        })?;
    if module.function_by_name(name).is_some() {
        return Err(AdError::new(
            Site::function(&primal_name),
            AdErrorKind::Unsupported {
                what: format!("the derivative: a function named @{name} already exists"),
            },
        ));
    }
    declare_rule_callees(module, request.function)?;
    // The analyses run once, on the module before this synthesis: every callee it will
    // differentiate is already there, and the derivatives it adds are no primal code.
    let (types, facts) = analyses.analyze(module, request.function)?;
    let id = FuncId::from_u32(module.functions.len() as u32);
    let signature = derivative_signature(module, request, &Site::function(&primal_name))?;
    let registry = RefCell::new(CalleeRegistry::new(memo.clone(), module.functions.len() + 1));
    registry.borrow_mut().reserve(request, id, signature);
    let function = synthesize_body(module, request, name, &registry, &types, &facts, options)?;
    let added = module.add_function(function);
    debug_assert_eq!(added, id, "the derivative takes the id reserved for it");
    memo.insert(request.clone(), id);
    let mut queue = add_pending(module, registry.into_inner(), memo);
    let mut synthesized = vec![(id, primal_name)];
    while let Some((callee_request, callee_id)) = queue.pop_front() {
        declare_rule_callees(module, callee_request.function)?;
        let registry = RefCell::new(CalleeRegistry::new(memo.clone(), module.functions.len()));
        let callee_name = module.functions[callee_id].name.clone();
        let function = synthesize_body(
            module,
            &callee_request,
            &callee_name,
            &registry,
            &types,
            &facts,
            options,
        )?;
        module.functions[callee_id] = function;
        queue.extend(add_pending(module, registry.into_inner(), memo));
        synthesized.push((callee_id, module.functions[callee_request.function].name.clone()));
    }
    analyses.record_activity(&facts);
    // Verified last: until every reserved callee exists, a call to one would not resolve.
    for (id, primal_name) in synthesized {
        adc_ir::verify::verify_function(module, &module.functions[id]).map_err(|d| {
            AdError::new(
                Site::function(&primal_name),
                AdErrorKind::Unsupported {
                    what: format!(
                        "this function: the synthesized derivative does not verify (a bug in \
                         adc): {d}"
                    ),
                },
            )
        })?;
    }
    Ok(id)
}

/// Forward derivatives of callees: the ones known (memoised or reserved) and the ones
/// reserved by the synthesis in progress, whose ids lie past the end of the module.
#[derive(Debug)]
pub(crate) struct CalleeRegistry {
    known: HashMap<DiffRequest, FuncId>,
    reserved: Vec<(DiffRequest, FuncId, Signature)>,
    /// How many of `reserved` are already in the module (the derivative being built).
    already_added: usize,
    next_id: u32,
}

impl CalleeRegistry {
    fn new(known: HashMap<DiffRequest, FuncId>, next_id: usize) -> CalleeRegistry {
        CalleeRegistry { known, reserved: Vec::new(), already_added: 0, next_id: next_id as u32 }
    }

    /// Records the id of the derivative being built, so that recursion finds it.
    fn reserve(&mut self, request: &DiffRequest, id: FuncId, signature: Signature) {
        self.known.insert(request.clone(), id);
        self.reserved.push((request.clone(), id, signature));
        self.already_added = 1;
    }

    /// The id of the forward derivative for `request`, reserving one when it is new.
    pub(crate) fn id_for(&mut self, request: &DiffRequest, signature: Signature) -> FuncId {
        if let Some(id) = self.known.get(request) {
            return *id;
        }
        let id = FuncId::from_u32(self.next_id);
        self.next_id += 1;
        self.known.insert(request.clone(), id);
        self.reserved.push((request.clone(), id, signature));
        id
    }

    fn signature_of(&self, id: FuncId) -> Option<Signature> {
        self.reserved.iter().find(|(_, i, _)| *i == id).map(|(_, _, s)| s.clone())
    }
}

/// Adds the callee derivatives a synthesis reserved, as declarations in id order, and
/// returns them for the worklist.
fn add_pending(
    module: &mut Module,
    registry: CalleeRegistry,
    memo: &mut HashMap<DiffRequest, FuncId>,
) -> VecDeque<(DiffRequest, FuncId)> {
    let mut queue = VecDeque::new();
    for (request, id, signature) in registry.reserved.into_iter().skip(registry.already_added) {
        let callee = module.functions[request.function].name.clone();
        let name = fresh_name(module, &format!("__adc_forward_{callee}"));
        let mut declaration = Function::new(&name, signature);
        declaration.linkage = Linkage::Internal;
        let added = module.add_function(declaration);
        debug_assert_eq!(added, id, "callee derivatives are added in reservation order");
        memo.insert(request.clone(), id);
        queue.push_back((request, id));
    }
    queue
}

/// Builds the body of one derivative (not yet added to the module).
fn synthesize_body(
    module: &Module,
    request: &DiffRequest,
    name: &str,
    registry: &RefCell<CalleeRegistry>,
    types: &TypeAnalysis,
    facts: &ModuleFacts,
    options: ForwardOptions,
) -> Result<Function, AdError> {
    let primal = &module.functions[request.function];
    let site = Site::function(&primal.name);
    let signature = derivative_signature(module, request, &site)?;
    // Synthesis walks the primal assuming SSA dominance and well-typed operands.
    adc_ir::verify::verify_function(module, primal).map_err(|d| {
        AdError::new(
            site.clone(),
            AdErrorKind::Unsupported { what: format!("a function that does not verify: {d}") },
        )
    })?;
    // Which values need a tangent and which pointers a shadow: the activity analysis, on
    // the type analysis (which tells integer-typed moves of floats from integers).
    let activity = Activity::analyze(module, request, types, facts)?;
    let mut derivative = Function::new(name, signature);
    derivative.linkage = Linkage::Internal;
    let lane_groups = {
        let sigs = |id: FuncId| module.signature(id).or_else(|| registry.borrow().signature_of(id));
        let builder = FunctionBuilder::new(&mut derivative, &sigs);
        let width = request.width.max(1) as usize;
        let mut synth = Synth {
            module,
            primal,
            request,
            activity: &activity,
            registry,
            b: builder,
            values: HashMap::new(),
            shadows: vec![HashMap::new(); width],
            lane: 0,
            blocks: HashMap::new(),
            registrations: &facts.registrations,
        };
        synth.run()?;
        synth.lane_groups()
    };
    if options.lane_packing && lane_groups.first().is_some_and(|g| g.len() > 1) {
        packing::pack_lanes(&mut derivative, &lane_groups);
    }
    Ok(derivative)
}

/// The derivative's signature, or why the request does not fit the primal.
pub(crate) fn derivative_signature(
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
    if request.width == 0 {
        return Err(bad("a vector width of 0".into()));
    }
    let width = request.width as usize;
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
            AdErrorKind::Unsupported {
                what: format!("@{}, a function of variable arguments", primal.name),
            },
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
                params.extend(std::iter::repeat_n(ty.clone(), width));
            }
        }
    }
    let ret = match (request.ret, &sig.ret) {
        (RetActivity::Const, ret) => ret.clone(),
        (RetActivity::Active | RetActivity::Dup, None) => {
            return Err(bad(format!("@{} returns void; its return must be const", primal.name)))
        }
        // Calls inside derivatives only: a pointer result and its shadow pointers.
        (RetActivity::Dup, Some(ty)) if ty.is_ptr() => {
            Some(Type::structure(vec![ty.clone(); width + 1], false))
        }
        // An integer result carrying a float's bits (a `bits_of(x)` helper called inside a
        // derivative): its tangent comes back as bits of the same type.
        (RetActivity::Dup, Some(ty)) if may_carry_float_bits(ty) => {
            Some(Type::structure(vec![ty.clone(); width + 1], false))
        }
        (RetActivity::Active | RetActivity::Dup, Some(ty)) if !has_float(ty) => {
            return Err(bad(format!(
                "@{} returns {ty}, which has no tangent; its return must be const",
                primal.name
            )))
        }
        (RetActivity::Active, Some(ty)) if width == 1 => Some(ty.clone()),
        (RetActivity::Active, Some(ty)) => Some(Type::structure(vec![ty.clone(); width], false)),
        (RetActivity::Dup, Some(ty)) => Some(Type::structure(vec![ty.clone(); width + 1], false)),
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

/// The state of one synthesis: the primal, the builder of the derivative, and the maps
/// from primal values and blocks to the derivative's.
pub(crate) struct Synth<'a> {
    pub(crate) module: &'a Module,
    pub(crate) primal: &'a Function,
    pub(crate) request: &'a DiffRequest,
    pub(crate) activity: &'a Activity,
    /// The forward derivatives of callees, shared with the builder's signature lookup.
    pub(crate) registry: &'a RefCell<CalleeRegistry>,
    pub(crate) b: FunctionBuilder<'a>,
    /// Primal value -> the same value in the derivative.
    pub(crate) values: HashMap<Value, Value>,
    /// Per lane of vector forward mode: primal value -> its shadow (tangent or shadow
    /// pointer) in the derivative. Every lane has the same keys.
    pub(crate) shadows: Vec<HashMap<Value, Value>>,
    /// The lane whose shadows `shadow`, `record_shadow` and friends use now.
    pub(crate) lane: usize,
    pub(crate) blocks: HashMap<Block, Block>,
    /// The module's custom-derivative registrations, read once per synthesis.
    pub(crate) registrations: &'a crate::custom::Registrations,
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
            for lane in self.lanes() {
                self.in_lane(lane, |s| {
                    for &param in params {
                        if s.wants_shadow(param) {
                            let ty = s.primal.dfg.value_type(param).clone();
                            let shadow = s.b.append_block_param(new, ty);
                            s.record_shadow(param, shadow);
                        }
                    }
                });
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
                for lane in self.lanes() {
                    self.in_lane(lane, |s| {
                        let shadow = s.b.append_block_param(entry, ty.clone());
                        s.record_shadow(param, shadow);
                    });
                }
            }
        }
    }

    /// For every primal value with a shadow, its shadows in lanes 0..width, in the order
    /// of the primal values (so that packing is deterministic).
    fn lane_groups(&self) -> Vec<Vec<Value>> {
        let mut primals: Vec<Value> = self.shadows[0].keys().copied().collect();
        primals.sort();
        primals
            .into_iter()
            .filter_map(|p| self.shadows.iter().map(|lane| lane.get(&p).copied()).collect())
            .collect()
    }

    fn record(&mut self, primal: Value, value: Value) {
        if let Some(name) = self.primal.dfg.value_name(primal) {
            self.b.func.dfg.set_value_name(value, name);
        }
        self.values.insert(primal, value);
    }

    pub(crate) fn record_shadow(&mut self, primal: Value, shadow: Value) {
        if let Some(name) = self.primal.dfg.value_name(primal) {
            let name = match self.lane {
                0 => format!("d.{name}"),
                lane => format!("d{lane}.{name}"),
            };
            self.b.func.dfg.set_value_name(shadow, &name);
        }
        self.shadows[self.lane].insert(primal, shadow);
    }

    /// Runs `f` with `lane` as the current lane, then returns to lane 0 (whatever `f`
    /// returns, errors included), so that lane-independent code always sees lane 0.
    pub(crate) fn in_lane<T>(&mut self, lane: usize, f: impl FnOnce(&mut Self) -> T) -> T {
        self.lane = lane;
        let result = f(self);
        self.lane = 0;
        result
    }

    /// The lanes of vector forward mode: `0..width`.
    pub(crate) fn lanes(&self) -> std::ops::Range<usize> {
        0..self.request.width.max(1) as usize
    }

    /// Whether the primal value has a shadow (in every lane, or in none).
    pub(crate) fn has_shadow(&self, primal: Value) -> bool {
        self.shadows[self.lane].contains_key(&primal)
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
        if let Some(shadow) = self.shadows[self.lane].get(&primal) {
            return Ok(*shadow);
        }
        let ty = self.primal_type(primal);
        if let Some(global) = self.global_named_by(primal) {
            return Err(self.global_without_shadow(inst, global));
        }
        if has_pointer(&ty) && !self.is_null_constant(primal) {
            return Err(self.error(
                inst,
                AdErrorKind::Unsupported {
                    what: format!(
                        "a pointer without shadow memory ({}) where a shadow is needed: it \
                         flows together with, or is stored into, memory whose derivative is \
                         tracked (clang -O2 merges `c ? &a[i] : &b[j]` into one pointer); \
                         when it points into an `enzyme_const` argument, passing that \
                         argument as `enzyme_dup` avoids it",
                        self.describe_value(primal)
                    ),
                },
            ));
        }
        Ok(self.b.constant(ty, Constant::Zero))
    }

    /// The name of the global that `primal` points into: its address, moved by pointer
    /// arithmetic and casts.
    pub(crate) fn global_named_by(&self, mut primal: Value) -> Option<&str> {
        loop {
            let ValueDef::Result(inst) = self.primal.dfg.value_def(primal) else { return None };
            match self.primal.inst(inst) {
                InstructionData::Const {
                    value: Constant::Address { symbol: adc_ir::Symbol::Global(global), .. },
                    ..
                } => return Some(self.module.globals[*global].name.as_str()),
                InstructionData::PtrAdd { ptr, .. } => primal = *ptr,
                InstructionData::Cast { arg, .. } => primal = *arg,
                _ => return None,
            }
        }
    }

    /// The error for a global whose memory needs a shadow, which forward mode lacks.
    pub(crate) fn global_without_shadow(&self, inst: Inst, global: &str) -> AdError {
        self.error(
            inst,
            AdErrorKind::Unsupported {
                what: format!(
                    "the global @{global} as memory that carries derivatives in forward mode, \
                     which gives globals no shadow (reverse and split mode do); pass the \
                     memory as an argument (`enzyme_dup`) instead"
                ),
            },
        )
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
        self.shadows[self.lane].get(&primal).copied()
    }

    /// Whether the derivative keeps a shadow for this primal value: an active value, or a
    /// pointer to memory that holds derivatives (the analysis may find the memory
    /// shadowed without every pointer into it being active).
    pub(crate) fn wants_shadow(&self, primal: Value) -> bool {
        self.activity.is_active_value(primal)
            || (has_pointer(&self.primal_type(primal)) && self.activity.needs_shadow(primal))
    }

    /// Whether the value is active and of a type whose derivative must not be lost.
    pub(crate) fn carries(&self, primal: Value) -> bool {
        self.has_shadow(primal) && carries_derivative(&self.primal_type(primal))
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
