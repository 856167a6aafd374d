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

use std::rc::Rc;

use adc_ir::{Block, Inst, InstFlags, InstructionData, IntCC, Value, ValueDef};
use adc_passes::alias::{AliasAnalysis, MemLoc};
use adc_passes::ivs::Step;
use adc_passes::loops::LoopId;

use super::Tape;
use crate::reverse::{Edge, EdgeTarget, Synth};

/// An induction variable the reverse pass counts backwards.
#[derive(Clone, Debug)]
pub(crate) struct IvSlot {
    pub loop_id: LoopId,
    /// The stack slot holding the value of the iteration being reversed.
    pub slot: Value,
    /// 0 for a loop-invariant value (cache LICM).
    pub step: i128,
    /// The forward increment has `nsw`, so stepping back cannot overflow either (it only
    /// revisits values the forward pass had): the reverse `sub` carries `nsw` too, which
    /// lets later passes treat a reversed `i32` counter as linear (vectorize).
    pub nsw: bool,
    /// Nested loops: last values, one per execution of the loop.
    pub exit_tape: Option<Tape>,
}

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

#[derive(Default)]
pub(crate) struct LoopIvState {
    /// Primal value (header parameter or invariant load) -> its slot. Keyed by the
    /// primal value: the slots exist before the forward instructions are cloned.
    pub by_primal: HashMap<Value, IvSlot>,
    /// Loop -> primal values with slots.
    pub by_loop: HashMap<LoopId, Vec<Value>>,
    /// Loop -> slot holding its decider's start value while its reverse iterations run
    /// (written when the reverse pass enters the loop: read once per loop, not per
    /// iteration).
    pub start_slots: HashMap<LoopId, Value>,
}

impl<'a> Synth<'a> {
    /// Creates the IV slots of every counted loop once the forward blocks and their
    /// parameters exist, before any terminator is cloned (exit edges push onto the exit
    /// tapes). In a split function the slots are in its frame: the forward phase leaves
    /// the last values there for the reverse phase, another invocation.
    pub(crate) fn plan_loop_ivs(&mut self) {
        if !self.cache.options.loop_ivs {
            return;
        }
        for loop_id in 0..self.info.loops.loops.len() {
            let Some(ivs) = self.info.ivs.loops.get(loop_id) else { continue };
            let ivs: Vec<(Value, i128, bool)> = ivs
                .ivs
                .iter()
                .filter_map(|iv| match iv.step {
                    Step::Const(c) => Some((iv.param, c, iv.flags.contains(InstFlags::NSW))),
                    Step::Invariant(_) => None,
                })
                .collect();
            let header = self.info.loops.loops[loop_id].header;
            if let Some(decider) = self.loop_decider(header) {
                let ty = self.primal.dfg.value_type(decider.start).clone();
                let slot = self.new_slot(ty);
                self.cache.loop_ivs.start_slots.insert(loop_id, slot);
            }
            for (param, step, nsw) in ivs {
                self.add_counted_slot(param, loop_id, step, nsw);
                self.cache.stats.counted_ivs += 1;
            }
        }
        if self.cache.options.licm {
            let mut invariant: Vec<(Inst, LoopId)> =
                self.loop_invariant_loads().into_iter().collect();
            invariant.sort();
            for (load, loop_id) in invariant {
                let Some(result) = self.primal.dfg.inst_result(load) else { continue };
                self.add_counted_slot(result, loop_id, 0, false);
                self.cache.stats.invariant_slots += 1;
            }
        }
    }

    /// A slot for a value of `loop_id` (a counted IV, or an invariant with step 0), with
    /// an exit tape when the loop is nested.
    fn add_counted_slot(&mut self, param: Value, loop_id: LoopId, step: i128, nsw: bool) {
        let ty = self.primal.dfg.value_type(param).clone();
        let slot = self.new_slot(ty.clone());
        let exit_tape = self.info.loops.loops[loop_id].parent.map(|parent| {
            let header = self.info.loops.loops[parent].header;
            self.new_exit_tape(&ty, header)
        });
        self.cache.loop_ivs.by_loop.entry(loop_id).or_default().push(param);
        self.cache.loop_ivs.by_primal.insert(param, IvSlot { loop_id, slot, step, nsw, exit_tape });
    }

