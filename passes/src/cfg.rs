//! The control-flow graph of a function: successors and predecessors of every laid-out
//! block, plus the reverse post-order of the reachable ones. Duplicate edges (a `brif`
//! with both arms to one block) are kept once, since no analysis built on it cares how
//! many edges join two blocks.

use std::fmt::Write as _;

use adc_ir::text::FunctionPrinter;
use adc_ir::{Block, Diagnostic, Function};
use cranelift_entity::SecondaryMap;

use crate::manager::{
    AnalysisContext, DependsOn, FunctionAnalysis, FunctionContext, FunctionPass, Pass,
    PreservedAnalyses,
};

#[derive(Clone, Debug, Default)]
pub struct ControlFlowGraph {
    succs: SecondaryMap<Block, Vec<Block>>,
    preds: SecondaryMap<Block, Vec<Block>>,
    /// Blocks in layout order.
    blocks: Vec<Block>,
}

impl ControlFlowGraph {
    pub fn new(func: &Function) -> ControlFlowGraph {
        let mut cfg =
            ControlFlowGraph { blocks: func.layout.blocks().to_vec(), ..Default::default() };
        for &block in func.layout.blocks() {
            for succ in func.successors(block) {
                // Only edges to laid-out blocks: a branch to a removed block is a verifier
                // error, and analyses must not trip over it.
                if !func.layout.is_block_inserted(succ) || cfg.succs[block].contains(&succ) {
                    continue;
                }
                cfg.succs[block].push(succ);
                cfg.preds[succ].push(block);
            }
        }
        cfg
    }

    /// Successors in branch order, each once.
    pub fn succs(&self, block: Block) -> &[Block] {
        &self.succs[block]
    }

    /// Predecessors in layout order of the branching block, each once.
    pub fn preds(&self, block: Block) -> &[Block] {
        &self.preds[block]
    }

    /// Laid-out blocks in layout order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }
}

impl FunctionAnalysis for ControlFlowGraph {
    const NAME: &'static str = "cfg";
    const DEPENDS_ON: DependsOn = DependsOn::Cfg;

    fn compute(func: &Function, _cx: &mut AnalysisContext<'_>) -> Self {
        ControlFlowGraph::new(func)
    }
}

/// Writes `fn @name` then one line per block: `^b: preds ^a, ^c; succs ^d`.
pub fn print_cfg(
    cfg: &ControlFlowGraph,
    printer: &FunctionPrinter<'_>,
    name: &str,
    out: &mut String,
) {
    let _ = writeln!(out, "cfg @{name}");
    let list =
        |blocks: &[Block]| blocks.iter().map(|b| printer.block(*b)).collect::<Vec<_>>().join(", ");
    for &block in cfg.blocks() {
        let _ = writeln!(
            out,
            "  {}: preds [{}] succs [{}]",
            printer.block(block),
            list(cfg.preds(block)),
            list(cfg.succs(block))
        );
    }
}

/// `print-cfg`.
pub struct PrintCfg;

impl Pass for PrintCfg {
    fn name(&self) -> &'static str {
        "print-cfg"
    }
}

impl FunctionPass for PrintCfg {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let cfg = cx.analysis::<ControlFlowGraph>(func);
        let printer = FunctionPrinter::new(cx.module, func);
        print_cfg(&cfg, &printer, &func.name, cx.out);
        Ok(PreservedAnalyses::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_edges() {
        let module = adc_ir::examples::sum_of_sines();
        let func = module.functions.values().find(|f| f.name == "sum").unwrap();
        let cfg = ControlFlowGraph::new(func);
        let b = func.layout.blocks();
        assert_eq!(cfg.succs(b[0]), &[b[1]]);
        assert_eq!(cfg.preds(b[1]), &[b[0], b[2]]);
        assert_eq!(cfg.succs(b[1]), &[b[2], b[3]]);
        assert!(cfg.succs(b[3]).is_empty());
    }
}
