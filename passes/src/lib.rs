//! adc-passes: analyses (cfg, dominator tree, loops, alias, effects) and transforms
//! (mem2reg, cse/gvn, licm, inlining, e-graph simplification) over adc-ir, with the pass
//! trait, the checked registry of pass names and the pipelines.
//!
//! Every pass is declared once in `REGISTRY`; its kebab-case name is what the CLI, the
//! filetest headers and the reports use. The registry holds no transform yet (they land
//! with the passes issue), but names are already resolved and unknown ones rejected here.

use adc_ir::verify::verify_module;
use adc_ir::{Diagnostic, Diagnostics, Module};

/// A transformation or analysis printer over a whole module.
pub trait Pass {
    /// The registry name, e.g. `licm`.
    fn name(&self) -> &'static str;
    /// Required passes run even when disabled by a `-name` toggle.
    fn is_required(&self) -> bool {
        false
    }
    /// Runs the pass; returns whether the module changed.
    fn run(&self, module: &mut Module) -> Result<bool, Diagnostic>;
}

/// One registry entry: a name, what the pass does, and how to make it.
pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub create: fn() -> Box<dyn Pass>,
}

/// Every pass adc knows, in the order `adc opt --help` lists them.
pub static REGISTRY: &[PassInfo] = &[];

/// Looks a pass up by name; the error lists the valid names.
pub fn lookup(name: &str) -> Result<&'static PassInfo, Diagnostic> {
    REGISTRY.iter().find(|p| p.name == name).ok_or_else(|| {
        let valid = if REGISTRY.is_empty() {
            "no passes are registered yet".to_string()
        } else {
            let names: Vec<_> = REGISTRY.iter().map(|p| p.name).collect();
            format!("valid passes: {}", names.join(", "))
        };
        Diagnostic::new(format!("unknown pass `{name}`")).with_note(valid)
    })
}

/// Resolves a comma-separated list such as `mem2reg,licm` (spaces allowed, empty = none).
pub fn parse_pass_list(list: &str) -> Result<Vec<&'static PassInfo>, Diagnostic> {
    list.split(',').map(str::trim).filter(|n| !n.is_empty()).map(lookup).collect()
}

/// Runs `passes` in order. With `verify_each`, the verifier runs after every pass and a
/// failure names the pass that broke the module.
pub fn run_passes(
    module: &mut Module,
    passes: &[&PassInfo],
    verify_each: bool,
) -> Result<(), Diagnostics> {
    for info in passes {
        let pass = (info.create)();
        pass.run(module).map_err(|d| Diagnostics(vec![d]))?;
        if verify_each {
            verify_module(module).map_err(|Diagnostics(errors)| {
                Diagnostics(
                    errors
                        .into_iter()
                        .map(|d| d.with_note(format!("after pass `{}`", info.name)))
                        .collect(),
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_pass_is_an_error_naming_it() {
        let err = parse_pass_list("mem2reg").err().map(|d| d.to_string()).unwrap_or_default();
        assert!(err.contains("unknown pass `mem2reg`"), "{err}");
    }

    #[test]
    fn empty_list_is_no_passes() {
        assert!(parse_pass_list(" , ").map(|p| p.is_empty()).unwrap_or(false));
    }
}
