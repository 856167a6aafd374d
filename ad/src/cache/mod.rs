//! Cache planning: how the reverse pass gets the forward values it needs.
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
//!      (`tape`: records, one allocation per loop nest, stack tapes, early frees).
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
//! Within one reverse region each requested value is materialized once (memoised); the
//! memo is cleared at every region start.

mod cost;
mod cse;
mod loop_ivs;
mod mincut;
mod options;
mod report;
mod tape;
mod tape_reuse;

pub use cost::{libm_cycles, STORE_CYCLES_PER_BYTE};
pub(crate) use loop_ivs::{LoopDecider, LoopIvState};
pub use options::{CacheOptions, Planner, TOGGLES};
pub use report::{PlanEntry, PlanReport, TapeAllocation, TapeEntry};
pub(crate) use tape::{build_tape_push, Tape, TapeGrowth, TAPE_TOP_OFFSET};
pub use tape::{define_tape_push, TapeRole, TapeStorage, STACK_TAPE_LIMIT};
pub(crate) use tape_reuse::{add_tape_slots, define_tape_reuse, pointer_slot, TapeReuse};

use std::collections::{HashMap, HashSet};

use adc_ir::{Block, Inst, InstructionData, Value, ValueDef};

use crate::reverse::Synth;

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

#[derive(Default)]
pub(crate) struct Cache {
    memo: HashMap<Value, Value>,
    slots: HashMap<Value, Value>,
    tape_store: tape::TapeStore,
    pub final_return: Option<Inst>,
    pub stats: CacheStats,
    pub options: CacheOptions,
    pub loop_ivs: LoopIvState,
    /// Primal values the reverse pass asked for directly (not as operands of a
    /// recomputed primal value; operands of a recomputed shadow count): the roots of the
    /// min-cut.
    pub roots: HashSet<Value>,
    recompute_depth: usize,
    /// Primal values stored although recomputable (the min-cut's decision).
    pub store_instead: HashSet<Value>,
    /// Forward values already entered in the plan report.
    reported: HashSet<Value>,
    /// Primal value -> the dominating equal value it shares a cache entry with (cache
    /// CSE), computed on first use.
    pub leaders: Option<HashMap<Value, Value>>,
}

impl Cache {
    pub fn new(options: CacheOptions) -> Cache {
        Cache { options, ..Cache::default() }
    }

    /// Starts a new reverse region: materialized values of the previous one do not
    /// dominate it.
    pub fn enter_region(&mut self) {
        self.memo.clear();
    }

    /// Values materialized so far in this region (to restore after emitting a loop body,
    /// whose definitions do not dominate the code after the loop).
    pub fn snapshot(&self) -> HashMap<Value, Value> {
        self.memo.clone()
    }

    pub fn restore(&mut self, memo: HashMap<Value, Value>) {
        self.memo = memo;
    }
}

/// Whether an instruction can be re-executed in the reverse pass with the same result.
pub(crate) fn recomputable(data: &InstructionData) -> bool {
    use InstructionData as I;
    data.is_pure_non_trapping()
        || matches!(data, I::Binary { .. } | I::ExtractLane { .. } | I::InsertLane { .. })
}

