//! The build variants a benchmark is measured under: which clang bitcode adc starts from,
//! which adc flags it gets, and whether it is a reference point or an ablation.
//!
//! Methodology (the Enzyme paper's, see docs/src/performance.md): the "before" and
//! "after" gradients both start from unoptimized bitcode (`-O0 -Xclang
//! -disable-O0-optnone`), so that the only difference between them is where AD sits
//! relative to adc's pipelines. "After" on clang -O2 bitcode is reported beside them.

/// Which clang bitcode adc builds from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bitcode {
    /// `-O0 -Xclang -disable-O0-optnone`: clang's allocas and loads, no inlining; adc's
    /// pipelines do all the optimization.
    Unoptimized,
    /// `-O2` without vectorization and unrolling (vectorized loops carry run-time alias
    /// checks on pointer integers, which reverse mode cannot shadow yet).
    Optimized,
}

impl Bitcode {
    pub fn clang_flags(self) -> &'static [&'static str] {
        match self {
            Bitcode::Unoptimized => &["-O0", "-Xclang", "-disable-O0-optnone"],
            Bitcode::Optimized => {
                &["-O2", "-fno-vectorize", "-fno-slp-vectorize", "-fno-unroll-loops"]
            }
        }
    }

    /// A short name for file names and labels.
    pub fn tag(self) -> &'static str {
        match self {
            Bitcode::Unoptimized => "O0",
            Bitcode::Optimized => "O2",
        }
    }
}

/// Label of AD after adc's pre-AD pipeline, on unoptimized bitcode (adc's default).
pub const DEFAULT: &str = "default";
/// Label of AD before any optimization (`--ad-before-opt`), on unoptimized bitcode.
pub const BEFORE_OPT: &str = "ad-before-opt";
/// Label of adc's default on clang -O2 bitcode.
pub const AFTER_CLANG_O2: &str = "default-clang-O2";

/// Ablations beyond "one pass disabled": (label, adc flags), built from unoptimized
/// bitcode like the default and compared with it. A switch such as
/// `--cache=mincut` is measured by adding one line, `("cache=mincut", &["--cache=mincut"])`.
/// The cache planner's switches (docs/src/ad.md, "Cache planning"): the heuristic planner
/// instead of the default min-cut, the cache toggles turned off, and tape buffers freed
/// on every call instead of kept (`-tape-reuse`); and the Enzyme API calls differentiating
/// their function as it is rather than a copy with constant function-pointer arguments
/// bound (`-specialize-args`).
pub const EXTRA_ABLATIONS: &[(&str, &[&str])] = &[
    ("cache=heuristic", &["--cache=heuristic"]),
    ("-cache-ivs", &["--passes=-cache-ivs"]),
    ("-cache-licm", &["--passes=-cache-licm"]),
    ("-cache-records", &["--passes=-cache-records"]),
    ("-cache-cse", &["--passes=-cache-cse"]),
    ("-tape-reuse", &["--passes=-tape-reuse"]),
    ("-specialize-args", &["--passes=-specialize-args"]),
];

/// One gradient build.
#[derive(Debug, Clone)]
pub struct Variant {
    pub label: String,
    pub bitcode: Bitcode,
    pub adc_flags: Vec<String>,
    /// Ablations are reported as slowdowns against [`DEFAULT`].
    pub is_ablation: bool,
}

impl Variant {
    fn reference(label: &str, bitcode: Bitcode, flags: &[&str]) -> Variant {
        Variant {
            label: label.to_string(),
            bitcode,
            adc_flags: flags.iter().map(|f| f.to_string()).collect(),
            is_ablation: false,
        }
    }

    fn ablation(label: String, adc_flags: Vec<String>) -> Variant {
        Variant { label, bitcode: Bitcode::Unoptimized, adc_flags, is_ablation: true }
    }
}

/// The references, then one ablation per pass of the default pipelines (`-name`, read
/// from `adc passes`), then [`EXTRA_ABLATIONS`].
pub fn variants(pipeline_passes: &[String]) -> Vec<Variant> {
    let mut all = vec![
        Variant::reference(DEFAULT, Bitcode::Unoptimized, &[]),
        Variant::reference(BEFORE_OPT, Bitcode::Unoptimized, &["--ad-before-opt"]),
        Variant::reference(AFTER_CLANG_O2, Bitcode::Optimized, &[]),
    ];
    all.extend(
        pipeline_passes
            .iter()
            .map(|pass| Variant::ablation(format!("-{pass}"), vec![format!("--passes=-{pass}")])),
    );
    all.extend(EXTRA_ABLATIONS.iter().map(|(label, flags)| {
        Variant::ablation(label.to_string(), flags.iter().map(|f| f.to_string()).collect())
    }));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_come_first_and_every_pass_is_ablated_once() {
        let passes = vec!["licm".to_string(), "gvn".to_string()];
        let all = variants(&passes);
        let labels: Vec<&str> = all.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(&labels[..3], &[DEFAULT, BEFORE_OPT, AFTER_CLANG_O2]);
        assert_eq!(&labels[3..5], &["-licm", "-gvn"]);
        assert_eq!(all[3].adc_flags, vec!["--passes=-licm".to_string()]);
        assert!(all[3..].iter().all(|v| v.is_ablation && v.bitcode == Bitcode::Unoptimized));
        assert_eq!(all.len(), 5 + EXTRA_ABLATIONS.len());
    }
}
