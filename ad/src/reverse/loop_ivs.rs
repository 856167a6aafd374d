//! The synthesis side of counted loops (`crate::cache::loop_ivs` plans them): the IV
//! slots, their forward stores, the steps back along latch edges, the exit tapes of
//! nested loops, and the comparison that replaces a header's control-tape entry.

use std::collections::HashMap;

use adc_ir::{InstFlags, InstructionData, IntCC, Value};
use adc_passes::loops::LoopId;

use super::tape::Tape;
use super::Synth;
use crate::cache::{Edge, EdgeTarget, LoopDecider, LoopSlot};

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
    /// Nested loops whose last value follows from the exit test: no exit tape.
    pub exit_value: Option<ExitValue>,
}

/// The last value of a counted IV of a nested loop that leaves only where a tested IV
/// `t` meets a loop-invariant bound exactly (`icmp eq %t.next, %bound`, the exit test of
/// every loop clang rotates): `t` ended at `bound - back` (`back` is `t`'s step when the
/// test reads the incremented value, 0 when it reads the header parameter), and an IV
/// with a constant start counts in lock step: `start + (last_t - start_t) / step_t * step`.
/// The reverse pass computes it on the way back into the loop instead of popping a tape
/// the forward pass pushed on every exit.
#[derive(Clone, Debug)]
pub(crate) struct ExitValue {
    bound: Value,
    back: i128,
    tested_start: i128,
    tested_step: i128,
    start: i128,
    step: i128,
    /// The IV is the tested one.
    tested: bool,
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
    /// Creates the planned loop slots once the forward blocks and their parameters exist,
    /// before any terminator is cloned (exit edges push onto the exit tapes). In a split
    /// function the slots are in its frame: the forward phase leaves the last values there
    /// for the reverse phase, another invocation.
    pub(crate) fn create_loop_slots(&mut self) {
        for planned in self.plan.loop_slots.clone() {
            match planned {
                LoopSlot::DeciderStart { loop_id, start } => {
                    let ty = self.primal.dfg.value_type(start).clone();
                    let slot = self.new_slot(ty);
                    self.cache.loop_ivs.start_slots.insert(loop_id, slot);
                }
                LoopSlot::Counted { value, loop_id, step, nsw } => {
                    self.add_counted_slot(value, loop_id, step, nsw);
                    self.cache.stats.counted_ivs += 1;
                }
                LoopSlot::Invariant { value, loop_id } => {
                    self.add_counted_slot(value, loop_id, 0, false);
                    self.cache.stats.invariant_slots += 1;
                }
            }
        }
    }

    /// A slot for a value of `loop_id` (a counted IV, or an invariant with step 0), with
    /// an exit tape when the loop is nested.
    fn add_counted_slot(&mut self, param: Value, loop_id: LoopId, step: i128, nsw: bool) {
        let ty = self.primal.dfg.value_type(param).clone();
        let slot = self.new_slot(ty.clone());
        let nested = self.plan.info.loops.loops[loop_id].parent;
        let exit_value = nested.and_then(|_| self.exit_value(loop_id, param));
        let exit_tape = nested.filter(|_| exit_value.is_none()).map(|parent| {
            let header = self.plan.info.loops.loops[parent].header;
            self.new_exit_tape(&ty, header)
        });
        self.cache.loop_ivs.by_loop.entry(loop_id).or_default().push(param);
        let iv = IvSlot { loop_id, slot, step, nsw, exit_tape, exit_value };
        self.cache.loop_ivs.by_primal.insert(param, iv);
    }

