//! The default pipelines, as commented arrays, and the one function that turns a
//! command line (`--pipeline NAME`, `--passes a,b,c`, `--passes=-licm,+name`) into the
//! sequence of passes to run.
//!
//! Rule: a pipeline may only name registered passes (checked by the tests below). The
//! intended final order is written in comments; transform authors move their pass from the
//! comment into the array when it lands, keeping the reason for its position.

use crate::manager::PassError;
use crate::registry::{lookup, PassInfo};

pub struct Pipeline {
    pub name: &'static str,
    pub description: &'static str,
    pub passes: &'static [&'static str],
}

/// `O0`: nothing beyond what later stages require. AD of unoptimized code (the reference
/// point of ablations, like Enzyme's "AD before optimization").
const O0: &[&str] = &[];

/// `pre-ad`: what runs before differentiation — the equivalent of Enzyme's -O2 without
/// vectorization or unrolling.
const PRE_AD: &[&str] = &[
    // First: clang -O0 code is full of trivial blocks that hide loops.
    "simplify-cfg",
    // Before mem2reg: splits small struct/array locals so mem2reg sees scalar slots.
    "sroa",
    // Allocas to SSA values: every later pass reasons on SSA.
    "mem2reg",
    // After mem2reg so the cost model sees the real size; before the scalar passes so they
    // optimize across the old call boundary.
    "inline",
    // The static helpers inlining made unused: no pass after this one optimizes them.
    "global-dce",
    // After inlining: the readnone/readonly facts of the remaining calls are what gvn and
    // licm need to merge or move them.
    "infer-effects",
    // Constants through branches; exposes dead blocks.
    "sccp",
    // Removes the blocks sccp proved dead.
    "simplify-cfg",
    // CSE, redundant loads, store-to-load forwarding.
    "gvn",
    // Hoists pure/readonly calls and loads (`mag(in)` in the norm example): the pass that
    // changes the gradient's complexity class.
    "licm",
    // IEEE-exact algebraic simplification (fast-math rules only under the flags).
    "egraph",
    // After gvn forwarded the loads that read them: stores nobody reads, before dce.
    "dse",
    // Cleans up everything the others orphaned.
    "dce",
];

/// `post-ad`: cleans up the synthesized derivative, which is full of recomputation,
/// zero-initialized shadows and single-use blocks.
const POST_AD: &[&str] = &[
    // Merges the reverse pass's chains of blocks.
    "simplify-cfg",
    // The tape helper `__adc_tape_push` (one call per taped value and iteration): while it
    // is a call, its tape header stays in memory and every call clobbers the loads around
    // it, so gvn and licm cannot touch the loops. Inlined, sroa + mem2reg below turn the
    // header into SSA values.
    "inline",
    // What nothing calls now: the tape helpers inlined everywhere, and the copies AD
    // differentiated (`f.scalar`, specialized copies), which the derivatives replaced.
    "global-dce",
    // Inlining splits every calling block in two and leaves the callee's blocks behind
    // jumps; merged before mem2reg, which would otherwise thread the promoted tape headers
    // through each of those blocks as parameters.
    "simplify-cfg",
    // Shadows of struct/array locals split into scalar slots mem2reg can promote.
    "sroa",
    // Shadows of promoted locals become SSA values.
    "mem2reg",
    // Adjoints of constants are zero: folds them away.
    "sccp",
    // Recomputed primal values and tape loads.
    "gvn",
    // Tape and shadow loads invariant in reversed loops.
    "licm",
    // `dx += a*w; dx += b*w` -> `dx += (a+b)*w`, under `reassoc` only.
    "egraph",
    // Zero-initializations of shadows that are overwritten or never read, before dce.
    "dse",
    // What the reverse pass computed but nobody reads.
    "dce",
    // Two iterations per instruction in simple f64 loops (primal and reversed alike): half
    // the instructions, and half the microcode assists where adjoints are denormal.
    // After dse and dce, which take the dead stores, sums and parameters out of the loop
    // bodies; before interleave, which then splits the sums of loops it could not vectorize.
    "vectorize",
    // Adjoints accumulated once per iteration of a reversed loop (a loop-carried `fadd`
    // chain the primal loop did not have) become two partial sums.
    "interleave",
    // The induction-variable copies the two above leave unused.
    "dce",
    // Last: the backend and later modules benefit from the attributes.
    "infer-effects",
];

/// Every pipeline, by name.
pub static PIPELINES: &[Pipeline] = &[
    Pipeline { name: "O0", description: "no optimization (AD of the code as written)", passes: O0 },
    Pipeline {
        name: "pre-ad",
        description: "before differentiation: Enzyme's -O2 without vectorization/unrolling",
        passes: PRE_AD,
    },
    Pipeline {
        name: "post-ad",
        description: "cleans the synthesized derivative up",
        passes: POST_AD,
    },
];

pub fn pipeline(name: &str) -> Result<&'static Pipeline, PassError> {
    PIPELINES.iter().find(|p| p.name == name).ok_or_else(|| PassError::UnknownPipeline {
        name: name.to_string(),
        valid: PIPELINES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
    })
}

