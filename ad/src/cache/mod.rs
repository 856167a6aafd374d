//! Cache planning: how the reverse pass gets the forward values it needs.
//!
//! The planner is a value, [`CachePlan`], computed from the primal function and its
//! analyses (control flow, induction variables, alias facts) before synthesis; the reverse
//! synthesis (`crate::reverse::cache`, `tape`, `loop_ivs`) carries it out and asks it for
//! one decision per value. Nothing here builds code: the plan can be computed and tested
//! on a primal function alone.
//!
//! For each forward value `v` requested at a point of the reverse pass, in this order:
//!
//! 1. **Direct use** when `v` is defined in the derivative's setup block, or in a primal
//!    block outside every loop that dominates every `ret`: it is computed exactly once and
//!    its definition dominates all reverse code.
//! 2. **Recompute** when `v` is a pure instruction (arithmetic, compares, casts, `ptradd`,
//!    lane and aggregate operations, constants): its operands are requested recursively
//!    and the instruction is re-emitted. Division cannot trap here: the forward pass ran
//!    it on the same operands. A load is recomputed when alias analysis proves that no
//!    instruction of the function may write its location (a store, copy, set, or call
//!    that may write it, `free` included), so the memory still holds the loaded value
//!    when the reverse pass runs; other loads are cached.
//! 3. **Cache** otherwise (block parameters, loads, call results):
//!    - outside loops, a **slot**: a stack slot in the setup block, stored right after the
//!      definition, loaded in the reverse pass (the definition dominates every reverse
//!      use, so the slot is written before it is read);
//!    - inside loops, a **tape**: the values of one block share a record pushed once per
//!      execution of the block and popped at the end of the reverse region of the block
//!      (`crate::reverse::tape`: records, one allocation per loop nest, stack tapes,
//!      early frees).
//!      Because the reverse pass replays the forward trace backwards, the top is always
//!      the record the use saw, for nested loops, while loops and any CFG.
//!
//! A value that would be stored but equals a dominating value (same pure computation,
//! or a load of the same unchanged memory) reads that value instead (cache CSE, `cse`).
//! Calls of pure libm functions are recomputed or stored by a cost model (`cost`).
//!
//! The control tape (which edge entered a merge block) uses the same machinery.
//!
//! Induction variables of counted loops are not taped but counted backwards in one slot
//! each, and loop headers are reversed without control-tape entries (`loop_ivs`).
//!
//! The min-cut planner (`mincut`) needs the values the reverse pass reads, which only a
//! synthesis finds: a first synthesis carries out the heuristic plan and records them,
//! and the plan with the cut's decision (`store_instead`) drives a second one.

mod cost;
mod cse;
mod loop_ivs;
mod merges;
mod mincut;
mod options;
mod primal_info;
mod report;
mod reread;
#[cfg(test)]
mod tests;

pub(crate) use cost::pure_libm_call;
use cost::recompute_libm;
pub use cost::{libm_cycles, STORE_CYCLES_PER_BYTE};
use cse::equal_values;
pub(crate) use loop_ivs::{LoopDecider, LoopSlot};
pub use options::{CacheOptions, Planner, TOGGLES};
pub(crate) use primal_info::{Edge, EdgeTarget, PrimalInfo};
pub use report::{PlanEntry, PlanReport, TapeAllocation, TapeEntry, TapeRole, TapeStorage};
pub(crate) use reread::{Ordering, Rereads};

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use adc_ir::{Block, Function, Inst, InstructionData, Module, Value};
use adc_passes::alias::AliasAnalysis;
use adc_passes::effects::ModuleEffects;

/// How a forward value reaches the reverse pass.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Strategy {
    Direct,
    Recompute,
    Slot,
    Tape,
    /// An induction variable read from its IV slot (see `loop_ivs`).
    IvSlot,
    /// A loop-invariant load saved once per loop execution (cache LICM, `loop_ivs`).
    Invariant,
    /// Equal to a dominating value (cache CSE, `cse`): read as that value is.
    Shared,
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub recomputed: usize,
    pub slots: usize,
    /// Merge points outside loops whose incoming edge is kept in a slot, not on the
    /// control tape.
    pub control_slots: usize,
    /// Record tapes (one per forward block with taped values; one per value with
    /// `-cache-records`).
    pub tapes: usize,
    /// Values kept in record tapes.
    pub taped_values: usize,
    /// Tapes whose capacity is known in advance (constant trip counts).
    pub presized_tapes: usize,
    /// Heap allocations of presized tapes (one per loop nest with records).
    pub tape_allocations: usize,
    /// Presized tapes kept in an entry-block `alloca`.
    pub stack_tapes: usize,
    /// Heap tape buffers freed right after the reverse of their loop nest.
    pub early_frees: usize,
    /// Heap tape allocation sites that keep their buffer across calls (`tape-reuse`):
    /// slot globals numbered during synthesis, added to the module after it.
    pub tape_slots: usize,
    /// Split functions: the size of the frame (the tape of `__enzyme_augmentfwd`), fixed
    /// at synthesis; 0 for other derivatives.
    pub frame_bytes: u64,
    /// Induction variables counted backwards in a slot instead of taped.
    pub counted_ivs: usize,
    /// Loop-invariant loads saved once per loop execution (cache LICM).
    pub invariant_slots: usize,
    /// Values that would be stored but share a dominating equal value's entry (cache CSE).
    pub shared: usize,
    /// Values the min-cut planner stores although they could be recomputed.
    pub stored_by_min_cut: usize,
    /// What the planner decided for each value the reverse pass read.
    pub plan: PlanReport,
}

