//! Control flow of the derivative: forward terminators, the edges the reverse pass walks
//! back along, and the adjoints of block parameters.
//!
//! Every primal block `B` with several incoming edges (and the forward exit, when several
//! blocks return) records in the forward pass which edge was taken: each such edge goes
//! through a small edge block that pushes the edge's index onto the control tape. The
//! reverse region of `B` pops that index and switches to a per-edge block that adds the
//! adjoints of `B`'s parameters to the adjoints of the values the edge passed, then jumps
//! to the reverse region of the edge's source. A block with one incoming edge needs no
//! tape entry: the path is known statically.
//!
//! A merge with two incoming edges chosen by one `brif` (if/else diamonds, triangles, two
//! returns, and arms of any length, loops included, when each edge's source is
//! dominated by its arm of the merge's immediate dominator) needs no tape entry either:
//! the reverse pass gets that `brif`'s condition like any other primal value (recomputed
//! when its operands are, cached otherwise) and branches on it. Other merges (loop
//! headers, switches, arms entered from elsewhere) are taped, one 8-byte entry per
//! dynamic merge.

use adc_ir::{Block, BlockCall, Inst, InstructionData, Value};

use super::Synth;

/// How the reverse pass tells the edges into a merge apart without a control tape (see
/// `Synth::decision_tree`): a tree of primal `brif` conditions whose leaves are indices
/// into the merge's incoming edges.
enum Decision {
    Edge(usize),
    /// `cond`'s value picks `arms[0]` when true, `arms[1]` when false.
    Branch {
        cond: Value,
        arms: Box<[Decision; 2]>,
    },
}
use crate::cache::{Edge, EdgeTarget, LoopDecider};
use crate::error::AdError;
use crate::request::ArgActivity;

impl<'a> Synth<'a> {
    fn edge_index(&self, target: EdgeTarget, edge: Edge) -> usize {
        self.plan.info.incoming[&target].iter().position(|e| *e == edge).unwrap_or(0)
    }

    /// Whether the forward pass must tape which incoming edge of `target` it took.
    fn is_merge(&self, target: EdgeTarget) -> bool {
        self.plan.info.incoming.get(&target).is_some_and(|edges| edges.len() > 1)
            && self.plan.decider(target).is_none()
            && self.header_decider(target).is_none()
            && self.decision_tree(target).is_none()
    }

    fn header_decider(&self, target: EdgeTarget) -> Option<LoopDecider> {
        match target {
            EdgeTarget::Block(block) => self.plan.loop_decider(block),
            EdgeTarget::Exit => None,
        }
    }

    /// For a merge whose edges the immediate dominator `D`'s `brif` splits by arm, and
    /// each arm's by a chain of `brif`s: the shape of every loop clang vectorizes or unrolls, where `D` skips
    /// the fast loop for short trip counts (or the whole nest), a middle block `M` after it
    /// skips the remainder loop when nothing is left, and the remainder loop's exit is a
    /// third edge (reachable from both arms of `D` when the remainder loop also serves the
    /// short trip counts). An edge whose source one arm dominates (`dominating_arm`) is
    /// taken only when the last `D` chose that arm; an edge no arm dominates may follow
    /// either. Within an arm, two edges are told apart by `M`, the source of one of them,
    /// when every path from the arm to the other edge passes `M` (and `M`, dominated by
    /// the arm, runs only there): the edge from `M` was taken exactly when the last `M`
    /// chose it. The reverse pass tests `D`'s condition, then reads `M`'s only on the arm
    /// where `M` ran, instead of taping the edge (on GMM's triangle, 8 bytes per loop run:
    /// 2 MB per call).
    fn decision_tree(&self, target: EdgeTarget) -> Option<Decision> {
        let EdgeTarget::Block(merge) = target else { return None };
        let edges = self.plan.info.incoming.get(&target)?;
        // Loop headers are `header_decider`'s or the control tape's: their latch edge
        // follows every other way in, and no branch before the loop tells them apart.
        let is_header = self.plan.info.loops.loops.iter().any(|l| l.header == merge);
        if is_header || !(2..=4).contains(&edges.len()) {
            return None;
        }
        let d = self.plan.info.domtree.idom(merge)?;
        let (cond, d_targets) = self.brif_parts(d)?;
        let mut groups: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        for (index, edge) in edges.iter().enumerate() {
            match self.plan.dominating_arm(target, *edge) {
                Some((_, k)) => groups[k].push(index),
                None => {
                    groups[0].push(index);
                    groups[1].push(index);
                }
            }
        }
        if groups.iter().all(|g| g.len() == edges.len()) {
            // `D` decides nothing; not this shape.
            return None;
        }
        let [then_group, else_group] = groups;
        let arms = [
            self.decide_in_region(merge, edges, &then_group, d, d_targets[0])?,
            self.decide_in_region(merge, edges, &else_group, d, d_targets[1])?,
        ];
        Some(Decision::Branch { cond, arms: Box::new(arms) })
    }

