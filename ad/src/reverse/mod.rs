//! Reverse-mode synthesis: builds the derivative function of one [`DiffRequest`].
//!
//! The derivative has two halves in one function:
//!
//! 1. The **augmented forward pass**: a clone of the primal (every primal effect happens,
//!    in order) extended with shadow computations: a shadow pointer for every pointer
//!    that needs one (shadow allocas are zero-initialized), and pushes onto tapes of the
//!    values and branch decisions the reverse pass cannot recompute (see `crate::cache`).
//!    Every `ret` becomes a jump to one forward exit block.
//! 2. The **reverse pass**: one reverse region per primal block, laid out in reverse
//!    order. A region undoes its block's instructions in reverse order, each adding its
//!    contribution `d_operand += d_result * ∂result/∂operand` to the adjoints of its
//!    operands (families: `arith`, `memory`, `calls`), then hands the adjoints of the
//!    block's parameters back along the edge the forward pass came by (`control`) and
//!    continues with the reverse region of that edge's source block. The reverse region of
//!    the entry block returns the adjoints of the `Active` arguments.
//!
//! **Split mode** (`synthesize` with `split: true`) builds a callee's split function
//! instead (see `calls`): both halves behind a phase flag, with every value the reverse
//! half reads kept in a heap frame (no direct uses of forward values, no re-reading of
//! memory the caller may overwrite between the phases), the result's adjoint as a
//! parameter instead of the 1.0 seed, and the frame returned by the forward half.
//!
//! Adjoints of SSA values live in stack slots (one per active value, zero at the start,
//! reset to zero when their definition is undone, so loops work unchanged); the post-AD
//! `mem2reg` turns them back into SSA values. Invariants the families rely on:
//! - `Synth::cur` is the block the reverse code is appended to; families may split it
//!   (emit loops) and leave `cur` at the continuation.
//! - Forward values needed in the reverse pass are obtained through `Synth::avail`,
//!   never used directly: only the cache planner knows whether they dominate the reverse
//!   code.

mod arena;
mod arith;
mod cache;
mod calls;
mod combined;
mod control;
mod custom_calls;
pub(crate) mod gpu;
pub mod gpu_tapes;
mod heap;
mod in_place;
mod indirect;
mod loop_ivs;
mod memory;
mod split;
mod tape;
mod tape_reuse;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use adc_ir::{
    BinaryOp, Block, CastOp, Constant, FuncId, Function, Inst, InstFlags, InstructionData, Linkage,
    Module, ParamAttrs, Signature, Type, Value, ValueDef,
};
use adc_passes::alias::AliasAnalysis;

use crate::activity::{Activity, ModuleFacts};
use crate::cache::{CacheOptions, CachePlan, CacheStats, EdgeTarget, Ordering, Planner};
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{
    has_float, has_pointer, may_carry_float_bits, ArgActivity, DiffRequest, RetActivity,
};
use crate::thread_sharing::ThreadPrivateLoads;
use crate::typetree::TypeAnalysis;

pub(crate) use arena::define_frame_arena;
use cache::Cache;
use calls::SplitCall;
pub(crate) use calls::{Reserved, SplitLayout, SplitRegistry};
pub(crate) use tape::define_tape_push;
pub(crate) use tape_reuse::{add_tape_slots, define_tape_reuse, TapeReuse};

/// State of a split-mode synthesis (a callee's augmented forward + reverse pair).
pub(crate) struct SplitMode {
    /// `i1` parameter: `false` runs the forward half, `true` the reverse half.
    pub phase: Value,
    /// The adjoint of the result (reverse phase), when the result is active.
    pub d_ret: Option<Value>,
    /// The heap frame holding slots and tape headers (a setup-block parameter).
    pub frame: Value,
    /// The `ptr` parameter naming the arena to allocate the frame from (null: `malloc`).
    pub arena: Value,
    /// Forward-phase-only initialization (tape headers), before the forward entry.
    pub fwd_init: Block,
    /// Where the reverse phase starts (the reverse of the forward exit).
    pub reverse_start: Block,
    /// The `const i64` giving the frame's size, patched once all slots are known.
    pub frame_size: Inst,
    /// The `const i64` size of a frame from the caller's arena (patched with
    /// `frame_size`): such a frame is never a call tree's root, so it leaves out the
    /// root-only slot at the frame's end (the own arena header, see `reverse::arena`).
    pub arena_frame_size: Option<Inst>,
    /// The frames of the allocation paths that make this invocation a call tree's root
    /// (`malloc`ed, or the caller's memory), with their blocks.
    pub root_frames: Vec<(Block, Value)>,
    /// The `const i64` offsets of the root-only slot (patched to the frame's end), and its
    /// size (`Synth::root_frame_slot`).
    pub root_slot_offsets: Vec<Inst>,
    pub root_slot_bytes: u64,
    pub frame_bytes: u64,
    /// Slots each phase keeps in a local `alloca` (promoted to registers by the post-AD
    /// pipeline) and the frame holds between the phases: (local, frame address, type).
    pub mirrored_slots: Vec<(Value, Value, Type)>,
    pub layout: SplitLayout,
}

