//! Min-cut cache planning: which of the values the reverse pass needs are stored, and
//! which are recomputed from stored ones.
//!
//! The network (petgraph, max-flow by Dinic's algorithm) has two nodes per primal value,
//! `in` and `out`, joined by an edge whose capacity is the cost of storing the value:
//! its size in bytes times how often its block runs (the product of the trip counts of
//! the enclosing loops; 100 for a count not known at compile time). Then:
//!
//! - a value the reverse pass reads (a **root**: requested by an adjoint formula, a branch
//!   decision, an address) has `out -> sink` (∞);
//! - a value that can be recomputed (a pure instruction; a load from memory nothing in the
//!   function may write, per alias analysis) has `operand.out -> in` (∞) for each operand;
//! - a block parameter of a merge the reverse pass decides by one condition
//!   (`merges`) is recomputed from that condition and the two values it selects;
//! - a value that cannot (a load from overwritten memory, a call result, another block
//!   parameter that is not a counted induction variable) has `source -> in` (∞): it
//!   exists only if stored;
//! - a value available for free in the reverse pass (a constant, a parameter of the
//!   function, a value computed once before the exit, a counted induction variable or a
//!   loop-invariant load in its loop slot) has no edge from the source: what is
//!   recomputed from it alone needs nothing stored.
//!
//! A minimum cut separates the sink from the source by cutting `in -> out` edges only:
//! the values whose edge is cut are stored, everything on the sink side is recomputed
//! from them. The textbook case: `sum = x[i] + y[i]` with `x` and `y` overwritten later
//! stores `sum` (one value per iteration) instead of both loads (two), which the
//! heuristic planner (recompute whatever is legal) would store.

use std::collections::{HashMap, HashSet, VecDeque};

use adc_ir::{Block, InstructionData, Value, ValueDef};
use adc_passes::ivs::TripCount;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::CachePlan;

/// Capacity standing for "cannot be cut" (far above any byte count, far below overflow).
const INFINITE: u64 = 1 << 50;
/// The trip count assumed for a loop whose count is not known at compile time.
const UNKNOWN_TRIPS: u64 = 100;

/// How a primal value can reach the reverse pass, as the min-cut sees it.
enum Origin {
    Free,
    Recompute(Vec<Value>),
    StoreOnly,
}

