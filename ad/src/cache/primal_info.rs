//! Facts about the primal's control flow that the cache plan and the synthesis share:
//! dominators, loops and their induction variables, the reverse post-order, the returning
//! blocks and the incoming edges of every block (numbered the way the control tape
//! numbers them). Computed once per primal function, before anything is planned.

use std::collections::HashMap;

use adc_ir::{Block, Function, InstructionData};
use adc_passes::cfg::ControlFlowGraph;
use adc_passes::domtree::DominatorTree;
use adc_passes::ivs::InductionVars;
use adc_passes::loops::{LoopId, LoopInfo};

/// Facts about the primal's control flow computed once before synthesis.
pub(crate) struct PrimalInfo {
    pub domtree: DominatorTree,
    pub loops: LoopInfo,
    pub ivs: InductionVars,
    /// Reachable blocks in reverse post-order.
    pub rpo: Vec<Block>,
    /// Reachable blocks ending in `ret`.
    pub returns: Vec<Block>,
    /// Incoming edges of every reachable block and of the forward exit.
    pub incoming: HashMap<EdgeTarget, Vec<Edge>>,
}

impl PrimalInfo {
    pub fn new(func: &Function) -> PrimalInfo {
        let cfg = ControlFlowGraph::new(func);
        let domtree = DominatorTree::new(func, &cfg);
        let loops = LoopInfo::new(&cfg, &domtree);
        let ivs = InductionVars::new(func, &loops);
        let rpo = domtree.rpo().to_vec();
        let returns: Vec<Block> = rpo
            .iter()
            .copied()
            .filter(|b| {
                func.terminator(*b)
                    .is_some_and(|t| matches!(func.dfg.insts[t], InstructionData::Return { .. }))
            })
            .collect();
        let incoming = incoming_edges(func, &rpo, &returns);
        PrimalInfo { domtree, loops, ivs, rpo, returns, incoming }
    }

    /// Whether a value defined in `block` is computed exactly once before the forward exit,
    /// so that its forward SSA value can be used directly by the reverse pass.
    pub fn defined_once_before_exit(&self, block: Block) -> bool {
        self.loops.depth(block) == 0
            && !self.returns.is_empty()
            && self.returns.iter().all(|r| self.domtree.dominates(block, *r))
    }
}

/// Where an edge goes: a primal block, or the forward exit (from a `ret`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum EdgeTarget {
    Block(Block),
    Exit,
}

impl EdgeTarget {
    /// The primal block, `None` for the forward exit.
    pub(crate) fn block(self) -> Option<Block> {
        match self {
            EdgeTarget::Block(b) => Some(b),
            EdgeTarget::Exit => None,
        }
    }
}

/// One CFG edge: target number `succ_index` of `from`'s terminator (0 for a `ret`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Edge {
    pub from: Block,
    pub succ_index: usize,
}

/// The incoming edges of every reachable block and of the forward exit, in RPO order of
/// their sources (so edge numbering is deterministic).
pub(crate) fn incoming_edges(
    func: &Function,
    rpo: &[Block],
    returns: &[Block],
) -> HashMap<EdgeTarget, Vec<Edge>> {
    let mut incoming: HashMap<EdgeTarget, Vec<Edge>> = HashMap::new();
    for &block in rpo {
        incoming.entry(EdgeTarget::Block(block)).or_default();
        let Some(term) = func.terminator(block) else { continue };
        for (succ_index, target) in func.dfg.insts[term].branch_targets().iter().enumerate() {
            incoming
                .entry(EdgeTarget::Block(target.block))
                .or_default()
                .push(Edge { from: block, succ_index });
        }
    }
    incoming.insert(
        EdgeTarget::Exit,
        returns.iter().map(|b| Edge { from: *b, succ_index: 0 }).collect(),
    );
    incoming
}

impl PrimalInfo {
    /// Loops that `edge` leaves (its source is inside, its target outside), innermost
    /// first.
    pub fn loops_exited(&self, target: EdgeTarget, edge: Edge) -> Vec<LoopId> {
        let mut exited = Vec::new();
        let mut current = self.loops.loop_of(edge.from);
        while let Some(id) = current {
            let l = &self.loops.loops[id];
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
}