/// What the command line asked for, before resolution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `--pipeline NAME`.
    pub pipeline: Option<String>,
    /// `--passes LIST`: either an explicit list (`a,b,c`, run exactly those, in order) or
    /// only toggles (`-licm,+name`) applied to the pipeline. An empty list runs nothing.
    pub passes: Option<String>,
}

/// THE toggle resolution. `default_pipeline` is what runs without `--pipeline`
/// (`O0` for `adc opt`, `pre-ad`/`post-ad` for the two halves of `adc build`).
///
/// - `-name` removes every occurrence of `name`, except a required pass, which stays.
/// - `+name` appends `name` at the end unless it is already there.
/// - Toggles apply left to right; toggling a pass the pipeline lacks is not an error
///   (`adc build --passes=-licm` toggles both pipelines), but an unknown name is.
/// - An explicit list with `--pipeline`, or a list mixing names and toggles, is an error.
pub fn resolve(
    selection: &Selection,
    default_pipeline: &str,
) -> Result<Vec<&'static PassInfo>, PassError> {
    let items: Vec<&str> = match &selection.passes {
        Some(list) => list.split(',').map(str::trim).filter(|n| !n.is_empty()).collect(),
        None => Vec::new(),
    };
    let toggles = items.iter().filter(|i| i.starts_with('+') || i.starts_with('-')).count();
    if selection.passes.is_some() && toggles == 0 {
        if let Some(name) = &selection.pipeline {
            return Err(PassError::BadSelection(format!(
                "`--pipeline {name}` and an explicit `--passes` list conflict; write toggles \
                 (`--passes=-licm,+name`) to change a pipeline"
            )));
        }
        return items.iter().map(|n| lookup(n)).collect();
    }
    if toggles != items.len() {
        return Err(PassError::BadSelection(format!(
            "`--passes {}` mixes pass names and +/- toggles; use one or the other",
            selection.passes.as_deref().unwrap_or("")
        )));
    }
    let base = pipeline(selection.pipeline.as_deref().unwrap_or(default_pipeline))?;
    let mut passes: Vec<&'static PassInfo> =
        base.passes.iter().map(|n| lookup(n)).collect::<Result<_, _>>()?;
    for item in items {
        let (sign, name) = item.split_at(1);
        let info = lookup(name.trim())?;
        if sign == "-" {
            passes.retain(|p| p.name != info.name || (p.create)().is_required());
        } else if !passes.iter().any(|p| p.name == info.name) {
            passes.push(info);
        }
    }
    Ok(passes)
}

/// Resolves a plain comma-separated list such as `mem2reg,licm` (filetest `; passes:`).
pub fn parse_pass_list(list: &str) -> Result<Vec<&'static PassInfo>, PassError> {
    resolve(&Selection { pipeline: None, passes: Some(list.to_string()) }, "O0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(passes: &[&PassInfo]) -> Vec<&'static str> {
        passes.iter().map(|p| p.name).collect()
    }

    fn sel(pipeline: Option<&str>, passes: Option<&str>) -> Selection {
        Selection { pipeline: pipeline.map(String::from), passes: passes.map(String::from) }
    }

    #[test]
    fn pipelines_name_only_registered_passes() {
        for p in PIPELINES {
            for name in p.passes {
                assert!(lookup(name).is_ok(), "pipeline {} names unknown pass {name}", p.name);
            }
        }
    }

    #[test]
    fn explicit_list_runs_exactly_those() {
        let passes = resolve(&sel(None, Some("verify, verify")), "pre-ad").unwrap();
        assert_eq!(names(&passes), ["verify", "verify"]);
        assert!(resolve(&sel(None, Some("")), "pre-ad").unwrap().is_empty());
    }

    #[test]
    fn toggles_apply_to_the_pipeline() {
        let base = resolve(&sel(Some("pre-ad"), None), "O0").unwrap();
        let plus = resolve(&sel(Some("pre-ad"), Some("+verify")), "O0").unwrap();
        assert_eq!(plus.len(), base.len() + 1);
        assert_eq!(plus.last().map(|p| p.name), Some("verify"));
        let minus = resolve(&sel(None, Some("+verify,-verify")), "pre-ad").unwrap();
        assert_eq!(names(&minus), names(&base));
        // Toggling a pass that is not in the pipeline is fine; an unknown name is not.
        assert!(resolve(&sel(None, Some("-verify")), "O0").unwrap().is_empty());
        let err = resolve(&sel(None, Some("-nope")), "O0").unwrap_err().to_string();
        assert!(err.contains("unknown pass `nope`") && err.contains("valid passes"), "{err}");
    }

    #[test]
    fn conflicting_selections_are_errors() {
        assert!(resolve(&sel(Some("pre-ad"), Some("verify")), "O0").is_err());
        assert!(resolve(&sel(None, Some("verify,-verify")), "O0").is_err());
        let err = resolve(&sel(Some("O3"), None), "O0").unwrap_err().to_string();
        assert!(err.contains("unknown pipeline `O3`") && err.contains("pre-ad"), "{err}");
    }
}