/// Library functions the synthesized code calls, declared in the module beforehand.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Runtime {
    pub malloc: FuncId,
    pub free: FuncId,
    /// Allocates and frees the tape buffers of whole derivatives: `malloc` and `free` on
    /// CPUs; on GPUs declarations that `gpu_tapes` turns into local tape regions or
    /// device-heap calls after synthesis.
    pub tape_alloc: FuncId,
    pub tape_free: FuncId,
    /// `__adc_tape_push(ptr %tape, i64 %size) -> ptr`: reserves one element on a tape.
    pub tape_push: FuncId,
    /// `__adc_tape_take`/`__adc_tape_give` (`tape_reuse`): CPU modules with
    /// `tape-reuse` on.
    pub tape_reuse: Option<TapeReuse>,
    /// `__adc_arena_alloc`/`__adc_arena_release` (`arena`): CPU modules.
    pub arena: Option<arena::FrameArena>,
}

/// What every synthesis of one request shares: the runtime functions, the signatures of
/// the module's functions, the module's type analysis, effects and registrations.
pub(crate) struct SynthEnv<'e> {
    pub runtime: Runtime,
    pub cache: CacheOptions,
    pub signatures: &'e HashMap<FuncId, Signature>,
    pub types: &'e TypeAnalysis,
    pub facts: &'e ModuleFacts,
}

/// The state of one synthesis.
pub(crate) struct Synth<'a> {
    pub module: &'a Module,
    pub primal: &'a Function,
    pub request: &'a DiffRequest,
    pub signatures: &'a HashMap<FuncId, Signature>,
    pub runtime: Runtime,
    /// The cache plan this synthesis carries out, with the primal's control-flow facts.
    pub plan: CachePlan<'a>,
    pub activity: Activity,
    pub types: &'a TypeAnalysis,
    pub facts: &'a ModuleFacts,
    /// The derivative under construction.
    pub f: Function,
    /// The derivative's entry block: parameters, adjoint slots, tape headers.
    pub setup: Block,
    /// Primal value -> its clone in the forward pass.
    pub vmap: HashMap<Value, Value>,
    /// Primal block -> its clone in the forward pass.
    pub bmap: HashMap<Block, Block>,
    /// Forward-pass block -> the primal block it was cloned from (edge blocks excluded).
    pub origin: HashMap<Block, Block>,
    /// Forward-pass instruction -> the primal instruction it clones.
    pub inst_origin: HashMap<Inst, Inst>,
    /// In-place update pairs whose shadow round trip is shortened (`in_place`).
    pub in_place: in_place::InPlace,
    /// GPU code: loads whose shadow elements no other thread touches (plain adds).
    pub thread_private: ThreadPrivateLoads,
    /// GPU code: the slot collecting a neighbour group's adjoints, by home load.
    pub neighbor_slots: HashMap<Inst, Value>,
    /// Primal pointer -> its shadow in the forward pass.
    pub shadows: HashMap<Value, Value>,
    /// Primal allocator call -> the shadow block it got (freed where the call is undone).
    pub heap_shadows: HashMap<Inst, Value>,
    /// Primal value -> the stack slot holding its adjoint.
    pub adjoint_slots: HashMap<Value, Value>,
    /// Active integer values carrying float bits -> the float type of their adjoint
    /// ([`TypeAnalysis::float_view`]).
    pub float_views: HashMap<Value, Type>,
    pub cache: Cache,
    /// Where reverse code is being appended.
    pub cur: Block,
    /// The primal block whose reverse region is being emitted.
    pub cur_primal: Option<Block>,
    /// Primal block -> first and last block of its reverse region.
    pub rev_entry: HashMap<Block, Block>,
    pub rev_last: HashMap<Block, Block>,
    /// The forward exit block (all `ret`s jump here).
    pub forward_exit: Block,
    /// Split functions of callees (reserved ids and their signatures).
    pub splits: &'a mut SplitRegistry,
    /// Primal calls differentiated through split functions.
    pub split_calls: HashMap<Inst, SplitCall>,
    /// Primal calls differentiated through registered gradients (`custom_calls`).
    pub custom_calls: HashMap<Inst, custom_calls::CustomCall>,
    /// Set when building a split function.
    pub split: Option<SplitMode>,
    /// The frame arena this function owns, once a split call needs one (`arena`).
    pub own_arena: Option<arena::OwnArena>,
}

/// Builds the derivative of `request.function` (reverse mode) as a new function named
/// `name`. The module must already declare the `runtime` functions and the externs the
/// derivative rules need.
pub(crate) fn synthesize(
    module: &Module,
    request: &DiffRequest,
    name: &str,
    env: &SynthEnv<'_>,
    splits: &mut SplitRegistry,
    split: bool,
) -> Result<(Function, CacheStats), AdError> {
    let first = synthesize_planned(module, request, name, env, splits, split, HashSet::new())?;
    // The min-cut needs the values the reverse pass reads, which the first synthesis
    // (heuristic plan) records; a second one applies the cut. Not for derivatives that
    // call split functions: the first synthesis has already reserved their ids.
    if env.cache.planner != Planner::MinCut || split || first.has_split_calls {
        return Ok((first.function, first.stats));
    }
    if first.store_instead.is_empty() {
        let mut stats = first.stats;
        stats.plan.options = env.cache.to_string();
        return Ok((first.function, stats));
    }
    let count = first.store_instead.len();
    let second =
        synthesize_planned(module, request, name, env, splits, split, first.store_instead)?;
    let mut stats = second.stats;
    stats.stored_by_min_cut = count;
    Ok((second.function, stats))
}

/// One synthesis, and what the min-cut planner learns from it.
struct Planned {
    function: Function,
    stats: CacheStats,
    /// What the min-cut would store instead of recomputing, given this synthesis' roots.
    store_instead: HashSet<Value>,
    has_split_calls: bool,
}

