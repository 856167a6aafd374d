//! The one checked registry: every pass and analysis printer, declared once with its
//! kebab-case name and a one-line description. The CLI (`adc passes`, `--passes`,
//! `--print-after`), filetest headers, pipelines and reports all use these names; the
//! tests at the bottom check that names are unique, kebab-case, and match `Pass::name`.

use crate::manager::{AnyPass, PassError};

/// What a pass is, for `adc passes` and for the rules on pipelines.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PassKind {
    /// Changes the IR (or its attributes).
    Transform,
    /// Prints an analysis to the report's output; changes nothing.
    Printer,
    /// Checks or housekeeping (the verifier).
    Utility,
}

impl PassKind {
    pub fn name(self) -> &'static str {
        match self {
            PassKind::Transform => "transform",
            PassKind::Printer => "printer",
            PassKind::Utility => "utility",
        }
    }

    /// The heading `adc passes` prints above passes of this kind.
    pub fn heading(self) -> &'static str {
        match self {
            PassKind::Transform => "transforms",
            PassKind::Printer => "analysis printers",
            PassKind::Utility => "utilities",
        }
    }
}

/// One registry entry.
#[derive(Debug)]
pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub kind: PassKind,
    pub create: fn() -> AnyPass,
}

/// Shorthands so each entry stays one line of data.
macro_rules! function_pass {
    ($e:expr) => {
        || AnyPass::Function(Box::new($e))
    };
}
macro_rules! module_pass {
    ($e:expr) => {
        || AnyPass::Module(Box::new($e))
    };
}

use PassKind::*;