    /// The decision among `group` (indices into `edges`) once the path has reached `start`
    /// after the last decision above (`D`'s arm, or an `M`'s): the only edge, or an edge
    /// leaving a block `M` by its `brif` such that every path from `start` to the other
    /// edges' sources passes `M`, then the decision among the others after `M`'s other
    /// target.
    fn decide_in_region(
        &self,
        merge: Block,
        edges: &[Edge],
        group: &[usize],
        d: Block,
        start: Block,
    ) -> Option<Decision> {
        if let [only] = *group {
            return Some(Decision::Edge(only));
        }
        // The arm enters the merge itself: whatever follows reaches it again later.
        if start == merge {
            return None;
        }
        let loops = &self.plan.info.loops;
        let after_merge = self.primal.successors(merge);
        let separates = |through: usize| {
            let m = edges[through].from;
            m != d
                && loops.loop_of(m) == loops.loop_of(merge)
                && group.iter().filter(|&&o| o != through).all(|&o| {
                    let source = edges[o].from;
                    self.passes_before(start, m, source, d, merge)
                        // Nor may it follow the merge without `M` or `D` running again
                        // (the merge a loop header, the edge its latch): `M`'s choice
                        // would be stale.
                        && after_merge.iter().all(|&s| self.passes_before(s, m, source, d, merge))
                })
        };
        let through = *group.iter().find(|&&e| separates(e))?;
        let m = edges[through].from;
        let (cond, targets) = self.brif_parts(m)?;
        let k = edges[through].succ_index;
        let rest: Vec<usize> = group.iter().copied().filter(|&e| e != through).collect();
        let mut arms = [Decision::Edge(through), Decision::Edge(through)];
        arms[1 - k] = self.decide_in_region(merge, edges, &rest, d, targets[1 - k])?;
        Some(Decision::Branch { cond, arms: Box::new(arms) })
    }

    /// Whether every path from `arm` to `source` passes `m` first (or `D` again, or the
    /// merge): a walk from `arm` that stops at those never meets `source`.
    fn passes_before(&self, arm: Block, m: Block, source: Block, d: Block, merge: Block) -> bool {
        if m == source {
            return false;
        }
        let mut stack = vec![arm];
        let mut seen = std::collections::HashSet::new();
        while let Some(block) = stack.pop() {
            if block == source {
                return false;
            }
            if !seen.insert(block) || block == m || block == d || block == merge {
                continue;
            }
            stack.extend(self.primal.successors(block));
        }
        true
    }

    /// A block's `brif`: its condition and its two targets.
    fn brif_parts(&self, block: Block) -> Option<(Value, [Block; 2])> {
        let term = self.primal.terminator(block)?;
        match &self.primal.dfg.insts[term] {
            InstructionData::Brif { cond, then_dest, else_dest } => {
                Some((*cond, [then_dest.block, else_dest.block]))
            }
            _ => None,
        }
    }

