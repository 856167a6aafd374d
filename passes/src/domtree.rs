//! The dominator tree (`adc_ir::dominance::DomTree`, shared with the verifier) as a cached
//! analysis, with tree children and dominance frontiers (Cooper, Harvey and Kennedy's
//! frontier walk), and its printer `print-domtree`.
//!
//! Unreachable blocks are in neither the tree nor any frontier.

use std::collections::HashMap;
use std::fmt::Write as _;

use adc_ir::dominance::DomTree;
use adc_ir::text::FunctionPrinter;
use adc_ir::{Block, Diagnostic, Function};

use crate::cfg::ControlFlowGraph;
use crate::manager::{
    AnalysisContext, DependsOn, FunctionAnalysis, FunctionContext, FunctionPass, Pass,
    PreservedAnalyses,
};

#[derive(Clone, Debug)]
pub struct DominatorTree {
    /// `None` for a declaration.
    tree: Option<DomTree>,
    children: HashMap<Block, Vec<Block>>,
    frontiers: HashMap<Block, Vec<Block>>,
}

impl DominatorTree {
    pub fn new(func: &Function, cfg: &ControlFlowGraph) -> DominatorTree {
        let tree = DomTree::for_function(func);
        let mut children: HashMap<Block, Vec<Block>> = HashMap::new();
        let mut frontiers: HashMap<Block, Vec<Block>> = HashMap::new();
        if let Some(tree) = &tree {
            for &block in tree.rpo() {
                if let Some(idom) = tree.idom(block) {
                    children.entry(idom).or_default().push(block);
                }
            }
            // A join point is in the frontier of every block on the dominator-tree paths
            // from its predecessors up to (excluding) its immediate dominator.
            for &block in tree.rpo() {
                let preds: Vec<Block> =
                    cfg.preds(block).iter().copied().filter(|p| tree.is_reachable(*p)).collect();
                if preds.len() < 2 {
                    continue;
                }
                let idom = tree.idom(block);
                for pred in preds {
                    let mut runner = Some(pred);
                    while let Some(r) = runner {
                        if Some(r) == idom {
                            break;
                        }
                        let frontier = frontiers.entry(r).or_default();
                        if !frontier.contains(&block) {
                            frontier.push(block);
                        }
                        runner = tree.idom(r);
                    }
                }
            }
        }
        DominatorTree { tree, children, frontiers }
    }

    /// The shared dominator tree (rpo, idom, dominates); `None` for a declaration.
    pub fn tree(&self) -> Option<&DomTree> {
        self.tree.as_ref()
    }

    pub fn idom(&self, block: Block) -> Option<Block> {
        self.tree.as_ref()?.idom(block)
    }

    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.tree.as_ref().is_some_and(|t| t.dominates(a, b))
    }

    pub fn is_reachable(&self, block: Block) -> bool {
        self.tree.as_ref().is_some_and(|t| t.is_reachable(block))
    }

    /// Reachable blocks in reverse post-order.
    pub fn rpo(&self) -> &[Block] {
        self.tree.as_ref().map_or(&[], |t| t.rpo())
    }

    /// Blocks immediately dominated by `block`, in reverse post-order.
    pub fn children(&self, block: Block) -> &[Block] {
        self.children.get(&block).map_or(&[], Vec::as_slice)
    }

    /// The dominance frontier of `block`, in discovery order.
    pub fn frontier(&self, block: Block) -> &[Block] {
        self.frontiers.get(&block).map_or(&[], Vec::as_slice)
    }
}

impl FunctionAnalysis for DominatorTree {
    const NAME: &'static str = "domtree";
    const DEPENDS_ON: DependsOn = DependsOn::Cfg;

    fn compute(func: &Function, cx: &mut AnalysisContext<'_>) -> Self {
        let cfg = cx.get::<ControlFlowGraph>(func);
        DominatorTree::new(func, &cfg)
    }
}

/// `print-domtree`: per block in layout order,
/// `^b: idom ^a, children [^c, ^d], frontier [^e]` (`idom -` for the entry,
/// `^b: unreachable` for blocks not reached from the entry).
pub struct PrintDomtree;

impl Pass for PrintDomtree {
    fn name(&self) -> &'static str {
        "print-domtree"
    }
}

impl FunctionPass for PrintDomtree {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let dt = cx.analysis::<DominatorTree>(func);
        let p = FunctionPrinter::new(cx.module, func);
        let list =
            |blocks: &[Block]| blocks.iter().map(|b| p.block(*b)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(cx.out, "domtree @{}", func.name);
        for &block in func.layout.blocks() {
            if !dt.is_reachable(block) {
                let _ = writeln!(cx.out, "  {}: unreachable", p.block(block));
                continue;
            }
            let idom = dt.idom(block).map_or("-".to_string(), |b| p.block(b));
            let _ = writeln!(
                cx.out,
                "  {}: idom {idom}, children [{}], frontier [{}]",
                p.block(block),
                list(dt.children(block)),
                list(dt.frontier(block))
            );
        }
        Ok(PreservedAnalyses::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_header_is_in_its_own_frontier() {
        let module = adc_ir::examples::sum_of_sines();
        let func = module.functions.values().find(|f| f.name == "sum").unwrap();
        let dt = DominatorTree::new(func, &ControlFlowGraph::new(func));
        let b = func.layout.blocks();
        // entry, header, body, exit: the body's frontier is the header (the back edge).
        assert_eq!(dt.frontier(b[2]), &[b[1]]);
        assert_eq!(dt.frontier(b[1]), &[b[1]]);
        assert!(dt.frontier(b[0]).is_empty());
        let mut children = dt.children(b[1]).to_vec();
        children.sort();
        assert_eq!(children, [b[2], b[3]]);
    }

    #[test]
    fn declarations_have_an_empty_tree() {
        let func = Function::new("d", adc_ir::Signature::default());
        let dt = DominatorTree::new(&func, &ControlFlowGraph::new(&func));
        assert!(dt.tree().is_none() && dt.rpo().is_empty() && !dt.is_reachable(Block::from_u32(0)));
    }
}
