//! The synthesis side of caching: carries out the cache plan (`crate::cache`) for each
//! forward value the reverse pass asks for, by using it directly, recomputing it, or
//! storing it in a slot or a tape (`tape`), and records what it did in the plan report.
//!
//! Within one reverse region each requested value is materialized once (memoised); the
//! memo is cleared at every region start.

use std::collections::{HashMap, HashSet};

use adc_ir::{Block, Inst, InstFlags, InstructionData, Value, ValueDef};

use super::loop_ivs::LoopIvState;
use super::tape::TapeStore;
use super::Synth;
use crate::cache::{
    pure_libm_call, CacheStats, Definition, PlanEntry, Strategy, STORE_CYCLES_PER_BYTE,
};

#[derive(Default)]
pub(crate) struct Cache {
    memo: HashMap<Value, Value>,
    slots: HashMap<Value, Value>,
    pub(super) tape_store: TapeStore,
    pub final_return: Option<Inst>,
    pub stats: CacheStats,
    pub loop_ivs: LoopIvState,
    /// Primal values the reverse pass asked for directly (not as operands of a
    /// recomputed primal value; operands of a recomputed shadow count): the roots of the
    /// min-cut.
    pub roots: HashSet<Value>,
    recompute_depth: usize,
    /// Forward values already entered in the plan report.
    reported: HashSet<Value>,
}

impl Cache {
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

impl<'a> Synth<'a> {
    /// The primal block a forward value is defined in; `None` for the setup block.
    pub(super) fn defining_primal_block(&self, value: Value) -> Option<Block> {
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

    /// How `value` (a forward value) reaches the reverse pass: the plan's decision, given
    /// what the synthesis knows of the value and where the reverse pass is.
    pub fn plan(&self, value: Value) -> Strategy {
        let Some(block) = self.defining_primal_block(value) else { return Strategy::Direct };
        let def = match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => Some(Definition {
                data: &self.f.dfg.insts[inst],
                bytes: self.f.dfg.value_type(value).size().max(1),
                primal_inst: self.inst_origin.get(&inst).copied(),
            }),
            ValueDef::Param(..) => None,
        };
        let loop_slot = self.iv_slot_here(value).map(|iv| iv.step);
        self.plan.strategy(block, def, self.primal_of(value), loop_slot)
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
        if !self.plan.options.cse {
            return None;
        }
        let primal = primal?;
        let leader = *self.plan.leaders().get(&primal)?;
        self.vmap.get(&leader).copied()
    }

    fn recompute(&mut self, value: Value) -> Value {
        let ValueDef::Result(inst) = self.f.dfg.value_def(value) else {
            return self.recompute_merged_param(value);
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

    /// A parameter of a merge decided by one condition (`crate::cache::MergedParam`): the
    /// `select` of the values its two edges pass.
    fn recompute_merged_param(&mut self, value: Value) -> Value {
        let primal = self.primal_of(value).expect("a recomputed parameter is a primal one");
        let merged = self.plan.merged_param(primal).expect("planned as a merged parameter");
        self.cache.recompute_depth += 1;
        let [cond, when_true, when_false] =
            [merged.cond, merged.when_true, merged.when_false].map(|p| self.primal_in_reverse(p));
        self.cache.recompute_depth -= 1;
        self.cache.stats.recomputed += 1;
        self.val(InstructionData::Select {
            flags: InstFlags::empty(),
            args: [cond, when_true, when_false],
        })
    }

    /// Where the forward pass must insert code right after `value` is defined.
    pub(super) fn after_definition(&self, value: Value) -> Inst {
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

    /// Memory for one `ty` that both passes reach: an `alloca` in the setup block; in a
    /// split function (whose reverse phase is another invocation) also a frame slot that
    /// the forward phase copies it to when it returns and the reverse phase reads it back
    /// from (`Synth::mirror_slots`), so that within each phase the slot is a local the
    /// post-AD pipeline keeps in registers. GPU split functions use the frame slot itself:
    /// their tape pushes onto local headers are rewritten to thread-local buffers
    /// (`gpu_tapes`), which must not be left to outlive the forward phase.
    pub(crate) fn new_slot(&mut self, ty: adc_ir::Type) -> Value {
        let mirrored = self.split.is_some() && !self.is_gpu_code();
        if !mirrored {
            if let Some(slot) = self.frame_slot(ty.size(), ty.align()) {
                return slot;
            }
        }
        let align = ty.align() as u32;
        let local = self
            .ins_setup(InstructionData::Alloca { ty: ty.clone(), count: None, align })
            .expect("alloca has a result");
        if mirrored {
            let in_frame = self.frame_slot(ty.size(), ty.align()).expect("a split function");
            let split = self.split.as_mut().expect("a split function");
            split.mirrored_slots.push((local, in_frame, ty));
        }
        local
    }

    /// Adds the planner's decision for a forward value to the report.
    pub(crate) fn report_plan(
        &mut self,
        forward: Value,
        primal: Option<Value>,
        strategy: Strategy,
    ) {
        if let ValueDef::Result(inst) = self.f.dfg.value_def(forward) {
            if matches!(self.f.dfg.insts[inst], InstructionData::Const { .. }) {
                return;
            }
        }
        let name = |func: &adc_ir::Function, v: Value| match func.dfg.value_name(v) {
            Some(n) => format!("%{n}"),
            None => format!("%{v}"),
        };
        let value = match primal {
            Some(p) => name(self.primal, p),
            None => name(&self.f, forward),
        };
        let ty = self.f.dfg.value_type(forward).to_string();
        let block = self.defining_primal_block(forward);
        let innermost_loop = block
            .and_then(|b| self.plan.info.loops.loop_of(b))
            .map(|l| self.plan.info.loops.loops[l].header)
            .map(|h| match self.primal.dfg.block_name(h) {
                Some(n) => n.to_string(),
                None => format!("{h}"),
            });
        let bytes = match strategy {
            Strategy::Slot | Strategy::Tape | Strategy::Invariant => {
                self.f.dfg.value_type(forward).size().max(1)
            }
            _ => 0,
        };
        let executions = block.map_or(1, |b| self.plan.executions(b));
        let note = self.plan_note(forward, primal, strategy);
        self.cache.stats.plan.entries.push(PlanEntry {
            value,
            ty,
            strategy,
            innermost_loop,
            bytes,
            executions,
            note,
        });
        if strategy == Strategy::Shared {
            self.cache.stats.shared += 1;
        }
    }

    /// The leader of a shared value, or the libm cost model's comparison for a call.
    fn plan_note(
        &mut self,
        forward: Value,
        primal: Option<Value>,
        strategy: Strategy,
    ) -> Option<String> {
        if strategy == Strategy::Shared {
            let leader = *self.plan.leaders().get(&primal?)?;
            let name = match self.primal.dfg.value_name(leader) {
                Some(n) => format!("%{n}"),
                None => format!("%{leader}"),
            };
            return Some(format!("same value as {name}"));
        }
        let ValueDef::Result(inst) = self.f.dfg.value_def(forward) else { return None };
        let data = &self.f.dfg.insts[inst];
        let cycles = pure_libm_call(self.module, data)?;
        let bytes = self.f.dfg.value_type(forward).size().max(1);
        let store = bytes * STORE_CYCLES_PER_BYTE;
        let InstructionData::Call { callee, .. } = data else { return None };
        let callee = &self.module.functions[*callee].name;
        let relation = if cycles <= store { "<=" } else { ">" };
        Some(format!("libm @{callee}: recompute ~{cycles} cycles {relation} store ~{store} cycles"))
    }
}