    /// Loads (non-volatile) whose address is invariant in their
    /// innermost loop and whose memory no instruction of that loop may write, with the
    /// loop; only those whose block dominates every exiting block of the loop.
    fn loop_invariant_loads(&self) -> HashMap<Inst, LoopId> {
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
        if candidates.is_empty() {
            return out;
        }
        let alias = AliasAnalysis::new(self.module, func, Rc::clone(&self.facts.effects));
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

    /// Forward code: every counted IV is stored to its slot at the top of its header
    /// (after the forward blocks are filled).
    pub(crate) fn store_loop_ivs(&mut self) {
        let mut ivs: Vec<(Value, Value)> =
            self.cache.loop_ivs.by_primal.iter().map(|(v, iv)| (*v, iv.slot)).collect();
        ivs.sort();
        for (primal, slot) in ivs {
            let forward = self.fwd(primal);
            let align = self.ty(forward).align() as u32;
            let at = self.after_definition(forward);
            self.ins_before(
                at,
                InstructionData::Store { value: forward, ptr: slot, align, volatile: false },
            );
        }
    }

    /// The IV slot of a forward value, when the reverse region being emitted lies in the
    /// value's loop (where the slot holds the value of the iteration being reversed).
    pub(crate) fn iv_slot_here(&self, forward: Value) -> Option<&IvSlot> {
        let iv = self.cache.loop_ivs.by_primal.get(&self.primal_of(forward)?)?;
        let here = self.cur_primal?;
        self.info.loops.loops[iv.loop_id].contains(here).then_some(iv)
    }

    /// Loops that `edge` leaves (its source is inside, its target outside), innermost
    /// first.
    fn loops_exited(&self, target: EdgeTarget, edge: Edge) -> Vec<LoopId> {
        let mut exited = Vec::new();
        let mut current = self.info.loops.loop_of(edge.from);
        while let Some(id) = current {
            let l = &self.info.loops.loops[id];
            if let EdgeTarget::Block(b) = target {
                if l.contains(b) {
                    break;
                }
            }
            exited.push(id);
            current = l.parent;
        }
        exited
    }

    /// Exit tapes `edge` pushes onto, with the forward value pushed.
    pub(crate) fn exit_pushes(&self, target: EdgeTarget, edge: Edge) -> Vec<(Tape, Value)> {
        let mut pushes = Vec::new();
        for loop_id in self.loops_exited(target, edge) {
            for primal in self.cache.loop_ivs.by_loop.get(&loop_id).into_iter().flatten() {
                let iv = &self.cache.loop_ivs.by_primal[primal];
                if let Some(tape) = &iv.exit_tape {
                    pushes.push((tape.clone(), self.fwd(*primal)));
                }
            }
        }
        pushes
    }

    /// Reverse code on the way back along `edge` (at `self.cur`, before the jump to the
    /// source's reverse region): a latch edge steps the header's IV slots back one
    /// iteration; an exit edge loads the last values of the loops it re-enters.
    pub(crate) fn reverse_edge_ivs(&mut self, target: EdgeTarget, edge: Edge) {
        if let EdgeTarget::Block(header) = target {
            let latch_of = self.info.loops.loops.iter().position(|l| {
                l.header == header && l.contains(edge.from) && l.latches.contains(&edge.from)
            });
            if let Some(loop_id) = latch_of {
                for primal in self.cache.loop_ivs.by_loop.get(&loop_id).cloned().unwrap_or_default()
                {
                    let iv = self.cache.loop_ivs.by_primal[&primal].clone();
                    if iv.step == 0 {
                        continue;
                    }
                    let current = self.primal_in_reverse(primal);
                    let ty = self.ty(current);
                    let step = self.iconst(ty, iv.step);
                    let flags = if iv.nsw { InstFlags::NSW } else { InstFlags::empty() };
                    let args = [current, step];
                    let sub = InstructionData::Binary { op: adc_ir::BinaryOp::Sub, flags, args };
                    let previous = self.val(sub);
                    self.store(previous, iv.slot);
                }
            }
        }
        for loop_id in self.loops_exited(target, edge) {
            for primal in self.cache.loop_ivs.by_loop.get(&loop_id).cloned().unwrap_or_default() {
                let iv = self.cache.loop_ivs.by_primal[&primal].clone();
                if let Some(tape) = &iv.exit_tape {
                    let last = self.peek(tape);
                    self.pop(tape);
                    self.store(last, iv.slot);
                }
            }
            let Some(&slot) = self.cache.loop_ivs.start_slots.get(&loop_id) else { continue };
            let header = self.info.loops.loops[loop_id].header;
            if let Some(decider) = self.loop_decider(header) {
                let start = self.primal_in_reverse(decider.start);
                self.store(start, slot);
            }
        }
    }

    /// For a loop header entered by one edge from outside and one latch: an IV whose
    /// increment cannot wrap, which tells the two edges apart in the reverse pass.
    pub(crate) fn loop_decider(&self, header: Block) -> Option<LoopDecider> {
        if !self.cache.options.loop_ivs {
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

    /// Reverse code: `true` when the iteration being reversed was entered from the latch.
    pub(crate) fn came_from_latch(&mut self, decider: LoopDecider) -> Value {
        let current = self.primal_in_reverse(decider.param);
        let loop_id = self.cur_primal.and_then(|b| self.info.loops.loop_of(b));
        let start = match loop_id.and_then(|l| self.cache.loop_ivs.start_slots.get(&l)) {
            Some(&slot) => {
                let ty = self.primal.dfg.value_type(decider.start).clone();
                self.load(&ty, slot)
            }
            None => self.primal_in_reverse(decider.start),
        };
        self.val(InstructionData::Icmp { cond: IntCC::Ne, args: [current, start] })
    }
}
