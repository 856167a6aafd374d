//! Merges the reverse pass decides without a control tape, and the block parameters it
//! recomputes there.
//!
//! A merge with two incoming edges chosen by one `brif` (if/else diamonds, triangles, two
//! returns, arms that contain loops) is reversed by branching on that `brif`'s condition
//! (`crate::reverse::control`). The same condition tells which value a parameter of the
//! merge received: `p = c ? a : b`. Where `a` and `b` are available at the merge (defined
//! where every path to it passes, or computed from such values by operations that cannot
//! trap), the reverse pass recomputes `p` as that `select` instead of storing it once per
//! execution: the start of the remainder loop after a vectorized or unrolled loop (0 when
//! the fast loop was skipped, its trip count otherwise) is such a parameter, on every loop
//! clang -O2 vectorizes.

use adc_ir::{BinaryOp, Block, InstructionData, Value, ValueDef};

use super::{CachePlan, Edge, EdgeTarget};

/// How many instructions deep an incoming value may be recomputed from values available at
/// the merge.
const AVAILABLE_DEPTH: usize = 8;

/// A block parameter recomputed from its merge's decision: `cond ? when_true : when_false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MergedParam {
    pub cond: Value,
    pub when_true: Value,
    pub when_false: Value,
}

impl CachePlan<'_> {
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
        let way_in = self.info.incoming.get(&EdgeTarget::Block(e.from))?;
        let [only] = way_in.as_slice() else { return None };
        is_brif(only.from).then_some((only.from, only.succ_index))
    }

    /// For a merge point with two incoming edges that one `brif` chooses between (an
    /// if/else diamond, a triangle, two returns): the condition, and the index of the
    /// edge taken when it is true. The reverse pass recomputes (or reads the cached)
    /// condition instead of taping the edge.
    pub(crate) fn decider(&self, target: EdgeTarget) -> Option<(Value, usize)> {
        let edges = self.info.incoming.get(&target)?;
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
    pub(crate) fn dominating_arm(&self, target: EdgeTarget, e: Edge) -> Option<(Block, usize)> {
        let EdgeTarget::Block(block) = target else { return None };
        let d = self.info.domtree.idom(block)?;
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
                self.info.incoming.get(&EdgeTarget::Block(arm)).is_some_and(|way_in| {
                    way_in.iter().all(|w| w.from == d || self.info.domtree.dominates(arm, w.from))
                });
            if arm != block && entered_from_d && self.info.domtree.dominates(arm, e.from) {
                return Some((d, k));
            }
        }
        None
    }

    /// The decision and the two incoming values of `param`, a parameter of a merge the
    /// reverse pass decides by one condition (see the module documentation); `None` for
    /// loop headers, other merges, and values not available at the merge.
    pub(crate) fn merged_param(&self, param: Value) -> Option<MergedParam> {
        let ValueDef::Param(merge, index) = self.primal.dfg.value_def(param) else { return None };
        if self.info.loops.loops.iter().any(|l| l.header == merge) {
            return None;
        }
        let target = EdgeTarget::Block(merge);
        let (cond, true_edge) = self.decider(target)?;
        let edges = self.info.incoming.get(&target)?;
        let passed = |edge: &Edge| -> Option<Value> {
            let term = self.primal.terminator(edge.from)?;
            let targets = self.primal.dfg.insts[term].branch_targets();
            targets.get(edge.succ_index)?.args.get(index as usize).copied()
        };
        let when_true = passed(&edges[true_edge])?;
        let when_false = passed(&edges[1 - true_edge])?;
        (self.available_at(when_true, merge, AVAILABLE_DEPTH)
            && self.available_at(when_false, merge, AVAILABLE_DEPTH))
        .then_some(MergedParam { cond, when_true, when_false })
    }

    /// Whether `value` can be computed wherever `merge` runs: a constant, a value defined
    /// in a block that strictly dominates `merge`, or an operation that cannot trap on
    /// such values (its own block need not have run).
    fn available_at(&self, value: Value, merge: Block, depth: usize) -> bool {
        let dfg = &self.primal.dfg;
        match dfg.value_def(value) {
            ValueDef::Param(block, _) => {
                block != merge && self.info.domtree.dominates(block, merge)
            }
            ValueDef::Result(inst) => {
                let data = &dfg.insts[inst];
                if matches!(data, InstructionData::Const { .. }) {
                    return true;
                }
                let Some(block) = self.primal.layout.inst_block(inst) else { return false };
                if block != merge && self.info.domtree.dominates(block, merge) {
                    return true;
                }
                depth > 0
                    && cannot_trap(data)
                    && data.args().into_iter().all(|a| self.available_at(a, merge, depth - 1))
            }
        }
    }
}

/// Whether `data` computes a value without memory, effects or a trap on any operands.
fn cannot_trap(data: &InstructionData) -> bool {
    use BinaryOp as B;
    data.is_pure_non_trapping()
        || matches!(data, InstructionData::ExtractLane { .. } | InstructionData::InsertLane { .. })
        || matches!(data, InstructionData::Binary { op, .. }
            if !matches!(op, B::Udiv | B::Sdiv | B::Urem | B::Srem))
}
