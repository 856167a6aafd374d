//! Natural loops and the loop nest. A back edge is an edge whose target dominates its
//! source; the loop of a header is the header plus every block that reaches one of its
//! latches without passing through the header. Loops sharing a header are one loop.
//!
//! Irreducible cycles (no dominating header) are not loops here: passes that need a loop
//! (licm, trip counts) simply do not see them, which is the conservative answer.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use adc_ir::text::FunctionPrinter;
use adc_ir::{Block, Diagnostic, Function, Inst, Value};

use crate::cfg::ControlFlowGraph;
use crate::domtree::DominatorTree;
use crate::manager::{
    AnalysisContext, DependsOn, FunctionAnalysis, FunctionContext, FunctionPass, Pass,
    PreservedAnalyses,
};

/// Index of a loop in `LoopInfo::loops`.
pub type LoopId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: Block,
    /// Blocks with a back edge to the header, in reverse post-order.
    pub latches: Vec<Block>,
    /// Every block of the loop (nested loops included), header first, then RPO.
    pub blocks: Vec<Block>,
    /// Blocks of the loop with a successor outside it.
    pub exiting: Vec<Block>,
    /// Blocks outside the loop that a block of the loop branches to.
    pub exits: Vec<Block>,
    /// The unique predecessor of the header outside the loop, if it has the header as
    /// its only successor (where licm puts hoisted code).
    pub preheader: Option<Block>,
    /// The innermost enclosing loop.
    pub parent: Option<LoopId>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

impl Loop {
    pub fn contains(&self, block: Block) -> bool {
        self.blocks.contains(&block)
    }

    /// The blocks outside the loop that branch to its header, in layout order.
    pub fn entering_blocks(&self, func: &Function) -> Vec<Block> {
        func.layout
            .blocks()
            .iter()
            .copied()
            .filter(|b| !self.contains(*b) && func.successors(*b).contains(&self.header))
            .collect()
    }

    /// Whether every predecessor of `exit` is in the loop, so that `exit` dominates
    /// every use of a loop value after the loop (when it is the only exit).
    pub fn is_dedicated_exit(&self, func: &Function, exit: Block) -> bool {
        func.layout
            .blocks()
            .iter()
            .filter(|b| func.successors(**b).contains(&exit))
            .all(|b| self.contains(*b))
    }
}

/// The values defined in `blocks` (parameters and results) that instructions outside
/// them use, in definition order.
pub(crate) fn live_outs(func: &Function, blocks: &[Block]) -> Vec<Value> {
    let mut defined = Vec::new();
    for &block in blocks {
        defined.extend(func.dfg.block_params(block).iter().copied());
        for &inst in func.layout.block_insts(block) {
            defined.extend(func.dfg.inst_result(inst));
        }
    }
    let used_outside: HashSet<Value> = func
        .layout
        .insts()
        .filter(|(b, _)| !blocks.contains(b))
        .flat_map(|(_, i)| func.dfg.insts[i].args())
        .collect();
    defined.into_iter().filter(|v| used_outside.contains(v)).collect()
}