    /// Clones a terminator into the forward pass. Branch arguments gain the shadows of
    /// pointer parameters that need one; edges into merge points go through edge blocks
    /// that tape the edge taken.
    pub(super) fn forward_terminator(&mut self, block: Block, inst: Inst) -> Result<(), AdError> {
        let data = self.primal.dfg.insts[inst].clone();
        if let InstructionData::Return { value } = data {
            // Split functions hand the result (and a returned pointer's shadow) to the exit.
            let mut args = Vec::new();
            if let (Some(split), Some(value)) = (&self.split, value) {
                let shadow_ret = split.layout.shadow_ret;
                args.push(self.fwd(value));
                if shadow_ret {
                    let shadow = self.forward_shadow_of_operand(value).ok_or_else(|| {
                        self.unsupported(inst, "a returned pointer without a shadow")
                    })?;
                    args.push(shadow);
                }
            }
            let dest =
                self.edge_destination(EdgeTarget::Exit, Edge { from: block, succ_index: 0 }, args);
            self.ins(InstructionData::Jump { dest });
            return Ok(());
        }
        if let InstructionData::Unreachable = data {
            self.ins(InstructionData::Unreachable);
            return Ok(());
        }
        let mut cloned = data.clone();
        let mut calls = Vec::new();
        for (succ_index, target) in data.branch_targets().into_iter().enumerate() {
            let mut args: Vec<Value> = target.args.iter().map(|a| self.fwd(*a)).collect();
            let params = self.primal.dfg.block_params(target.block).to_vec();
            for (arg, param) in target.args.iter().zip(&params) {
                if !self.activity.needs_shadow(*param) {
                    continue;
                }
                let shadow = self.forward_shadow_of_operand(*arg).ok_or_else(|| {
                    self.unsupported(
                        inst,
                        "a block parameter that is a pointer into active memory on one way in \
                         and into inactive memory (such as an `enzyme_const` argument's) on \
                         another; passing that argument as `enzyme_dup` avoids it",
                    )
                })?;
                args.push(shadow);
            }
            let edge = Edge { from: block, succ_index };
            calls.push(self.edge_destination(EdgeTarget::Block(target.block), edge, args));
        }
        for (slot, call) in cloned.branch_targets_mut().into_iter().zip(calls) {
            *slot = call;
        }
        match &mut cloned {
            InstructionData::Brif { cond, .. } => *cond = self.fwd(*cond),
            InstructionData::Switch { value, .. } => *value = self.fwd(*value),
            _ => {}
        }
        self.ins(cloned);
        Ok(())
    }

    /// The forward branch destination for `edge`: the target itself, or an edge block that
    /// tapes the edge's index first when the target is a merge point.
    fn edge_destination(&mut self, target: EdgeTarget, edge: Edge, args: Vec<Value>) -> BlockCall {
        let block = match target {
            EdgeTarget::Block(b) => self.bmap[&b],
            EdgeTarget::Exit => self.forward_exit,
        };
        let merge = self.is_merge(target);
        let exit_pushes = self.exit_pushes(target, edge);
        if !merge && exit_pushes.is_empty() {
            return BlockCall::new(block, args);
        }
        let index = self.edge_index(target, edge);
        let edge_block = self.f.dfg.make_block();
        self.f.layout.insert_block_before(edge_block, self.forward_exit);
        let saved = std::mem::replace(&mut self.cur, edge_block);
        if merge {
            self.push_control(target.block(), index as i128);
        }
        self.ins(InstructionData::Jump { dest: BlockCall::new(block, args) });
        let jump = self.f.layout.last_inst(edge_block).expect("the jump was just appended");
        for (tape, value) in exit_pushes {
            self.push_before(jump, &tape, value);
        }
        self.cur = saved;
        BlockCall::new(edge_block, Vec::new())
    }