/// Synthesizes with the primal values in `store_instead` stored even where they could be
/// recomputed.
fn synthesize_planned(
    module: &Module,
    request: &DiffRequest,
    name: &str,
    env: &SynthEnv<'_>,
    splits: &mut SplitRegistry,
    split: bool,
    store_instead: HashSet<Value>,
) -> Result<Planned, AdError> {
    let (runtime, signatures, types) = (env.runtime, env.signatures, env.types);
    let primal = &module.functions[request.function];
    let site = || Site::function(&primal.name);
    if primal.is_declaration() {
        return Err(AdError::new(
            site(),
            AdErrorKind::Unsupported { what: "a function without a body".into() },
        ));
    }
    let mut signature = derivative_signature(primal, request, split)?;
    let layout = SplitLayout::new(&primal.signature, request);
    if split {
        signature = layout.signature(&primal.signature, &request.args);
    }
    let entry = primal.entry_block().expect("a defined function has an entry block");
    let ordering =
        if split || gpu::is_nvptx(module) { Ordering::Unordered } else { Ordering::Sequential };
    let alias = AliasAnalysis::new(module, primal, Rc::clone(&env.facts.effects));
    let mut plan = CachePlan::compute(module, primal, env.cache, split, ordering, &alias);
    plan.store_instead = store_instead;
    let in_place = match ordering {
        Ordering::Sequential => in_place::in_place_updates(module, primal, &alias),
        Ordering::Unordered => in_place::InPlace::default(),
    };
    if plan.info.incoming.get(&EdgeTarget::Block(entry)).is_some_and(|e| !e.is_empty()) {
        return Err(AdError::new(
            site(),
            AdErrorKind::Unsupported { what: "a branch back to the entry block".into() },
        ));
    }
    if let Some((from, to)) = adc_passes::loops::irreducible_edge(primal, &plan.info.domtree) {
        let label = |b: Block| primal.dfg.block_name(b).map_or(b.to_string(), str::to_string);
        let what = format!(
            "irreducible control flow: the cycle through ^{} is also entered elsewhere, as \
             the branch back to it from ^{} shows (a `goto` into a loop, or code \
             synthesized for a loop with several exits); only loops with one entry are \
             reversed",
            label(to),
            label(from)
        );
        let at = primal.terminator(from).map_or_else(site, |t| Site::inst(module, primal, t));
        return Err(AdError::new(at, AdErrorKind::Unsupported { what }));
    }
    // A split function whose caller needs the returned pointer's shadow (`RetActivity::
    // Dup`) returns it: the returned block needs a shadow even when nothing active is
    // stored into it here (an allocator function), see `control::forward_terminator`.
    let activity = Activity::analyze(module, request, types, env.facts)?;
    let float_views = float_views(module, primal, request, &activity, types)?;
    check_active_integer_params(module, primal, request, types)?;
    let thread_private = if gpu::is_nvptx(module) {
        ThreadPrivateLoads::compute(module, request.function, |v| activity.is_active_value(v))
    } else {
        ThreadPrivateLoads::default()
    };
    let mut f = Function::new(name, signature);
    f.linkage = Linkage::Internal;
    if !split {
        f.param_attrs = derivative_param_attrs(primal, request);
    }
    // Split mode: the parameters live in an entry block that allocates the frame.
    let params_block = f.dfg.make_block();
    f.layout.append_block(params_block);
    let setup = if split {
        f.dfg.set_block_name(params_block, "adc_entry");
        let setup = f.dfg.make_block();
        f.dfg.set_block_name(setup, "adc_setup");
        setup
    } else {
        f.dfg.set_block_name(params_block, "adc_setup");
        params_block
    };
    let forward_exit = f.dfg.make_block();
    f.dfg.set_block_name(forward_exit, "adc_forward_exit");
    let mut synth = Synth {
        module,
        primal,
        request,
        signatures,
        runtime,
        plan,
        activity,
        types,
        facts: env.facts,
        f,
        setup,
        vmap: HashMap::new(),
        bmap: HashMap::new(),
        origin: HashMap::new(),
        inst_origin: HashMap::new(),
        in_place,
        thread_private,
        neighbor_slots: HashMap::new(),
        shadows: HashMap::new(),
        heap_shadows: HashMap::new(),
        adjoint_slots: HashMap::new(),
        float_views,
        cache: Cache::default(),
        cur: setup,
        cur_primal: None,
        rev_entry: HashMap::new(),
        rev_last: HashMap::new(),
        forward_exit,
        splits,
        split_calls: HashMap::new(),
        custom_calls: HashMap::new(),
        split: None,
        own_arena: None,
    };
    synth.cache.stats.plan.function = primal.name.clone();
    synth.cache.stats.plan.options = env.cache.to_string();
    synth.cache.stats.plan.deferred_frees = synth.plan.rereads.deferred_blocks(primal);
    synth.bind_parameters(params_block, entry);
    if split {
        synth.begin_split(params_block, layout);
    }
    synth.emit_forward()?;
    synth.emit_reverse()?;
    synth.finish_tapes();
    synth.release_own_arena();
    synth.finish_split();
    // Only the first (heuristic) synthesis asks for the cut; the second applies it.
    let first_pass = synth.plan.store_instead.is_empty();
    let store_instead = if env.cache.planner == Planner::MinCut && !split && first_pass {
        synth.plan.min_cut_stores(&synth.cache.roots)
    } else {
        HashSet::new()
    };
    let has_split_calls = !synth.split_calls.is_empty();
    Ok(Planned { function: synth.f, stats: synth.cache.stats, store_instead, has_split_calls })
}

