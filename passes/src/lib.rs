//! adc-passes: analyses (cfg, dominator tree, loops, induction variables, effects, alias)
//! and transforms over adc-ir, with the pass manager, the checked registry of pass names
//! and the pipelines.
//!
//! How to write a pass: `docs/src/passes.md`. In short: implement `Pass` plus
//! `FunctionPass` (or `ModulePass`), return what you preserve, count what you did in
//! `cx.stats`, declare the pass once in `registry::REGISTRY`, add filetests.

pub mod alias;
pub mod cfg;
pub mod dce;
pub mod devectorize;
pub mod domtree;
pub mod dse;
pub mod effects;
pub mod egraph;
pub mod global_dce;
pub mod gvn;
pub mod inline;
pub mod interleave;
pub mod ivs;
pub mod licm;
mod licm_region;
pub mod loops;
pub mod manager;
pub mod mem2reg;
pub mod pipelines;
pub mod registry;
pub mod scalar_util;
pub mod scalarize;
pub mod sccp;
pub mod simplify_cfg;
pub mod sroa;
pub mod utility;
pub mod vectorize;

pub use manager::{
    AnalysisContext, AnalysisManager, AnyPass, DependsOn, FunctionAnalysis, FunctionContext,
    FunctionPass, ModuleAnalysis, ModuleContext, ModulePass, Options, Pass, PassError, PassManager,
    PassRecord, PreservedAnalyses, Report, Statistics,
};
pub use pipelines::{parse_pass_list, resolve, Selection, PIPELINES};
pub use registry::{lookup, PassInfo, PassKind, REGISTRY};

/// Runs `passes` in order with `options`; the report comes back even on failure.
pub fn run_passes(
    module: &mut adc_ir::Module,
    passes: &[&'static PassInfo],
    options: &Options,
) -> (Report, Result<(), PassError>) {
    PassManager::new(passes.to_vec(), options.clone()).run(module)
}

/// Shared by the unit tests of the transforms: run one registered pass (verifying after
/// it) on a module given as text, and return the printed result and the report.
#[cfg(test)]
pub(crate) fn run_pass_on_text(pass: &str, text: &str) -> (String, Report) {
    let mut module = adc_ir::text::parse_module(text).expect("test module parses");
    let info = registry::lookup(pass).expect("pass is registered");
    let options = Options { verify_each: true, ..Default::default() };
    let (report, result) = run_passes(&mut module, &[info], &options);
    result.expect("pass succeeds");
    (adc_ir::text::print_module(&module), report)
}