/// LCSSA form for a loop (`blocks`) whose only exit block is the dedicated `exit`: every
/// value used after the loop is passed through a new parameter of `exit`, and the uses
/// after the loop read that parameter. A transformation that adds another way into
/// `exit` (a second copy of the loop, a shortcut past a remainder) then only has to
/// supply the arguments.
pub(crate) fn to_lcssa(func: &mut Function, blocks: &[Block], exit: Block) {
    let outside: Vec<Inst> =
        func.layout.insts().filter(|(b, _)| !blocks.contains(b)).map(|(_, i)| i).collect();
    for v in live_outs(func, blocks) {
        let ty = func.dfg.value_type(v).clone();
        let param = func.dfg.append_block_param(exit, ty);
        for &block in blocks {
            let Some(term) = func.terminator(block) else { continue };
            for call in func.dfg.insts[term].branch_targets_mut() {
                if call.block == exit {
                    call.args.push(v);
                }
            }
        }
        for &inst in &outside {
            func.dfg.insts[inst].map_args(|a| if a == v { param } else { a });
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct LoopInfo {
    /// Outer loops before the loops they contain (headers in reverse post-order).
    pub loops: Vec<Loop>,
    /// The innermost loop of each block in a loop.
    innermost: HashMap<Block, LoopId>,
}

impl LoopInfo {
    pub fn new(cfg: &ControlFlowGraph, dt: &DominatorTree) -> LoopInfo {
        let rpo_index: HashMap<Block, usize> =
            dt.rpo().iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let mut loops = Vec::new();
        for &header in dt.rpo() {
            let latches: Vec<Block> = cfg
                .preds(header)
                .iter()
                .copied()
                .filter(|p| dt.is_reachable(*p) && dt.dominates(header, *p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            // Walk predecessors backwards from the latches, stopping at the header.
            let mut members: HashSet<Block> = HashSet::from([header]);
            let mut work = latches.clone();
            while let Some(block) = work.pop() {
                if members.insert(block) {
                    work.extend(cfg.preds(block).iter().copied().filter(|p| dt.is_reachable(*p)));
                }
            }
            let mut blocks: Vec<Block> = members.iter().copied().collect();
            blocks.sort_by_key(|b| rpo_index.get(b).copied().unwrap_or(usize::MAX));
            let mut latches = latches;
            latches.sort_by_key(|b| rpo_index.get(b).copied().unwrap_or(usize::MAX));
            let mut exiting = Vec::new();
            let mut exits = Vec::new();
            for &block in &blocks {
                for &succ in cfg.succs(block) {
                    if !members.contains(&succ) {
                        if !exiting.contains(&block) {
                            exiting.push(block);
                        }
                        if !exits.contains(&succ) {
                            exits.push(succ);
                        }
                    }
                }
            }
            let outside: Vec<Block> = cfg
                .preds(header)
                .iter()
                .copied()
                .filter(|p| !members.contains(p) && dt.is_reachable(*p))
                .collect();
            let preheader = match outside.as_slice() {
                [single] if cfg.succs(*single) == [header] => Some(*single),
                _ => None,
            };
            loops.push(Loop {
                header,
                latches,
                blocks,
                exiting,
                exits,
                preheader,
                parent: None,
                depth: 1,
            });
        }
        // Headers come in RPO, so an enclosing loop precedes the loops it contains; the
        // parent is the last earlier loop that contains the header.
        for index in 0..loops.len() {
            let header = loops[index].header;
            let parent = (0..index).rev().find(|&j| loops[j].contains(header));
            loops[index].parent = parent;
            loops[index].depth = parent.map_or(1, |p| loops[p].depth + 1);
        }
        let mut innermost = HashMap::new();
        for (id, l) in loops.iter().enumerate() {
            for &block in &l.blocks {
                // Later loops are nested deeper (or disjoint), so they win.
                innermost.insert(block, id);
            }
        }
        LoopInfo { loops, innermost }
    }

    /// The innermost loop containing `block`.
    pub fn loop_of(&self, block: Block) -> Option<LoopId> {
        self.innermost.get(&block).copied()
    }

    /// Loop depth of a block (0 outside every loop).
    pub fn depth(&self, block: Block) -> u32 {
        self.loop_of(block).map_or(0, |l| self.loops[l].depth)
    }

    pub fn is_header(&self, block: Block) -> bool {
        self.loops.iter().any(|l| l.header == block)
    }

    /// Whether no other loop nests inside loop `id`.
    pub fn is_innermost(&self, id: LoopId) -> bool {
        !self.loops.iter().any(|other| other.parent == Some(id))
    }
}

/// An edge that closes a cycle its target does not dominate, as (source, target): the
/// cycle is entered at more than one block (irreducible control flow), so it is no
/// natural loop. Every such cycle has an edge that retreats in reverse post-order to a
/// block not dominating its source; `None` when every cycle is a natural loop.
pub fn irreducible_edge(func: &Function, dt: &DominatorTree) -> Option<(Block, Block)> {
    let order: HashMap<Block, usize> = dt.rpo().iter().enumerate().map(|(i, b)| (*b, i)).collect();
    dt.rpo().iter().find_map(|&from| {
        func.successors(from).into_iter().find_map(|to| {
            let retreating = order.get(&to).is_some_and(|&t| t <= order[&from]);
            (retreating && !dt.dominates(to, from)).then_some((from, to))
        })
    })
}

impl FunctionAnalysis for LoopInfo {
    const NAME: &'static str = "loops";
    const DEPENDS_ON: DependsOn = DependsOn::Cfg;

    fn compute(func: &Function, cx: &mut AnalysisContext<'_>) -> Self {
        let cfg = cx.get::<ControlFlowGraph>(func);
        let dt = cx.get::<DominatorTree>(func);
        LoopInfo::new(&cfg, &dt)
    }
}

/// `print-loops`: one line per loop, outer loops first:
/// `loop ^h: depth 1, parent -, latches [^l], blocks [^h, ^l], exiting [^h], exits [^x],
/// preheader ^p` (`preheader -` when there is none); `no loops` otherwise.
pub struct PrintLoops;

impl Pass for PrintLoops {
    fn name(&self) -> &'static str {
        "print-loops"
    }
}

impl FunctionPass for PrintLoops {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let info = cx.analysis::<LoopInfo>(func);
        let p = FunctionPrinter::new(cx.module, func);
        let list =
            |blocks: &[Block]| blocks.iter().map(|b| p.block(*b)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(cx.out, "loops @{}", func.name);
        if info.loops.is_empty() {
            let _ = writeln!(cx.out, "  no loops");
        }
        for l in &info.loops {
            let parent = l.parent.map_or("-".to_string(), |id| p.block(info.loops[id].header));
            let preheader = l.preheader.map_or("-".to_string(), |b| p.block(b));
            let _ = writeln!(
                cx.out,
                "  loop {}: depth {}, parent {parent}, latches [{}], blocks [{}], exiting [{}], exits [{}], preheader {preheader}",
                p.block(l.header),
                l.depth,
                list(&l.latches),
                list(&l.blocks),
                list(&l.exiting),
                list(&l.exits),
            );
        }
        Ok(PreservedAnalyses::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_loop() {
        let module = adc_ir::examples::sum_of_sines();
        let func = module.functions.values().find(|f| f.name == "sum").unwrap();
        let cfg = ControlFlowGraph::new(func);
        let info = LoopInfo::new(&cfg, &DominatorTree::new(func, &cfg));
        let b = func.layout.blocks();
        assert_eq!(info.loops.len(), 1);
        let l = &info.loops[0];
        assert_eq!((l.header, l.latches.as_slice(), l.preheader), (b[1], &[b[2]][..], Some(b[0])));
        assert_eq!(l.exits, [b[3]]);
        assert_eq!((info.depth(b[2]), info.depth(b[3])), (1, 0));
    }
}
