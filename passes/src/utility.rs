//! Utility passes that change nothing: the verifier as a pass (for pipelines and bisecting
//! a failure by hand with `--passes a,verify,b`).

use adc_ir::verify::verify_module;
use adc_ir::{Diagnostic, Module};

use crate::manager::{ModuleContext, ModulePass, Pass, PreservedAnalyses};

/// `verify`: the IR verifier.
pub struct Verify;

impl Pass for Verify {
    fn name(&self) -> &'static str {
        "verify"
    }
}

impl ModulePass for Verify {
    fn run(
        &self,
        module: &mut Module,
        _cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        match verify_module(module) {
            Ok(()) => Ok(PreservedAnalyses::All),
            Err(diagnostics) => {
                let mut error = Diagnostic::new("the module does not verify");
                for d in diagnostics.0 {
                    error = error.with_note(d.to_string());
                }
                Err(error)
            }
        }
    }
}
