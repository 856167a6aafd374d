//! Every transform, and the pipelines, accept any valid module without panicking: on the
//! syntactic generator's modules (vectors, aggregates, atomics, indirect calls, varargs,
//! unreachable blocks, odd types everywhere) a pass either succeeds, leaving a module the
//! verifier accepts, or reports a diagnostic.

#[path = "../../ir/tests/generate/mod.rs"]
mod generate;

use adc_ir::verify::verify_module;
use adc_passes::{lookup, pipelines, run_passes, Options, PassError, PassKind, REGISTRY};
use proptest::prelude::*;

/// 128 by default; `ADC_ROBUST_CASES` for a longer search.
fn cases() -> u32 {
    std::env::var("ADC_ROBUST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(128)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn passes_never_panic_and_keep_modules_valid(m in generate::module()) {
        prop_assume!(verify_module(&m.0).is_ok());
        let mut sequences: Vec<Vec<&'static adc_passes::PassInfo>> =
            REGISTRY.iter().filter(|p| p.kind == PassKind::Transform).map(|p| vec![p]).collect();
        for name in ["pre-ad", "post-ad"] {
            let pipeline = pipelines::pipeline(name).expect("pipeline exists");
            sequences.push(pipeline.passes.iter().map(|n| lookup(n).expect("registered")).collect());
        }
        for passes in sequences {
            let mut module = m.0.clone();
            let options = Options { verify_each: true, ..Default::default() };
            let (_, result) = run_passes(&mut module, &passes, &options);
            match result {
                // A pass may refuse an input it cannot handle, with a diagnostic.
                Ok(()) | Err(PassError::Failed { .. }) => {}
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
    }
}