/// `noalias` of the primal's pointer parameters carries over to the same parameters of
/// the derivative: it reads and writes their objects exactly as the primal does, and a
/// shadow never points into primal memory (Enzyme's contract for `enzyme_dup`). Shadows
/// get nothing: two read-only `restrict` inputs may legally be one array, and then their
/// shadows are one array too, written through both.
fn derivative_param_attrs(primal: &Function, request: &DiffRequest) -> Vec<ParamAttrs> {
    let mut attrs = Vec::new();
    for ((ty, activity), primal_attrs) in
        primal.signature.params.iter().zip(&request.args).zip(&primal.param_attrs)
    {
        let noalias = primal_attrs.contains(ParamAttrs::NOALIAS);
        attrs.push(if noalias { ParamAttrs::NOALIAS } else { ParamAttrs::empty() });
        if matches!(activity, ArgActivity::Dup | ArgActivity::DupNoNeed) && ty.is_ptr() {
            attrs.push(ParamAttrs::empty());
        }
    }
    attrs
}

/// The derivative's signature as fixed by `crate::request`.
fn derivative_signature(
    primal: &Function,
    request: &DiffRequest,
    split: bool,
) -> Result<Signature, AdError> {
    let site = || Site::function(&primal.name);
    let bad = |what: String| AdError::new(site(), AdErrorKind::Unsupported { what });
    if request.args.len() != primal.signature.params.len() {
        return Err(bad(format!(
            "a request with {} argument activities for a function of {} parameters",
            request.args.len(),
            primal.signature.params.len()
        )));
    }
    if primal.signature.varargs {
        return Err(bad(format!("@{}, a function of variable arguments", primal.name)));
    }
    if request.width != 1 {
        return Err(bad(format!("reverse mode of width {}", request.width)));
    }
    let mut params = Vec::new();
    let mut adjoints = Vec::new();
    for (index, (ty, activity)) in primal.signature.params.iter().zip(&request.args).enumerate() {
        params.push(ty.clone());
        match activity {
            ArgActivity::Const => {}
            ArgActivity::Active if has_float(ty) && !has_pointer(ty) => adjoints.push(ty.clone()),
            // An integer carrying float bits: its adjoint comes back as bits of the same
            // type, so the signature does not depend on the type analysis.
            ArgActivity::Active if may_carry_float_bits(ty) => adjoints.push(ty.clone()),
            ArgActivity::Active => {
                return Err(bad(format!("argument {index} of type {ty} as active (enzyme_out)")))
            }
            ArgActivity::Dup | ArgActivity::DupNoNeed if ty.is_ptr() => params.push(ty.clone()),
            ArgActivity::Dup | ArgActivity::DupNoNeed => {
                return Err(bad(format!(
                    "argument {index} of type {ty} with a shadow (only pointers have shadows)"
                )))
            }
        }
    }
    match request.ret {
        RetActivity::Const => {}
        RetActivity::Active => match &primal.signature.ret {
            Some(ty) if has_float(ty) && !has_pointer(ty) => {}
            // Float bits returned as an integer: its adjoint comes in as bits of that type.
            Some(ty) if may_carry_float_bits(ty) => {}
            other => {
                let ty = other.as_ref().map_or("void".to_string(), |t| t.to_string());
                return Err(bad(format!("an active return of type {ty}")));
            }
        },
        // Split functions return the shadow of a returned pointer.
        RetActivity::Dup if split && primal.signature.ret.as_ref().is_some_and(|t| t.is_ptr()) => {}
        RetActivity::Dup => return Err(bad("a duplicated return in reverse mode".into())),
    }
    let ret = match adjoints.len() {
        0 => None,
        1 => adjoints.pop(),
        _ => Some(Type::structure(adjoints, false)),
    };
    Ok(Signature::new(params, ret))
}

/// The float types of the adjoints of the active integer values of `primal` (copies of
/// float bits through integer loads, stores, selects and block parameters): an error
/// naming the value's definition when the type analysis cannot tell which floats they
/// hold, since dropping their adjoints would make the derivative silently wrong.
fn float_views(
    module: &Module,
    primal: &Function,
    request: &DiffRequest,
    activity: &Activity,
    types: &TypeAnalysis,
) -> Result<HashMap<Value, Type>, AdError> {
    let mut views = HashMap::new();
    for (value, data) in primal.dfg.values.iter() {
        let lane = data.ty.lane_type();
        if !lane.is_int() || *lane == Type::I1 || !activity.is_active_value(value) {
            continue;
        }
        let at = match data.def {
            ValueDef::Result(inst) => Some(inst),
            ValueDef::Param(block, _) => primal.layout.block_insts(block).first().copied(),
        };
        let Some(at) = at else { continue };
        if let Some(view) = types.float_view(module, request.function, value, at)? {
            views.insert(value, view);
        }
    }
    Ok(views)
}