impl<'a> Synth<'a> {
    /// The primal block a forward value is defined in; `None` for the setup block.
    fn defining_primal_block(&self, value: Value) -> Option<Block> {
        let block = match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => self.f.layout.inst_block(inst)?,
            ValueDef::Param(block, _) => block,
        };
        self.origin.get(&block).copied()
    }

    /// The primal value a forward value clones (`None` for shadows and synthesized code).
    pub(crate) fn primal_of(&self, forward: Value) -> Option<Value> {
        match self.f.dfg.value_def(forward) {
            ValueDef::Result(inst) => {
                let clone_of = *self.inst_origin.get(&inst)?;
                let primal = self.primal.dfg.inst_result(clone_of)?;
                (self.vmap.get(&primal) == Some(&forward)).then_some(primal)
            }
            ValueDef::Param(block, index) => {
                let primal_block = *self.origin.get(&block)?;
                let primal = *self.primal.dfg.block_params(primal_block).get(index as usize)?;
                (self.vmap.get(&primal) == Some(&forward)).then_some(primal)
            }
        }
    }

    /// How `value` (a forward value) reaches the reverse pass.
    pub fn plan(&self, value: Value) -> Strategy {
        let Some(block) = self.defining_primal_block(value) else { return Strategy::Direct };
        if let ValueDef::Result(inst) = self.f.dfg.value_def(value) {
            if matches!(self.f.dfg.insts[inst], InstructionData::Const { .. }) {
                return Strategy::Recompute;
            }
            // A split function's reverse phase runs in another invocation: forward values
            // are never used directly, and memory may have changed in between.
            let split = self.split.is_some();
            if !split && self.info.defined_once_before_exit(block) {
                return Strategy::Direct;
            }
            if let Some(iv) = self.iv_slot_here(value) {
                return if iv.step == 0 { Strategy::Invariant } else { Strategy::IvSlot };
            }
            let stored =
                self.primal_of(value).is_some_and(|p| self.cache.store_instead.contains(&p));
            if recomputable(&self.f.dfg.insts[inst]) && !stored {
                return Strategy::Recompute;
            }
            if !stored && self.libm_recomputed(&self.f.dfg.insts[inst], value) == Some(true) {
                return Strategy::Recompute;
            }
            let unwritten =
                self.inst_origin.get(&inst).is_some_and(|p| self.rereads.loads.contains(p));
            if unwritten && !split && !stored {
                return Strategy::Recompute;
            }
        } else if self.split.is_none() && self.info.defined_once_before_exit(block) {
            return Strategy::Direct;
        } else if self.iv_slot_here(value).is_some() {
            return Strategy::IvSlot;
        }
        if self.info.loops.depth(block) == 0 {
            Strategy::Slot
        } else {
            Strategy::Tape
        }
    }

    /// `value` (a forward value) as usable at the current point of the reverse pass.
    pub fn avail(&mut self, value: Value) -> Value {
        // A root even when an earlier recomputation already made it available.
        let primal = self.primal_of(value);
        if self.cache.recompute_depth == 0 {
            if let Some(p) = primal {
                self.cache.roots.insert(p);
            }
        }
        if let Some(v) = self.cache.memo.get(&value) {
            return *v;
        }
        let mut strategy = self.plan(value);
        let leader = match strategy {
            Strategy::Slot | Strategy::Tape => self.leader_of(primal),
            _ => None,
        };
        if leader.is_some() {
            strategy = Strategy::Shared;
        }
        if self.cache.reported.insert(value) {
            self.report_plan(value, primal, strategy);
        }
        let result = match strategy {
            Strategy::Direct => return value,
            Strategy::Recompute => self.recompute(value),
            Strategy::Slot => {
                let slot = self.slot_of(value);
                let ty = self.ty(value);
                self.load(&ty, slot)
            }
            Strategy::Tape => {
                let (tape, offset) = self.tape_of(value);
                let ty = self.ty(value);
                self.peek_field(&tape, &ty, offset)
            }
            Strategy::Shared => {
                let leader = leader.expect("planned as shared with a leader");
                self.avail(leader)
            }
            Strategy::IvSlot | Strategy::Invariant => {
                let slot = self.iv_slot_here(value).expect("planned as a loop slot").slot;
                let ty = self.ty(value);
                self.load(&ty, slot)
            }
        };
        self.cache.memo.insert(value, result);
        result
    }

    /// The forward clone of the dominating value `primal` equals (cache CSE), if any.
    fn leader_of(&mut self, primal: Option<Value>) -> Option<Value> {
        if !self.cache.options.cse {
            return None;
        }
        let primal = primal?;
        let leader = *self.leaders().get(&primal)?;
        self.vmap.get(&leader).copied()
    }

    /// The equal-value map of the primal function (computed once per synthesis).
    pub(crate) fn leaders(&mut self) -> &HashMap<Value, Value> {
        let (module, primal) = (self.module, self.primal);
        let domtree = &self.info.domtree;
        self.cache.leaders.get_or_insert_with(|| cse::equal_values(module, primal, domtree))
    }

    /// The libm cost model's decision for an instruction of `self.f` defining `value`:
    /// `Some(true)` recompute, `Some(false)` store, `None` not a pure libm call.
    pub(crate) fn libm_recomputed(&self, data: &InstructionData, value: Value) -> Option<bool> {
        let bytes = self.f.dfg.value_type(value).size().max(1);
        cost::recompute_libm(self.module, data, bytes)
    }

    fn recompute(&mut self, value: Value) -> Value {
        let ValueDef::Result(inst) = self.f.dfg.value_def(value) else {
            unreachable!("only instruction results are recomputed")
        };
        let mut data = self.f.dfg.insts[inst].clone();
        // The operands of a recomputed shadow (an address the reverse pass accumulates
        // into) are asked for as directly as the shadow itself: they are roots of the
        // min-cut; those of a recomputed primal value are not.
        let nested = usize::from(self.primal_of(value).is_some());
        self.cache.recompute_depth += nested;
        let operands: Vec<Value> = data.args().into_iter().map(|a| self.avail(a)).collect();
        self.cache.recompute_depth -= nested;
        let mut operands = operands.into_iter();
        data.map_args(|old| operands.next().unwrap_or(old));
        if !matches!(data, InstructionData::Const { .. }) {
            self.cache.stats.recomputed += 1;
        }
        self.val(data)
    }

    /// Where the forward pass must insert code right after `value` is defined.
    fn after_definition(&self, value: Value) -> Inst {
        match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => {
                let block = self.f.layout.inst_block(inst).expect("defined in a laid-out block");
                let insts = self.f.layout.block_insts(block);
                let index = self.f.layout.inst_index(inst).unwrap_or(0);
                insts[(index + 1).min(insts.len() - 1)]
            }
            ValueDef::Param(block, _) => {
                self.f.layout.first_inst(block).expect("a cloned block has a terminator")
            }
        }
    }

    fn slot_of(&mut self, value: Value) -> Value {
        if let Some(slot) = self.cache.slots.get(&value) {
            return *slot;
        }
        let ty = self.ty(value);
        let align = ty.align() as u32;
        let slot = self.new_slot(ty);
        let at = self.after_definition(value);
        self.ins_before(at, InstructionData::Store { value, ptr: slot, align, volatile: false });
        self.cache.slots.insert(value, slot);
        self.cache.stats.slots += 1;
        slot
    }

    /// Memory for one `ty` that both passes reach: a frame slot in a split function (its
    /// reverse phase is another invocation), an `alloca` in the setup block otherwise.
    pub(crate) fn new_slot(&mut self, ty: adc_ir::Type) -> Value {
        if let Some(slot) = self.frame_slot(ty.size(), ty.align()) {
            return slot;
        }
        let align = ty.align() as u32;
        self.ins_setup(InstructionData::Alloca { ty, count: None, align })
            .expect("alloca has a result")
    }
}