impl CachePlan<'_> {
    /// The primal values (among those the reverse pass can recompute) that the min-cut
    /// stores instead, given the values the reverse pass asked for (`roots`).
    pub(crate) fn min_cut_stores(&self, roots: &HashSet<Value>) -> HashSet<Value> {
        let mut graph = DiGraph::<(), u64>::new();
        let source = graph.add_node(());
        let sink = graph.add_node(());
        let mut nodes: HashMap<Value, (NodeIndex, NodeIndex)> = HashMap::new();
        let mut recomputable = HashSet::new();
        let mut sorted: Vec<Value> = roots.iter().copied().collect();
        sorted.sort();
        let mut queue: VecDeque<Value> = sorted.into_iter().collect();
        while let Some(value) = queue.pop_front() {
            if nodes.contains_key(&value) {
                continue;
            }
            let input = graph.add_node(());
            let output = graph.add_node(());
            nodes.insert(value, (input, output));
            graph.add_edge(input, output, self.store_cost(value));
            match self.origin_for_cut(value) {
                // Nothing flows from a free value: recomputing from it costs no storage.
                Origin::Free => {}
                Origin::StoreOnly => {
                    graph.add_edge(source, input, INFINITE);
                }
                Origin::Recompute(operands) => {
                    recomputable.insert(value);
                    queue.extend(operands);
                }
            }
        }
        for value in &recomputable {
            if let Origin::Recompute(operands) = self.origin_for_cut(*value) {
                for operand in operands {
                    graph.add_edge(nodes[&operand].1, nodes[value].0, INFINITE);
                }
            }
        }
        for root in roots {
            graph.add_edge(nodes[root].1, sink, INFINITE);
        }
        let (_, flows) = petgraph::algo::dinics(&graph, source, sink);
        // The minimum cut closest to the sink (the fewest recomputations among equally
        // cheap cuts): the sink side is what reaches the sink in the residual network.
        let mut reaches = vec![false; graph.node_count()];
        reaches[sink.index()] = true;
        let mut stack = vec![sink];
        while let Some(node) = stack.pop() {
            let into = graph
                .edges_directed(node, petgraph::Direction::Incoming)
                .filter(|e| flows[e.id().index()] < *e.weight())
                .map(|e| e.source());
            let back = graph
                .edges_directed(node, petgraph::Direction::Outgoing)
                .filter(|e| flows[e.id().index()] > 0)
                .map(|e| e.target());
            let next: Vec<NodeIndex> = into.chain(back).collect();
            for n in next {
                if !reaches[n.index()] {
                    reaches[n.index()] = true;
                    stack.push(n);
                }
            }
        }
        recomputable
            .into_iter()
            .filter(|v| {
                let (input, output) = nodes[v];
                !reaches[input.index()] && reaches[output.index()]
            })
            .collect()
    }

    fn origin_for_cut(&self, value: Value) -> Origin {
        let func = self.primal;
        // Counted IVs and loop-invariant loads live in slots, not per iteration.
        if self.loop_slots.iter().any(|s| s.value() == Some(value)) {
            return Origin::Free;
        }
        // An equal dominating value (cache CSE) gives this one for free, when the
        // synthesis asked for the equal values (it asks only when it stores something).
        let leader = self.leaders.get().and_then(|l| l.get(&value));
        if let (true, Some(&leader)) = (self.options.cse, leader) {
            return Origin::Recompute(vec![leader]);
        }
        match func.dfg.value_def(value) {
            ValueDef::Param(block, _) => {
                if Some(block) == func.entry_block()
                    || (!self.split && self.info.defined_once_before_exit(block))
                {
                    Origin::Free
                } else if let Some(m) = self.merged_param(value) {
                    Origin::Recompute(vec![m.cond, m.when_true, m.when_false])
                } else {
                    Origin::StoreOnly
                }
            }
            ValueDef::Result(inst) => {
                let data = &func.dfg.insts[inst];
                if matches!(data, InstructionData::Const { .. }) {
                    return Origin::Free;
                }
                let Some(block) = func.layout.inst_block(inst) else { return Origin::StoreOnly };
                if !self.split && self.info.defined_once_before_exit(block) {
                    return Origin::Free;
                }
                let unwritten = !self.split && self.rereads.loads.contains(&inst);
                let bytes = func.dfg.value_type(value).size().max(1);
                let cheap_libm = super::cost::recompute_libm(self.module, data, bytes);
                if super::recomputable(data) || unwritten || cheap_libm == Some(true) {
                    Origin::Recompute(data.args())
                } else {
                    Origin::StoreOnly
                }
            }
        }
    }

    /// Bytes × how many times the value's block runs (estimated).
    fn store_cost(&self, value: Value) -> u64 {
        let bytes = self.primal.dfg.value_type(value).size().max(1);
        let block = match self.primal.dfg.value_def(value) {
            ValueDef::Param(block, _) => Some(block),
            ValueDef::Result(inst) => self.primal.layout.inst_block(inst),
        };
        bytes.saturating_mul(block.map_or(1, |b| self.executions(b))).min(INFINITE / 4)
    }

    /// How many times `block` runs per call, estimated from the trip counts of its loops.
    pub fn executions(&self, block: Block) -> u64 {
        let mut count: u64 = 1;
        let mut current = self.info.loops.loop_of(block);
        while let Some(id) = current {
            let trips = match self.info.ivs.loops.get(id).and_then(|l| l.trip_count.as_ref()) {
                Some(TripCount::Constant(n)) => u64::try_from(*n).unwrap_or(u64::MAX),
                _ => UNKNOWN_TRIPS,
            };
            count = count.saturating_mul(trips.max(1));
            current = self.info.loops.loops[id].parent;
        }
        count
    }
}
