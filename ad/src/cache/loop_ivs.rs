//! Induction variables counted backwards instead of taped, and loop headers reversed
//! without control-tape entries.
//!
//! A loop header parameter `p` with a constant step (`p' = p + c` on every latch, per
//! `adc_passes::ivs`) gets an **IV slot** `S_p` (one stack slot, not a tape; a frame slot
//! in a split function, whose reverse phase is another call):
//!
//! - forward: `S_p = p` at the top of every iteration (one store, no push);
//! - reverse, inside the loop: `p` is read from `S_p`;
//! - reverse, leaving the header along a latch edge (to the previous iteration):
//!   `S_p = p - c`;
//! - reverse, entering the loop along an exit edge: `S_p` must hold the last value of this
//!   execution of the loop. For an outermost loop (which runs at most once per call) the
//!   forward pass left it there. A nested loop runs once per iteration of its parents:
//!   each exit edge pushes `p` onto an **exit tape** (one entry per execution of the
//!   loop, not per iteration), which the reversed exit edge pops into `S_p`.
//!
//! Reverse code outside the loop that reads `p` (a value computed in the loop and used
//! after it) gets the value from an ordinary tape instead: `S_p` is only valid while the
//! loop's reverse iterations run.
//!
//! **Cache LICM** uses the same slots for loads inside a loop whose address does not
//! change in the loop and whose memory nothing in the loop may write (alias analysis):
//! the value is the same in every iteration of one execution of the loop, so it is saved
//! once per execution (the slot, and an exit-tape entry for nested loops) instead of once
//! per iteration, and never stepped. The load's block must dominate every exiting block
//! of the loop, so that the exit edges see it defined.
//!
//! **Loop headers without control tape**: a header with one entry edge and one latch edge
//! is re-entered from the latch exactly when `p != start` for an IV whose step cannot wrap
//! (`nuw`/`nsw` on the increment): `p_k = start + k·c` never returns to `start`. A 64-bit
//! counter without the flags is accepted too when `|c| <= 2^16`: it would take at least
//! 2^48 iterations to come back (in practice never). The
//! reverse pass branches on that comparison instead of popping the edge index that the
//! forward pass would otherwise push on every iteration.

use std::collections::HashMap;

use adc_ir::{Block, Inst, InstFlags, InstructionData, Value, ValueDef};
use adc_passes::alias::{AliasAnalysis, MemLoc};
use adc_passes::ivs::Step;
use adc_passes::loops::LoopId;

use super::{CachePlan, EdgeTarget};

/// How the reverse pass of a loop header chooses between its entry and its latch edge.
#[derive(Copy, Clone, Debug)]
pub(crate) struct LoopDecider {
    /// The primal IV compared with its start value.
    pub param: Value,
    /// The primal value the entry edge passes for it.
    pub start: Value,
    /// Index (in the header's incoming edges) of the latch edge.
    pub latch_edge: usize,
}

/// A slot the synthesis creates for a loop, in the order it creates them (the order
/// fixes the derivative's instruction order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LoopSlot {
    /// The start value of the loop's decider, saved when the reverse pass enters the loop.
    DeciderStart { loop_id: LoopId, start: Value },
    /// An induction variable counted backwards by `step`.
    Counted { value: Value, loop_id: LoopId, step: i128, nsw: bool },
    /// A loop-invariant load saved once per execution of its loop (cache LICM).
    Invariant { value: Value, loop_id: LoopId },
}

impl LoopSlot {
    /// The primal value the slot holds (`None` for a decider's start).
    pub fn value(&self) -> Option<Value> {
        match self {
            LoopSlot::DeciderStart { .. } => None,
            LoopSlot::Counted { value, .. } | LoopSlot::Invariant { value, .. } => Some(*value),
        }
    }
}