/// Every pass adc knows, in the order `adc passes` lists them: transforms, then printers,
/// then utilities. Add a transform here once, then put it in `pipelines.rs`.
pub static REGISTRY: &[PassInfo] = &[
    // --- transforms ---
    PassInfo {
        name: "infer-effects",
        description:
            "add readnone/readonly/argmemonly/nofree/willreturn inferred over the call graph",
        kind: Transform,
        create: module_pass!(crate::effects::InferEffects),
    },
    PassInfo {
        name: "simplify-cfg",
        description: "fold constant branches, drop unreachable blocks, thread and merge blocks",
        kind: Transform,
        create: function_pass!(crate::simplify_cfg::SimplifyCfg),
    },
    PassInfo {
        name: "mem2reg",
        description: "promote non-escaping allocas to SSA values with block parameters",
        kind: Transform,
        create: function_pass!(crate::mem2reg::Mem2Reg),
    },
    PassInfo {
        name: "sroa",
        description: "split small aggregate allocas accessed at constant offsets into scalars",
        kind: Transform,
        create: function_pass!(crate::sroa::Sroa),
    },
    PassInfo {
        name: "sccp",
        description: "sparse conditional constant propagation, folding as the interpreter computes",
        kind: Transform,
        create: function_pass!(crate::sccp::Sccp),
    },
    PassInfo {
        name: "dce",
        description: "remove side-effect-free instructions and block parameters nobody uses",
        kind: Transform,
        create: function_pass!(crate::dce::Dce),
    },
    PassInfo {
        name: "inline",
        description:
            "inline small non-recursive direct callees (alwaysinline always, noinline never)",
        kind: Transform,
        create: module_pass!(crate::inline::Inline),
    },
    PassInfo {
        name: "global-dce",
        description: "remove internal and linkonce_odr functions nothing reachable calls or names",
        kind: Transform,
        create: module_pass!(crate::global_dce::GlobalDce),
    },
    PassInfo {
        name: "gvn",
        description: "dominator-scoped value numbering, redundant loads, store-to-load forwarding",
        kind: Transform,
        create: function_pass!(crate::gvn::Gvn { memory: true }),
    },
    PassInfo {
        name: "cse",
        description: "gvn without the memory part: pure instructions only",
        kind: Transform,
        create: function_pass!(crate::gvn::Gvn { memory: false }),
    },
    PassInfo {
        name: "licm",
        description:
            "hoist loop-invariant pure code, unclobbered loads and readonly calls (guarded)",
        kind: Transform,
        create: function_pass!(crate::licm::Licm),
    },
    PassInfo {
        name: "dse",
        description: "remove stores overwritten before any read, and stores to locals never read",
        kind: Transform,
        create: function_pass!(crate::dse::Dse),
    },
    PassInfo {
        name: "interleave",
        description:
            "split reassociable float sums carried by small innermost loops into two partial sums (unroll x2)",
        kind: Transform,
        create: function_pass!(crate::interleave::Interleave),
    },
    PassInfo {
        name: "scalarize",
        description:
            "split every vector value into its lanes (what the Enzyme API differentiates of vectorized functions)",
        kind: Transform,
        create: function_pass!(crate::scalarize::Scalarize),
    },
    PassInfo {
        name: "vectorize",
        description:
            "run two iterations of simple innermost f64 loops at once in <2 x f64> (remainder in the original loop)",
        kind: Transform,
        create: function_pass!(crate::vectorize::Vectorize),
    },
    PassInfo {
        name: "egraph",
        description:
            "e-graph simplification (egg): IEEE-exact rules always, fast-math rules under flags",
        kind: Transform,
        create: function_pass!(crate::egraph::EGraphPass),
    },
    // --- analysis printers ---
    PassInfo {
        name: "print-cfg",
        description: "print each block's predecessors and successors",
        kind: Printer,
        create: function_pass!(crate::cfg::PrintCfg),
    },
    PassInfo {
        name: "print-domtree",
        description: "print each block's immediate dominator, tree children and dominance frontier",
        kind: Printer,
        create: function_pass!(crate::domtree::PrintDomtree),
    },
    PassInfo {
        name: "print-loops",
        description: "print the natural loops: header, latches, blocks, exits, preheader, depth",
        kind: Printer,
        create: function_pass!(crate::loops::PrintLoops),
    },
    PassInfo {
        name: "print-ivs",
        description:
            "print each loop's induction variables and its trip count (constant or symbolic)",
        kind: Printer,
        create: function_pass!(crate::ivs::PrintIvs),
    },
    PassInfo {
        name: "print-effects",
        description: "print each function's inferred memory effects and termination facts",
        kind: Printer,
        create: module_pass!(crate::effects::PrintEffects),
    },
    PassInfo {
        name: "print-alias",
        description:
            "print alias results for every pair of accessed locations, and mod/ref of calls",
        kind: Printer,
        create: function_pass!(crate::alias::PrintAlias),
    },
    // --- utilities ---
    PassInfo {
        name: "verify",
        description: "run the IR verifier; fails the run on the first invalid module",
        kind: Utility,
        create: module_pass!(crate::utility::Verify),
    },
];

/// Looks a pass up by name; the error lists the valid names.
pub fn lookup(name: &str) -> Result<&'static PassInfo, PassError> {
    REGISTRY
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| PassError::UnknownPass { name: name.to_string(), valid: valid_names() })
}

/// Every registered name, comma-separated (for error notes).
pub fn valid_names() -> String {
    REGISTRY.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_kebab_case_and_match_the_passes() {
        let mut seen = HashSet::new();
        for info in REGISTRY {
            assert!(seen.insert(info.name), "`{}` registered twice", info.name);
            assert!(
                !info.name.is_empty()
                    && info
                        .name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !info.name.starts_with('-')
                    && !info.name.ends_with('-'),
                "`{}` is not kebab-case",
                info.name
            );
            assert_eq!((info.create)().name(), info.name, "registry name vs Pass::name");
            assert!(!info.description.is_empty() && !info.description.contains('\n'));
            assert_ne!(info.name, "all", "`all` is reserved for --print-after all");
        }
    }

    #[test]
    fn printers_are_named_print_something() {
        for info in REGISTRY.iter().filter(|p| p.kind == Printer) {
            assert!(info.name.starts_with("print-"), "{}", info.name);
        }
    }

    #[test]
    fn unknown_pass_error_lists_the_valid_ones() {
        let err = lookup("no-such-pass").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("unknown pass `no-such-pass`"), "{err}");
        assert!(err.contains("verify"), "{err}");
    }
}