/// The cache plan of one derivative: the facts about the primal it decides from, the
/// slots of counted loops, and the values the min-cut stores although they could be
/// recomputed.
pub(crate) struct CachePlan<'a> {
    pub module: &'a Module,
    pub primal: &'a Function,
    pub options: CacheOptions,
    /// A split function's reverse phase runs in another invocation: forward values are
    /// never used directly, and memory may have changed in between.
    pub split: bool,
    pub info: PrimalInfo,
    /// Primal loads the reverse pass may read again instead of caching, and the primal
    /// `free`s deferred to the reverse pass so that it can.
    pub rereads: Rereads,
    /// The IV and invariant slots, in the order the synthesis creates them.
    pub loop_slots: Vec<LoopSlot>,
    /// Primal values stored although recomputable (the min-cut's decision).
    pub store_instead: HashSet<Value>,
    /// Primal value -> the dominating equal value it shares a cache entry with (cache
    /// CSE), computed on first use.
    leaders: OnceCell<HashMap<Value, Value>>,
    /// The callees' effects of the request (see `activity::ModuleFacts`), for the alias
    /// queries of cache CSE.
    effects: Rc<ModuleEffects>,
}

/// The instruction defining a value the reverse pass asks for, as the synthesis sees it.
pub(crate) struct Definition<'d> {
    /// Its data as cloned into the derivative (the primal's operation).
    pub data: &'d InstructionData,
    /// Bytes a stored copy takes.
    pub bytes: u64,
    /// The primal instruction it clones (`None` for synthesized code).
    pub primal_inst: Option<Inst>,
}

impl<'a> CachePlan<'a> {
    /// The heuristic plan (nothing stored by a min-cut yet) of a defined primal function.
    /// `ordering` says whether the primal's memory operations run in program order (not
    /// on GPUs, not across the two phases of a split function).
    pub fn compute(
        module: &'a Module,
        primal: &'a Function,
        options: CacheOptions,
        split: bool,
        ordering: Ordering,
        alias: &AliasAnalysis,
    ) -> CachePlan<'a> {
        let info = PrimalInfo::new(primal);
        let rereads = reread::rereads(module, primal, alias, ordering);
        let mut plan = CachePlan {
            module,
            primal,
            options,
            split,
            info,
            rereads,
            loop_slots: Vec::new(),
            store_instead: HashSet::new(),
            leaders: OnceCell::new(),
            effects: Rc::clone(alias.effects()),
        };
        plan.loop_slots = plan.plan_loop_slots(alias);
        plan
    }

    /// The equal-value map of the primal function (cache CSE).
    pub fn leaders(&self) -> &HashMap<Value, Value> {
        self.leaders.get_or_init(|| {
            equal_values(self.module, self.primal, &self.info.domtree, Rc::clone(&self.effects))
        })
    }

    /// How a value defined in the primal block `block` reaches the reverse pass: `def` is
    /// its instruction (`None` for a block parameter), `primal` the primal value it clones,
    /// and `loop_slot` the step of its loop slot when the reverse region being emitted lies
    /// in the slot's loop.
    pub fn strategy(
        &self,
        block: Block,
        def: Option<Definition<'_>>,
        primal: Option<Value>,
        loop_slot: Option<i128>,
    ) -> Strategy {
        if let Some(def) = def {
            if matches!(def.data, InstructionData::Const { .. }) {
                return Strategy::Recompute;
            }
            if !self.split && self.info.defined_once_before_exit(block) {
                return Strategy::Direct;
            }
            if let Some(step) = loop_slot {
                return if step == 0 { Strategy::Invariant } else { Strategy::IvSlot };
            }
            let stored = primal.is_some_and(|p| self.store_instead.contains(&p));
            if recomputable(def.data) && !stored {
                return Strategy::Recompute;
            }
            if !stored && recompute_libm(self.module, def.data, def.bytes) == Some(true) {
                return Strategy::Recompute;
            }
            let unwritten = def.primal_inst.is_some_and(|p| self.rereads.loads.contains(&p));
            if unwritten && !self.split && !stored {
                return Strategy::Recompute;
            }
        } else if !self.split && self.info.defined_once_before_exit(block) {
            return Strategy::Direct;
        } else if loop_slot.is_some() {
            return Strategy::IvSlot;
        } else if let Some(param) = primal {
            let stored = self.store_instead.contains(&param);
            if !stored && self.merged_param(param).is_some() {
                return Strategy::Recompute;
            }
        }
        if self.info.loops.depth(block) == 0 {
            Strategy::Slot
        } else {
            Strategy::Tape
        }
    }
}

/// Whether an instruction can be re-executed in the reverse pass with the same result.
pub(crate) fn recomputable(data: &InstructionData) -> bool {
    use InstructionData as I;
    data.is_pure_non_trapping()
        || matches!(data, I::Binary { .. } | I::ExtractLane { .. } | I::InsertLane { .. })
}