    /// Ends the reverse region of `block`: adjoints of its parameters flow back along the
    /// edge the forward pass came by; the entry block returns the argument adjoints.
    pub(super) fn leave_block(&mut self, block: Block) -> Result<(), AdError> {
        let params = self.primal.dfg.block_params(block).to_vec();
        if Some(block) == self.primal.entry_block() {
            self.emit_return(&params);
            return Ok(());
        }
        let mut adjoints = Vec::new();
        for (index, param) in params.iter().enumerate() {
            if self.is_active(*param) {
                let d = self.take_adjoint(*param);
                adjoints.push((index, d));
            }
        }
        self.leave_along_incoming(EdgeTarget::Block(block), adjoints);
        Ok(())
    }

    /// Continues the reverse pass along the edge the forward pass entered `target` by.
    pub(super) fn leave_along_incoming(
        &mut self,
        target: EdgeTarget,
        adjoints: Vec<(usize, Value)>,
    ) {
        let edges = self.plan.info.incoming.get(&target).cloned().unwrap_or_default();
        match edges.as_slice() {
            [] => {
                // No way in (only the forward exit of a function that never returns).
                self.ins(InstructionData::Unreachable);
            }
            [edge] => {
                self.send_adjoints(*edge, &adjoints);
                self.reverse_edge_ivs(target, *edge);
                let dest = BlockCall::new(self.rev_entry[&edge.from], Vec::new());
                self.ins(InstructionData::Jump { dest });
            }
            _ if self.plan.decider(target).is_none()
                && self.header_decider(target).is_none()
                && self.decision_tree(target).is_some() =>
            {
                let tree = self.decision_tree(target).expect("checked by the guard");
                self.leave_by_decision(target, &edges, &tree, adjoints);
            }
            _ => {
                let decider = match (self.plan.decider(target), self.header_decider(target)) {
                    (Some((cond, then_edge)), _) => Some((self.primal_in_reverse(cond), then_edge)),
                    (None, Some(header)) => Some((self.came_from_latch(header), header.latch_edge)),
                    (None, None) => None,
                };
                let chooser = match decider {
                    Some((cond, _)) => cond,
                    None => self.pop_control(target.block()),
                };
                let region_end = self.cur;
                let mut blocks = Vec::new();
                // Values materialized in one edge block do not dominate its siblings.
                let region_memo = self.cache.snapshot();
                for edge in &edges {
                    let edge_block = self.new_block();
                    self.cur = edge_block;
                    self.cache.restore(region_memo.clone());
                    self.send_adjoints(*edge, &adjoints);
                    self.reverse_edge_ivs(target, *edge);
                    let dest = BlockCall::new(self.rev_entry[&edge.from], Vec::new());
                    self.ins(InstructionData::Jump { dest });
                    blocks.push(edge_block);
                }
                self.cur = region_end;
                if let Some((_, then_edge)) = decider {
                    self.ins(InstructionData::Brif {
                        cond: chooser,
                        then_dest: BlockCall::new(blocks[then_edge], Vec::new()),
                        else_dest: BlockCall::new(blocks[1 - then_edge], Vec::new()),
                    });
                    return;
                }
                let default = BlockCall::new(blocks[0], Vec::new());
                let cases = blocks
                    .iter()
                    .enumerate()
                    .skip(1)
                    .map(|(i, b)| (i as u128, BlockCall::new(*b, Vec::new())))
                    .collect();
                self.ins(InstructionData::Switch { value: chooser, default, cases });
            }
        }
    }

    /// The reverse branches of a merge chosen by a [`Decision`] tree.
    fn leave_by_decision(
        &mut self,
        target: EdgeTarget,
        edges: &[Edge],
        tree: &Decision,
        adjoints: Vec<(usize, Value)>,
    ) {
        let region_end = self.cur;
        let region_memo = self.cache.snapshot();
        let mut blocks = Vec::new();
        for edge in edges {
            let edge_block = self.new_block();
            self.cur = edge_block;
            self.cache.restore(region_memo.clone());
            self.send_adjoints(*edge, &adjoints);
            self.reverse_edge_ivs(target, *edge);
            let dest = BlockCall::new(self.rev_entry[&edge.from], Vec::new());
            self.ins(InstructionData::Jump { dest });
            blocks.push(edge_block);
        }
        self.cur = region_end;
        self.cache.restore(region_memo.clone());
        self.emit_decision(tree, &blocks);
        self.cache.restore(region_memo);
    }