impl CachePlan<'_> {
    /// The slots of every counted loop and of its invariant loads (none with `loop_ivs`
    /// off; no invariant loads with `licm` off).
    pub(crate) fn plan_loop_slots(&self, alias: &AliasAnalysis) -> Vec<LoopSlot> {
        let mut slots = Vec::new();
        if !self.options.loop_ivs {
            return slots;
        }
        for loop_id in 0..self.info.loops.loops.len() {
            let Some(ivs) = self.info.ivs.loops.get(loop_id) else { continue };
            let header = self.info.loops.loops[loop_id].header;
            if let Some(decider) = self.loop_decider(header) {
                slots.push(LoopSlot::DeciderStart { loop_id, start: decider.start });
            }
            for iv in &ivs.ivs {
                if let Step::Const(step) = iv.step {
                    let nsw = iv.flags.contains(InstFlags::NSW);
                    slots.push(LoopSlot::Counted { value: iv.param, loop_id, step, nsw });
                }
            }
        }
        if self.options.licm {
            let mut invariant: Vec<(Inst, LoopId)> =
                self.loop_invariant_loads(alias).into_iter().collect();
            invariant.sort();
            for (load, loop_id) in invariant {
                let Some(value) = self.primal.dfg.inst_result(load) else { continue };
                slots.push(LoopSlot::Invariant { value, loop_id });
            }
        }
        slots
    }

    /// Loads (non-volatile) whose address is invariant in their
    /// innermost loop and whose memory no instruction of that loop may write, with the
    /// loop; only those whose block dominates every exiting block of the loop.
    fn loop_invariant_loads(&self, alias: &AliasAnalysis) -> HashMap<Inst, LoopId> {
        let func = self.primal;
        let mut out = HashMap::new();
        let candidates: Vec<(Inst, LoopId)> = func
            .layout
            .insts()
            .filter(|(_, i)| {
                matches!(func.dfg.insts[*i], InstructionData::Load { volatile: false, .. })
            })
            .filter_map(|(b, i)| Some((i, self.info.loops.loop_of(b)?)))
            .collect();
        for (load, loop_id) in candidates {
            let l = &self.info.loops.loops[loop_id];
            let InstructionData::Load { ptr, .. } = func.dfg.insts[load] else { continue };
            let Some(block) = func.layout.inst_block(load) else { continue };
            if !self.invariant_in(ptr, loop_id)
                || !l.exiting.iter().all(|e| self.info.domtree.dominates(block, *e))
            {
                continue;
            }
            let Some(loc) = MemLoc::of_access(func, load) else { continue };
            let written = l.blocks.iter().flat_map(|b| func.layout.block_insts(*b)).any(|w| {
                let data = &func.dfg.insts[*w];
                data.has_side_effects()
                    && !data.is_terminator()
                    && alias.mod_ref(self.module, func, *w, &loc).may_write()
            });
            if !written {
                out.insert(load, loop_id);
            }
        }
        out
    }

    /// Whether a primal value is the same in every iteration of the loop: defined outside
    /// it, or a pure instruction of invariant operands.
    fn invariant_in(&self, value: Value, loop_id: LoopId) -> bool {
        let l = &self.info.loops.loops[loop_id];
        match self.primal.dfg.value_def(value) {
            ValueDef::Param(block, _) => !l.contains(block),
            ValueDef::Result(inst) => {
                let Some(block) = self.primal.layout.inst_block(inst) else { return false };
                if !l.contains(block) {
                    return true;
                }
                let data = &self.primal.dfg.insts[inst];
                data.is_pure_non_trapping()
                    && data.args().into_iter().all(|a| self.invariant_in(a, loop_id))
            }
        }
    }

    /// For a loop header entered by one edge from outside and one latch: an IV whose
    /// increment cannot wrap, which tells the two edges apart in the reverse pass.
    pub fn loop_decider(&self, header: Block) -> Option<LoopDecider> {
        if !self.options.loop_ivs {
            return None;
        }
        let loop_id = self.info.loops.loops.iter().position(|l| l.header == header)?;
        let l = &self.info.loops.loops[loop_id];
        let edges = self.info.incoming.get(&EdgeTarget::Block(header))?;
        let [e0, e1] = edges.as_slice() else { return None };
        let latch_edge = match (l.contains(e0.from), l.contains(e1.from)) {
            (false, true) => 1,
            (true, false) => 0,
            _ => return None,
        };
        let entry = edges[1 - latch_edge];
        let ivs = self.info.ivs.loops.get(loop_id)?;
        let iv = ivs.ivs.iter().find(|iv| {
            let Step::Const(step) = iv.step else { return false };
            let no_wrap = iv.flags.contains(InstFlags::NUW) || iv.flags.contains(InstFlags::NSW);
            // Without the flags, a 64-bit counter would need 2^48 iterations or more to
            // come back to its start: treated as impossible.
            let wide = iv.bits >= 64 && step.unsigned_abs() <= 1 << 16;
            (no_wrap || wide) && self.primal.dfg.value_type(iv.param).is_int()
        })?;
        let index = self.primal.dfg.block_params(header).iter().position(|p| *p == iv.param)?;
        let term = self.primal.terminator(entry.from)?;
        let targets = self.primal.dfg.insts[term].branch_targets();
        let start = *targets.get(entry.succ_index)?.args.get(index)?;
        Some(LoopDecider { param: iv.param, start, latch_edge })
    }
}