    /// How to compute `param`'s last value in `loop_id` from its exit test (see
    /// [`ExitValue`]), when the loop leaves from one block whose `brif` is that test.
    fn exit_value(&self, loop_id: LoopId, param: Value) -> Option<ExitValue> {
        let l = &self.plan.info.loops.loops[loop_id];
        let [exiting] = l.exiting.as_slice() else { return None };
        let term = self.primal.terminator(*exiting)?;
        let InstructionData::Brif { cond, then_dest, else_dest } = &self.primal.dfg.insts[term]
        else {
            return None;
        };
        let exit_on_true = match (l.contains(then_dest.block), l.contains(else_dest.block)) {
            (false, true) => true,
            (true, false) => false,
            _ => return None,
        };
        let adc_ir::ValueDef::Result(cmp) = self.primal.dfg.value_def(*cond) else { return None };
        let InstructionData::Icmp { cond: cc, args: [a, b] } = &self.primal.dfg.insts[cmp] else {
            return None;
        };
        let leaves_on_equality =
            matches!((cc, exit_on_true), (IntCC::Eq, true) | (IntCC::Ne, false));
        if !leaves_on_equality {
            return None;
        }
        let ivs = &self.plan.info.ivs.loops.get(loop_id)?.ivs;
        let invariant = |v: Value| match self.primal.dfg.value_def(v) {
            adc_ir::ValueDef::Result(inst) => {
                self.primal.layout.inst_block(inst).is_some_and(|b| !l.contains(b))
            }
            adc_ir::ValueDef::Param(block, _) => !l.contains(block),
        };
        let (tested_iv, tested_next, bound) = ivs.iter().find_map(|iv| {
            let other = |x: Value, y: Value| (x == iv.next || x == iv.param).then_some((x, y));
            let (tested, bound) = other(*a, *b).or_else(|| other(*b, *a))?;
            invariant(bound).then_some((iv, tested == iv.next, bound))
        })?;
        let constant_step = |iv: &adc_passes::ivs::InductionVar| match iv.step {
            adc_passes::ivs::Step::Const(k) if k != 0 => Some(k),
            _ => None,
        };
        let tested_step = constant_step(tested_iv)?;
        let this = ivs.iter().find(|iv| iv.param == param)?;
        let tested = this.param == tested_iv.param;
        let same_type =
            self.primal.dfg.value_type(this.param) == self.primal.dfg.value_type(tested_iv.param);
        if !tested && (!same_type || this.start.base.is_some() || tested_iv.start.base.is_some()) {
            return None;
        }
        Some(ExitValue {
            bound,
            back: if tested_next { tested_step } else { 0 },
            tested_start: tested_iv.start.offset,
            tested_step,
            start: this.start.offset,
            step: constant_step(this)?,
            tested,
        })
    }

    /// The last value of an IV leaving its loop, by its [`ExitValue`] rule (reverse code
    /// at `self.cur`).
    fn last_value(&mut self, rule: &ExitValue, ty: &adc_ir::Type) -> Value {
        use adc_ir::BinaryOp;
        let bound = self.primal_in_reverse(rule.bound);
        let back = self.iconst(ty.clone(), rule.back);
        let last_tested = self.binary(BinaryOp::Sub, bound, back);
        if rule.tested {
            return last_tested;
        }
        let tested_start = self.iconst(ty.clone(), rule.tested_start);
        let distance = self.binary(BinaryOp::Sub, last_tested, tested_start);
        let tested_step = self.iconst(ty.clone(), rule.tested_step);
        let iterations = self.binary(BinaryOp::Sdiv, distance, tested_step);
        let step = self.iconst(ty.clone(), rule.step);
        let moved = self.binary(BinaryOp::Mul, iterations, step);
        let start = self.iconst(ty.clone(), rule.start);
        self.binary(BinaryOp::Add, start, moved)
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
        self.plan.info.loops.loops[iv.loop_id].contains(here).then_some(iv)
    }

    /// Exit tapes `edge` pushes onto, with the forward value pushed.
    pub(crate) fn exit_pushes(&self, target: EdgeTarget, edge: Edge) -> Vec<(Tape, Value)> {
        let mut pushes = Vec::new();
        for loop_id in self.plan.info.loops_exited(target, edge) {
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
            let latch_of = self.plan.info.loops.loops.iter().position(|l| {
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
        for loop_id in self.plan.info.loops_exited(target, edge) {
            for primal in self.cache.loop_ivs.by_loop.get(&loop_id).cloned().unwrap_or_default() {
                let iv = self.cache.loop_ivs.by_primal[&primal].clone();
                if let Some(tape) = &iv.exit_tape {
                    let last = self.peek(tape);
                    self.pop(tape);
                    self.store(last, iv.slot);
                } else if let Some(rule) = &iv.exit_value {
                    let ty = self.primal.dfg.value_type(primal).clone();
                    let last = self.last_value(rule, &ty);
                    self.store(last, iv.slot);
                }
            }
            let Some(&slot) = self.cache.loop_ivs.start_slots.get(&loop_id) else { continue };
            let header = self.plan.info.loops.loops[loop_id].header;
            if let Some(decider) = self.plan.loop_decider(header) {
                let start = self.primal_in_reverse(decider.start);
                self.store(start, slot);
            }
        }
    }

    /// Reverse code: `true` when the iteration being reversed was entered from the latch.
    pub(crate) fn came_from_latch(&mut self, decider: LoopDecider) -> Value {
        let current = self.primal_in_reverse(decider.param);
        let loop_id = self.cur_primal.and_then(|b| self.plan.info.loops.loop_of(b));
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