    /// Emits `decision` at the current block. A condition is read only in the block
    /// that tests it and what that block dominates: a deeper one belongs to a block the
    /// forward pass may not have run on the other arms, so the values read for it stay out
    /// of its siblings (and of the edge blocks, which every arm may reach).
    fn emit_decision(&mut self, decision: &Decision, edge_blocks: &[Block]) {
        match decision {
            Decision::Edge(index) => {
                let dest = BlockCall::new(edge_blocks[*index], Vec::new());
                self.ins(InstructionData::Jump { dest });
            }
            Decision::Branch { cond, arms } => {
                let value = self.primal_in_reverse(*cond);
                let memo = self.cache.snapshot();
                let mut dests = Vec::new();
                let mut deeper = Vec::new();
                for arm in arms.iter() {
                    match arm {
                        Decision::Edge(index) => dests.push(edge_blocks[*index]),
                        Decision::Branch { .. } => {
                            let block = self.new_block();
                            dests.push(block);
                            deeper.push((block, arm));
                        }
                    }
                }
                self.ins(InstructionData::Brif {
                    cond: value,
                    then_dest: BlockCall::new(dests[0], Vec::new()),
                    else_dest: BlockCall::new(dests[1], Vec::new()),
                });
                for (block, arm) in deeper {
                    self.cur = block;
                    self.cache.restore(memo.clone());
                    self.emit_decision(arm, edge_blocks);
                }
            }
        }
    }

    /// Adds each parameter adjoint to the adjoint of the value `edge` passed for it.
    fn send_adjoints(&mut self, edge: Edge, adjoints: &[(usize, Value)]) {
        if adjoints.is_empty() {
            return;
        }
        let Some(term) = self.primal.terminator(edge.from) else { return };
        let targets =
            self.primal.dfg.insts[term].branch_targets().into_iter().cloned().collect::<Vec<_>>();
        let Some(target) = targets.get(edge.succ_index) else { return };
        for (index, d) in adjoints {
            if let Some(arg) = target.args.get(*index) {
                self.add_adjoint(*arg, *d);
            }
        }
    }

    /// Returns the adjoints of the `Active` arguments (the reverse pass is complete).
    fn emit_return(&mut self, params: &[Value]) {
        let mut adjoints = Vec::new();
        for (param, activity) in params.iter().zip(self.request.args.clone()) {
            if activity == ArgActivity::Active {
                let d = self.take_adjoint(*param);
                // Adjoints start from -0.0: a zero gradient is returned as +0.0.
                let ty = self.ty(d);
                let d = if matches!(ty, adc_ir::Type::F32 | adc_ir::Type::F64) {
                    let zero = self.float_const(&ty, 0.0);
                    self.binary(adc_ir::BinaryOp::Fadd, d, zero)
                } else {
                    d
                };
                adjoints.push(self.adjoint_as_bits(*param, d));
            }
        }
        let value = match adjoints.len() {
            _ if self.split.is_some() => self.split_return_value(adjoints),
            0 => None,
            1 => Some(adjoints[0]),
            _ => {
                let ty = self.f.signature.ret.clone().expect("several adjoints make a struct");
                let mut acc = self.zero(&ty);
                for (index, d) in adjoints.into_iter().enumerate() {
                    acc = self.val(InstructionData::InsertValue {
                        aggregate: acc,
                        value: d,
                        indices: vec![index as u32],
                    });
                }
                Some(acc)
            }
        };
        let ret = self.ins_return(value);
        self.cache.final_return = Some(ret);
    }

    fn ins_return(&mut self, value: Option<Value>) -> Inst {
        self.ins(InstructionData::Return { value });
        self.f.layout.last_inst(self.cur).expect("the return was just appended")
    }
}
