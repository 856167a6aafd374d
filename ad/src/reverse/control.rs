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

/// How the reverse pass tells the two edges into a merge apart without a control tape
/// (see `Synth::nested_decider`): `D`'s `brif` condition `outer`, whose target
/// `outer_arm` (0: true) leads to `M`; `M`'s condition `inner`, whose target `inner_arm`
/// is the merge; `direct`, the index of the edge from `M` among the merge's edges.
struct NestedDecider {
    outer: Value,
    outer_arm: usize,
    inner: Value,
    inner_arm: usize,
    direct: usize,
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
            && self.decider(target).is_none()
            && self.header_decider(target).is_none()
            && self.nested_decider(target).is_none()
    }

    fn header_decider(&self, target: EdgeTarget) -> Option<LoopDecider> {
        match target {
            EdgeTarget::Block(block) => self.plan.loop_decider(block),
            EdgeTarget::Exit => None,
        }
    }

    /// The `brif` that decides edge `e`: `e` leaves that `brif`'s block directly, or leaves
    /// a block whose only way in is one target of that `brif`. Returns the block and the
    /// target index (0: condition true).
    fn edge_decision(&self, target: EdgeTarget, e: Edge) -> Option<(Block, usize)> {
        let is_brif = |block: Block| {
            self.primal
                .terminator(block)
                .is_some_and(|t| matches!(self.primal.dfg.insts[t], InstructionData::Brif { .. }))
        };
        if matches!(target, EdgeTarget::Block(_)) && is_brif(e.from) {
            return Some((e.from, e.succ_index));
        }
        let way_in = self.plan.info.incoming.get(&EdgeTarget::Block(e.from))?;
        let [only] = way_in.as_slice() else { return None };
        is_brif(only.from).then_some((only.from, only.succ_index))
    }

    /// For a merge point with two incoming edges that one `brif` chooses between (an
    /// if/else diamond, a triangle, two returns): the condition, and the index of the
    /// edge taken when it is true. The reverse pass recomputes (or reads the cached)
    /// condition instead of taping the edge.
    fn decider(&self, target: EdgeTarget) -> Option<(Value, usize)> {
        let edges = self.plan.info.incoming.get(&target)?;
        let [e0, e1] = edges.as_slice() else { return None };
        let (block, k0, k1) =
            match (self.edge_decision(target, *e0), self.edge_decision(target, *e1)) {
                (Some((p0, k0)), Some((p1, k1))) if p0 == p1 => (p0, k0, k1),
                // Both arms belong to the `brif` of one block: `target`'s immediate dominator.
                _ => {
                    let (block, k0) = self.dominating_arm(target, *e0)?;
                    (block, k0, self.dominating_arm(target, *e1)?.1)
                }
            };
        if k0 == k1 {
            return None;
        }
        let term = self.primal.terminator(block)?;
        let InstructionData::Brif { cond, .. } = self.primal.dfg.insts[term] else { return None };
        Some((cond, if k0 == 0 { 0 } else { 1 }))
    }

    /// The arm of the `brif` ending `target`'s immediate dominator `D` that edge `e` comes
    /// through, when that is fixed by dominance: `e` leaves `D` itself, or its source is
    /// dominated by an arm `S` entered only from `D` (or along back edges from blocks `S`
    /// dominates). Then the last execution of `D` before `e` chose `S`: a path that
    /// reached `e`'s source after choosing the other arm, without passing `D` again, would
    /// also avoid `S` (nothing else leads into it first), so `S` would not dominate the
    /// source. This covers merges whose arms contain loops
    /// (`if (col + 1 < d) { for row ... }` in GMM's triangle), which `edge_decision`, one
    /// block deep, does not.
    fn dominating_arm(&self, target: EdgeTarget, e: Edge) -> Option<(Block, usize)> {
        let EdgeTarget::Block(block) = target else { return None };
        let d = self.plan.info.domtree.idom(block)?;
        let term = self.primal.terminator(d)?;
        let InstructionData::Brif { then_dest, else_dest, .. } = &self.primal.dfg.insts[term]
        else {
            return None;
        };
        if e.from == d {
            return Some((d, e.succ_index));
        }
        for (k, arm) in [then_dest.block, else_dest.block].into_iter().enumerate() {
            // Entered only from `D`, or along back edges from blocks it dominates (the
            // arm may be a loop header): those cannot be reached without passing it.
            let entered_from_d =
                self.plan.info.incoming.get(&EdgeTarget::Block(arm)).is_some_and(|way_in| {
                    way_in
                        .iter()
                        .all(|w| w.from == d || self.plan.info.domtree.dominates(arm, w.from))
                });
            if arm != block && entered_from_d && self.plan.info.domtree.dominates(arm, e.from) {
                return Some((d, k));
            }
        }
        None
    }

    /// For a merge of two edges where only one, `direct`, is fixed by an arm `k` of the
    /// immediate dominator `D` (see `dominating_arm`) and leaves a block `M` by its
    /// `brif`, while the other edge is reachable from both arms of `D`: the shape of every
    /// loop clang vectorizes or unrolls, where `D` skips the vector loop for short trip
    /// counts, `M` after it skips the remainder loop when nothing is left, and the
    /// remainder loop's exit is the other edge. Then the edge taken is `direct` exactly
    /// when the last `D` chose arm `k` and the `M` after it chose `direct`: on arm `k`
    /// every path to the other edge passes `M` (checked below), and `M` runs only on arm
    /// `k` (it is dominated by it). The reverse pass tests `D`'s condition, and reads
    /// `M`'s only on arm `k`, where `M` ran, instead of taping the edge: 8 bytes per
    /// vectorized loop run, which on GMM's triangle was 2 MB per call.
    fn nested_decider(&self, target: EdgeTarget) -> Option<NestedDecider> {
        let EdgeTarget::Block(merge) = target else { return None };
        let edges = self.plan.info.incoming.get(&target)?;
        let [e0, e1] = edges.as_slice() else { return None };
        let (direct, (d, k)) =
            match (self.dominating_arm(target, *e0), self.dominating_arm(target, *e1)) {
                (Some(arm), None) => (0, arm),
                (None, Some(arm)) => (1, arm),
                _ => return None,
            };
        let (through, other) = (edges[direct], edges[1 - direct]);
        let m = through.from;
        if m == d || other.from == m {
            return None;
        }
        let loops = &self.plan.info.loops;
        let here = loops.loop_of(merge);
        if loops.loop_of(m) != here || loops.loop_of(d) != here {
            return None;
        }
        let brif_parts =
            |block: Block| match self.primal.terminator(block).map(|t| &self.primal.dfg.insts[t]) {
                Some(InstructionData::Brif { cond, then_dest, else_dest }) => {
                    Some((*cond, [then_dest.block, else_dest.block]))
                }
                _ => None,
            };
        let (outer, d_targets) = brif_parts(d)?;
        let (inner, _) = brif_parts(m)?;
        // On arm `k`, the other edge's source is reached only through `M` (or after `D`
        // runs again, or through the merge itself).
        let arm = d_targets[k];
        let mut stack = vec![arm];
        let mut seen = std::collections::HashSet::new();
        while let Some(block) = stack.pop() {
            if block == other.from {
                return None;
            }
            if !seen.insert(block) || block == m || block == d || block == merge {
                continue;
            }
            stack.extend(self.primal.successors(block));
        }
        Some(NestedDecider { outer, outer_arm: k, inner, inner_arm: through.succ_index, direct })
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
                        "a pointer without a shadow flowing into a block parameter that needs one",
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
            [_, _]
                if self.decider(target).is_none()
                    && self.header_decider(target).is_none()
                    && self.nested_decider(target).is_some() =>
            {
                let nested = self.nested_decider(target).expect("checked by the guard");
                self.leave_by_nested_decider(target, &edges, &nested, adjoints);
            }
            _ => {
                let decider = match (self.decider(target), self.header_decider(target)) {
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

    /// The reverse branch of a merge chosen by a [`NestedDecider`]: `D`'s condition picks
    /// the other edge or a block that reads `M`'s condition, which picks between the two.
    fn leave_by_nested_decider(
        &mut self,
        target: EdgeTarget,
        edges: &[Edge],
        nested: &NestedDecider,
        adjoints: Vec<(usize, Value)>,
    ) {
        let outer = self.primal_in_reverse(nested.outer);
        let region_end = self.cur;
        // Values read for `M`'s condition stay in its block: the other edge's block is
        // also entered from the region, where `M` may not have run.
        let region_memo = self.cache.snapshot();
        let inner_block = self.new_block();
        self.cur = inner_block;
        let inner = self.primal_in_reverse(nested.inner);
        let inner_end = self.cur;
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
        let (direct, other) = (blocks[nested.direct], blocks[1 - nested.direct]);
        let brif = |s: &mut Self, cond: Value, taken: Block, not_taken: Block, arm: usize| {
            let (then_block, else_block) =
                if arm == 0 { (taken, not_taken) } else { (not_taken, taken) };
            s.ins(InstructionData::Brif {
                cond,
                then_dest: BlockCall::new(then_block, Vec::new()),
                else_dest: BlockCall::new(else_block, Vec::new()),
            });
        };
        self.cur = region_end;
        brif(self, outer, inner_block, other, nested.outer_arm);
        self.cur = inner_end;
        brif(self, inner, direct, other, nested.inner_arm);
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