/// An `Active` integer parameter is a float's bits passed as an integer; one the type
/// analysis proves an integer (a count, an index) has no adjoint to return, so asking for
/// it is an error naming the parameter rather than a zero.
fn check_active_integer_params(
    module: &Module,
    primal: &Function,
    request: &DiffRequest,
    types: &TypeAnalysis,
) -> Result<(), AdError> {
    let Some(entry) = primal.layout.entry_block() else { return Ok(()) };
    let Some(&at) = primal.layout.block_insts(entry).first() else { return Ok(()) };
    let params = primal.dfg.block_params(entry);
    for (index, (param, activity)) in params.iter().zip(&request.args).enumerate() {
        let ty = primal.dfg.value_type(*param);
        if *activity != ArgActivity::Active || has_float(ty) {
            continue;
        }
        // Unknown or conflicting facts are reported where the value is differentiated.
        if let Ok(None) = types.value_float_kind(module, request.function, *param, at) {
            return Err(AdError::new(
                Site::function(&primal.name),
                AdErrorKind::Unsupported {
                    what: format!(
                        "argument {index} of type {ty} as active: it holds an integer, not a \
                         float's bits"
                    ),
                },
            ));
        }
    }
    Ok(())
}

/// The value an adjoint starts from: `-0.0` for floats (and float vectors), the neutral
/// element of IEEE addition, so that the post-AD `egraph` folds the first `-0.0 + d`
/// of every accumulation into `d` exactly; `+0.0` would not fold (`-0.0 + +0.0` is
/// `+0.0`). Returned adjoints are normalized back to `+0.0` (`emit_return`).
fn adjoint_zero(ty: &Type) -> Constant {
    let lane = match ty.lane_type() {
        Type::F32 => Constant::f32(-0.0),
        Type::F64 => Constant::f64(-0.0),
        _ => return Constant::Zero,
    };
    match ty {
        Type::F32 | Type::F64 => lane,
        Type::Vector(_, n) => Constant::Elements(vec![lane; *n as usize]),
        _ => Constant::Zero,
    }
}

/// Number of fields of a struct or elements of an array.
fn aggregate_len(ty: &Type) -> u64 {
    match ty {
        Type::Struct(s) => s.fields.len() as u64,
        Type::Array(_, n) => *n,
        _ => 0,
    }
}

impl<'a> Synth<'a> {
    pub fn error(&self, inst: Inst, kind: AdErrorKind) -> AdError {
        AdError::new(Site::inst(self.module, self.primal, inst), kind)
    }

    pub fn unsupported(&self, inst: Inst, what: impl Into<String>) -> AdError {
        self.error(inst, AdErrorKind::Unsupported { what: what.into() })
    }

    fn result_type(&self, data: &InstructionData) -> Option<Type> {
        let signatures = self.signatures;
        let splits = &*self.splits;
        self.f.dfg.result_type(data, &|id| {
            signatures.get(&id).cloned().or_else(|| splits.signature_of(id))
        })
    }

    /// Appends an instruction at the end of `self.cur`.
    pub fn ins(&mut self, data: InstructionData) -> Option<Value> {
        let ty = self.result_type(&data);
        let inst = self.f.dfg.make_inst(data, ty);
        self.f.layout.append_inst(inst, self.cur);
        self.f.dfg.inst_result(inst)
    }

    /// Appends an instruction that has a result.
    pub fn val(&mut self, data: InstructionData) -> Value {
        let name = data.opcode_name();
        self.ins(data).unwrap_or_else(|| panic!("synthesis emitted `{name}` for its result"))
    }

    /// Inserts an instruction before `before` (in whichever block it is).
    pub fn ins_before(&mut self, before: Inst, data: InstructionData) -> Option<Value> {
        let ty = self.result_type(&data);
        let inst = self.f.dfg.make_inst(data, ty);
        self.f.layout.insert_inst_before(inst, before);
        self.f.dfg.inst_result(inst)
    }

    /// Runs `emit`, which appends at `self.cur`, so that its code lands right before
    /// `at`: `at` and the instructions after it leave their block meanwhile.
    pub(crate) fn emit_before(&mut self, at: Inst, emit: impl FnOnce(&mut Self)) {
        let Some(block) = self.f.layout.inst_block(at) else { return };
        let index = self.f.layout.inst_index(at).unwrap_or(0);
        let moved: Vec<Inst> = self.f.layout.block_insts(block)[index..].to_vec();
        for &inst in &moved {
            self.f.layout.remove_inst(inst);
        }
        let saved = std::mem::replace(&mut self.cur, block);
        emit(self);
        self.cur = saved;
        for inst in moved {
            self.f.layout.append_inst(inst, block);
        }
    }

    /// Emits `emit` at the end of `block`, before its terminator.
    pub(crate) fn at_end_of(&mut self, block: Block, emit: impl FnOnce(&mut Self)) {
        if let Some(term) = self.f.layout.last_inst(block) {
            self.emit_before(term, emit);
        }
    }

    /// Inserts an instruction at the end of the setup block (before its terminator).
    pub fn ins_setup(&mut self, data: InstructionData) -> Option<Value> {
        match self.f.layout.last_inst(self.setup) {
            Some(term) if self.f.dfg.insts[term].is_terminator() => self.ins_before(term, data),
            _ => {
                let saved = std::mem::replace(&mut self.cur, self.setup);
                let result = self.ins(data);
                self.cur = saved;
                result
            }
        }
    }

    pub fn new_block(&mut self) -> Block {
        let block = self.f.dfg.make_block();
        self.f.layout.append_block(block);
        block
    }

    pub fn constant(&mut self, ty: Type, value: Constant) -> Value {
        self.val(InstructionData::Const { ty, value })
    }

    pub fn iconst(&mut self, ty: Type, value: i128) -> Value {
        let c = Constant::int(&ty, value);
        self.constant(ty, c)
    }

    pub fn zero(&mut self, ty: &Type) -> Value {
        self.constant(ty.clone(), Constant::Zero)
    }

    /// A float constant of type `ty` (f32, f64, or a splat vector of them).
    pub fn float_const(&mut self, ty: &Type, value: f64) -> Value {
        let lane = match ty.lane_type() {
            Type::F32 => Constant::f32(value as f32),
            _ => Constant::f64(value),
        };
        let c = match ty {
            Type::Vector(_, n) => Constant::Elements(vec![lane; *n as usize]),
            _ => lane,
        };
        self.constant(ty.clone(), c)
    }

    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.val(InstructionData::Binary { op, flags: InstFlags::empty(), args: [a, b] })
    }

    pub fn load(&mut self, ty: &Type, ptr: Value) -> Value {
        let align = ty.align() as u32;
        self.val(InstructionData::Load { ty: ty.clone(), ptr, align, volatile: false })
    }

    pub fn store(&mut self, value: Value, ptr: Value) {
        let align = self.f.dfg.value_type(value).align() as u32;
        self.ins(InstructionData::Store { value, ptr, align, volatile: false });
    }

    pub fn ptradd(&mut self, ptr: Value, offset: Value) -> Value {
        self.val(InstructionData::PtrAdd { flags: InstFlags::empty(), ptr, offset })
    }

    pub fn ty(&self, value: Value) -> Type {
        self.f.dfg.value_type(value).clone()
    }

    /// `old + d` on the float leaves of `ty`; other leaves keep `old`.
    ///
    /// The additions carry `reassoc`: the order in which a value's adjoint contributions
    /// arrive is an artifact of the reverse sweep, not the program's, so later passes may
    /// regroup them (`interleave` splits a sum carried by a reversed loop in two, egraph
    /// factors `dx += a*w; dx += b*w`).
    pub fn accumulate(&mut self, old: Value, d: Value) -> Value {
        let ty = self.ty(old);
        let add = InstructionData::Binary {
            op: BinaryOp::Fadd,
            flags: InstFlags::REASSOC,
            args: [old, d],
        };
        match &ty {
            Type::F32 | Type::F64 => self.val(add),
            Type::Vector(elem, _) if elem.is_float() => self.val(add),
            Type::Struct(_) | Type::Array(..) if has_float(&ty) => {
                let mut acc = old;
                for index in 0..aggregate_len(&ty) {
                    let field = ty.element_type(index).cloned().unwrap_or(Type::I8);
                    if !has_float(&field) {
                        continue;
                    }
                    let indices = vec![index as u32];
                    let o = self.val(InstructionData::ExtractValue {
                        aggregate: old,
                        indices: indices.clone(),
                    });
                    let e = self.val(InstructionData::ExtractValue {
                        aggregate: d,
                        indices: indices.clone(),
                    });
                    let sum = self.accumulate(o, e);
                    acc = self.val(InstructionData::InsertValue {
                        aggregate: acc,
                        value: sum,
                        indices,
                    });
                }
                acc
            }
            _ => old,
        }
    }

    /// `old` with its float leaves set to zero (the shadow of memory that was overwritten).
    pub fn zero_float_leaves(&mut self, old: Value) -> Value {
        let ty = self.ty(old);
        match &ty {
            Type::F32 | Type::F64 => self.zero(&ty),
            Type::Vector(elem, _) if elem.is_float() => self.zero(&ty),
            Type::Struct(_) | Type::Array(..) if has_float(&ty) => {
                let mut acc = old;
                for index in 0..aggregate_len(&ty) {
                    let field = ty.element_type(index).cloned().unwrap_or(Type::I8);
                    if !has_float(&field) {
                        continue;
                    }
                    let indices = vec![index as u32];
                    let o = self.val(InstructionData::ExtractValue {
                        aggregate: old,
                        indices: indices.clone(),
                    });
                    let z = self.zero_float_leaves(o);
                    acc = self.val(InstructionData::InsertValue {
                        aggregate: acc,
                        value: z,
                        indices,
                    });
                }
                acc
            }
            _ => old,
        }
    }

    /// The type of a primal value's adjoint: its own type, or the float type of the bits
    /// an active integer carries (see [`float_views`]).
    pub fn adjoint_type(&self, value: Value) -> Type {
        match self.float_views.get(&value) {
            Some(view) => view.clone(),
            None => self.primal.dfg.value_type(value).clone(),
        }
    }

    /// The adjoint `d` of an active integer value carrying float bits as the bits a
    /// derivative passes (the value's own type: a returned parameter adjoint, the adjoint
    /// of a call's result); other adjoints unchanged.
    fn adjoint_as_bits(&mut self, value: Value, d: Value) -> Value {
        let ty = self.primal.dfg.value_type(value).clone();
        self.reinterpret(d, ty)
    }

    /// The inverse of [`Self::adjoint_as_bits`]: bits passed as the adjoint of the
    /// integer `value` (a call's argument, a split function's returned value), viewed as
    /// that value's adjoint.
    fn adjoint_from_bits(&mut self, value: Value, bits: Value) -> Value {
        let ty = self.adjoint_type(value);
        self.reinterpret(bits, ty)
    }

    /// `value`'s bits as type `ty` (a bitcast, none when the types agree).
    pub(super) fn reinterpret(&mut self, value: Value, ty: Type) -> Value {
        if self.ty(value) == ty {
            return value;
        }
        self.val(InstructionData::Cast { op: CastOp::Bitcast, arg: value, ty })
    }

    /// Whether the primal value carries a derivative (has an adjoint).
    pub fn is_active(&self, value: Value) -> bool {
        self.activity.is_active_value(value)
    }

    /// The stack slot of a primal value's adjoint, created (zeroed) on first use.
    fn adjoint_slot(&mut self, value: Value) -> Value {
        if let Some(slot) = self.adjoint_slots.get(&value) {
            return *slot;
        }
        let ty = self.adjoint_type(value);
        let align = ty.align() as u32;
        let slot = self
            .ins_setup(InstructionData::Alloca { ty: ty.clone(), count: None, align })
            .expect("alloca has a result");
        let zero_value = adjoint_zero(&ty);
        let zero = self.ins_setup(InstructionData::Const { ty, value: zero_value });
        let zero = zero.expect("const has a result");
        self.ins_setup(InstructionData::Store { value: zero, ptr: slot, align, volatile: false });
        self.adjoint_slots.insert(value, slot);
        slot
    }

    /// `adjoint(value) += d`, for an active primal value (others are ignored).
    pub fn add_adjoint(&mut self, value: Value, d: Value) {
        if !self.is_active(value) || self.is_primal_constant(value) {
            return;
        }
        let slot = self.adjoint_slot(value);
        let ty = self.adjoint_type(value);
        let old = self.load(&ty, slot);
        let new = self.accumulate(old, d);
        self.store(new, slot);
    }

    /// Reads the adjoint of an active primal value and resets it to zero: its definition
    /// is being undone, so later (earlier in time) instances start from zero.
    pub fn take_adjoint(&mut self, value: Value) -> Value {
        let slot = self.adjoint_slot(value);
        let ty = self.adjoint_type(value);
        let d = self.load(&ty, slot);
        let zero = self.constant(ty.clone(), adjoint_zero(&ty));
        self.store(zero, slot);
        d
    }

    fn is_primal_constant(&self, value: Value) -> bool {
        self.primal.dfg.is_const(value)
    }

    /// The forward clone of a primal value.
    pub fn fwd(&self, value: Value) -> Value {
        self.vmap[&value]
    }

    /// A primal value as available at the current point of the reverse pass.
    pub fn primal_in_reverse(&mut self, value: Value) -> Value {
        let forward = self.fwd(value);
        self.avail(forward)
    }

    /// The shadow of a primal pointer as available in the reverse pass.
    pub fn shadow_in_reverse(&mut self, ptr: Value) -> Option<Value> {
        let shadow = *self.shadows.get(&ptr)?;
        Some(self.avail(shadow))
    }

    /// Maps the primal entry parameters to the derivative's parameters and shadows.
    fn bind_parameters(&mut self, params_block: Block, entry: Block) {
        let params = self.primal.dfg.block_params(entry).to_vec();
        for (index, param) in params.iter().enumerate() {
            let ty = self.primal.dfg.value_type(*param).clone();
            let value = self.f.dfg.append_block_param(params_block, ty.clone());
            self.vmap.insert(*param, value);
            if let Some(name) = self.primal.dfg.value_name(*param) {
                self.f.dfg.set_value_name(value, name);
            }
            if self.request.args[index].has_shadow() {
                let shadow = self.f.dfg.append_block_param(params_block, ty);
                if let Some(name) = self.primal.dfg.value_name(*param) {
                    self.f.dfg.set_value_name(shadow, &format!("{name}.shadow"));
                }
                self.shadows.insert(*param, shadow);
            }
        }
    }

    /// Clones the primal into the forward pass, adding shadows and the forward exit.
    fn emit_forward(&mut self) -> Result<(), AdError> {
        let rpo = self.plan.info.rpo.clone();
        for &block in &rpo {
            let clone = self.f.dfg.make_block();
            self.f.layout.append_block(clone);
            if let Some(name) = self.primal.dfg.block_name(block) {
                self.f.dfg.set_block_name(clone, name);
            }
            self.bmap.insert(block, clone);
            self.origin.insert(clone, block);
        }
        // Block parameters (and their shadows) exist before any branch is cloned.
        let entry = rpo[0];
        // The shadows of pointer parameters follow all primal parameters, in order (the
        // cloned branches append their shadow arguments likewise).
        for &block in &rpo[1..] {
            let params = self.primal.dfg.block_params(block).to_vec();
            for &param in &params {
                let ty = self.primal.dfg.value_type(param).clone();
                let value = self.f.dfg.append_block_param(self.bmap[&block], ty);
                if let Some(name) = self.primal.dfg.value_name(param) {
                    self.f.dfg.set_value_name(value, name);
                }
                self.vmap.insert(param, value);
            }
            for &param in &params {
                if self.activity.needs_shadow(param) {
                    let ty = self.primal.dfg.value_type(param).clone();
                    let shadow = self.f.dfg.append_block_param(self.bmap[&block], ty);
                    self.set_shadow(param, shadow);
                }
            }
        }
        self.f.layout.append_block(self.forward_exit);
        self.create_loop_slots();
        self.cur = self.setup;
        let first = self.bmap[&entry];
        let first = adc_ir::BlockCall::new(first, Vec::new());
        if let Some(split) = &self.split {
            let (phase, reverse_start, fwd_init) =
                (split.phase, split.reverse_start, split.fwd_init);
            self.ins(InstructionData::Brif {
                cond: phase,
                then_dest: adc_ir::BlockCall::new(reverse_start, Vec::new()),
                else_dest: adc_ir::BlockCall::new(fwd_init, Vec::new()),
            });
            self.cur = fwd_init;
        }
        self.zero_shared_shadows();
        self.ins(InstructionData::Jump { dest: first });
        for &block in &rpo {
            self.cur = self.bmap[&block];
            for &inst in self.primal.layout.block_insts(block) {
                if self.primal.dfg.insts[inst].is_terminator() {
                    self.forward_terminator(block, inst)?;
                } else {
                    self.forward_inst(inst)?;
                }
            }
        }
        self.store_loop_ivs();
        Ok(())
    }

    /// Clones one non-terminator instruction, with the shadow code it needs.
    fn forward_inst(&mut self, inst: Inst) -> Result<(), AdError> {
        // Freed where the reverse pass undoes the allocation (`crate::cache::reread`, `heap`).
        if self.plan.rereads.deferred_frees.contains(&inst) {
            return Ok(());
        }
        if self.forward_split_call(inst)? {
            return Ok(());
        }
        let mut data = self.primal.dfg.insts[inst].clone();
        let mut missing = None;
        data.map_args(|v| match self.vmap.get(&v) {
            Some(mapped) => *mapped,
            None => {
                missing = Some(v);
                v
            }
        });
        if missing.is_some() {
            return Err(self.unsupported(inst, "an operand that does not dominate its use"));
        }
        let result = self.ins(data);
        if let Some(clone) = self.f.layout.last_inst(self.cur) {
            self.inst_origin.insert(clone, inst);
        }
        if let (Some(primal_result), Some(forward_result)) =
            (self.primal.dfg.inst_result(inst), result)
        {
            if let Some(name) = self.primal.dfg.value_name(primal_result) {
                self.f.dfg.set_value_name(forward_result, name);
            }
            self.vmap.insert(primal_result, forward_result);
        }
        self.forward_shadow(inst)
    }

    /// Undoes every reachable primal block, last block first.
    fn emit_reverse(&mut self) -> Result<(), AdError> {
        let rpo = self.plan.info.rpo.clone();
        for &block in &rpo {
            let region = self.f.dfg.make_block();
            self.rev_entry.insert(block, region);
        }
        // The forward exit continues with the reverse region of the block that returned
        // (in split mode it returns, and the reverse phase starts in its own block).
        self.cur = self.forward_exit;
        if self.split.is_some() {
            self.emit_forward_return();
            self.cur = self.split.as_ref().map_or(self.cur, |s| s.reverse_start);
            self.f.layout.append_block(self.cur);
        }
        self.leave_along_incoming(EdgeTarget::Exit, Vec::new());
        for &block in rpo.iter().rev() {
            let region = self.rev_entry[&block];
            self.f.layout.append_block(region);
            self.cur = region;
            self.cur_primal = Some(block);
            self.cache.enter_region();
            let insts: Vec<Inst> = self.primal.layout.block_insts(block).to_vec();
            for &inst in insts.iter().rev() {
                self.reverse_inst(inst)?;
            }
            self.rev_last.insert(block, self.cur);
            self.leave_block(block)?;
        }
        Ok(())
    }

    /// Emits the adjoint code of one primal instruction.
    fn reverse_inst(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let primal = self.primal;
        match &primal.dfg.insts[inst] {
            I::Return { value } => {
                if let (Some(value), RetActivity::Active) = (value, self.request.ret) {
                    let ty = self.adjoint_type(*value);
                    let seed = match self.split.as_ref().and_then(|s| s.d_ret) {
                        Some(d_ret) => self.adjoint_from_bits(*value, d_ret),
                        None => self.seed(&ty),
                    };
                    self.add_adjoint(*value, seed);
                }
                Ok(())
            }
            I::Jump { .. } | I::Brif { .. } | I::Switch { .. } | I::Unreachable => Ok(()),
            I::Load { .. }
            | I::Store { .. }
            | I::MemCopy { .. }
            | I::MemSet { .. }
            | I::Alloca { .. }
            | I::PtrAdd { .. }
            | I::AtomicRmw { .. }
            | I::CmpXchg { .. }
            | I::Fence { .. } => self.reverse_memory(inst),
            I::Call { callee, .. } if self.reverse_gpu_intrinsic(*callee).is_some() => Ok(()),
            // A pointer between address spaces (GPU code) has a shadow, not an adjoint.
            I::Cast { op: adc_ir::CastOp::Addrspacecast, .. } => Ok(()),
            I::Call { .. } | I::CallIndirect { .. } => self.reverse_call(inst),
            _ => self.reverse_arith(inst),
        }
    }

    /// 1.0 in every float leaf of `ty` (the seed of an active return).
    fn seed(&mut self, ty: &Type) -> Value {
        match ty {
            Type::Struct(_) | Type::Array(..) => {
                let mut acc = self.zero(ty);
                for index in 0..aggregate_len(ty) {
                    let field = ty.element_type(index).cloned().unwrap_or(Type::I8);
                    if !has_float(&field) {
                        continue;
                    }
                    let value = self.seed(&field);
                    acc = self.val(InstructionData::InsertValue {
                        aggregate: acc,
                        value,
                        indices: vec![index as u32],
                    });
                }
                acc
            }
            _ => self.float_const(ty, 1.0),
        }
    }
}
