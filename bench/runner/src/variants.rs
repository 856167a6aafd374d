//! The build variants a benchmark is measured under: which clang bitcode a gradient starts
//! from, which tool differentiates it (adc with which flags, or Enzyme), and whether it is
//! a reference point or an ablation.
//!
//! Methodology (the Enzyme paper's, see docs/src/performance.md): the "before" and
//! "after" gradients both start from unoptimized bitcode (`-O0 -Xclang
//! -disable-O0-optnone`), so that the only difference between them is where AD sits
//! relative to adc's pipelines. "After" on clang -O2 bitcode (plain, as users compile, and
//! scalar, without vectorization and unrolling) is reported beside them, and with
//! `--enzyme`, Enzyme and adc on the very same clang-14 -O2 bitcode.

/// Which clang bitcode a gradient (or adc primal) is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bitcode {
    /// `-O0 -Xclang -disable-O0-optnone`: clang's allocas and loads, no inlining; adc's
    /// pipelines do all the optimization.
    Unoptimized,
    /// `-O2` without vectorization and unrolling: the pre-AD setting Enzyme's paper assumes,
    /// kept beside [`Bitcode::Vectorized`] to show what LLVM's vector loops cost or win.
    Scalar,
    /// Plain `clang-19 -O2`: vectorized and unrolled loops, what users give a compiler.
    Vectorized,
    /// Plain `clang-14 -O2`: LLVM 14 is the newest Enzyme v0.0.148 loads into, so Enzyme and
    /// adc both start from this one when they are compared.
    Clang14,
}

impl Bitcode {
    pub fn clang_flags(self) -> &'static [&'static str] {
        match self {
            Bitcode::Unoptimized => &["-O0", "-Xclang", "-disable-O0-optnone"],
            Bitcode::Scalar => {
                &["-O2", "-fno-vectorize", "-fno-slp-vectorize", "-fno-unroll-loops"]
            }
            Bitcode::Vectorized | Bitcode::Clang14 => &["-O2"],
        }
    }

    /// Whether this bitcode comes from clang-14 (the Enzyme comparison) rather than clang-19.
    pub fn is_clang14(self) -> bool {
        self == Bitcode::Clang14
    }

    /// A short name for file names and labels.
    pub fn tag(self) -> &'static str {
        match self {
            Bitcode::Unoptimized => "O0",
            Bitcode::Scalar => "O2scalar",
            Bitcode::Vectorized => "O2vec",
            Bitcode::Clang14 => "clang14-O2",
        }
    }
}

/// Which tool differentiates a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Adc,
    /// Enzyme's opt-14 plugin (only with `--enzyme`; always on [`Bitcode::Clang14`]).
    Enzyme,
}

/// Label of AD after adc's pre-AD pipeline, on unoptimized bitcode (adc's default).
pub const DEFAULT: &str = "default";
/// Label of AD before any optimization (`--ad-before-opt`), on unoptimized bitcode.
pub const BEFORE_OPT: &str = "ad-before-opt";
/// Label of adc's default on clang -O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops
/// bitcode.
pub const AFTER_CLANG_O2_SCALAR: &str = "default-clang-O2-scalar";
/// Label of adc's default on plain clang -O2 bitcode (vectorized, unrolled).
pub const AFTER_CLANG_O2_VEC: &str = "default-clang-O2-vec";
/// Label of Enzyme's gradient from clang-14 -O2 bitcode.
pub const ENZYME: &str = "enzyme-clang14-O2";
/// Label of adc's default on the same clang-14 -O2 bitcode Enzyme gets.
pub const ADC_CLANG14: &str = "default-clang14-O2";

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
    pub tool: Tool,
    /// Flags of `adc build` (none for Enzyme).
    pub adc_flags: Vec<String>,
    /// Ablations are reported as slowdowns against [`DEFAULT`].
    pub is_ablation: bool,
}

impl Variant {
    fn reference(label: &str, bitcode: Bitcode, flags: &[&str]) -> Variant {
        Variant {
            label: label.to_string(),
            bitcode,
            tool: Tool::Adc,
            adc_flags: flags.iter().map(|f| f.to_string()).collect(),
            is_ablation: false,
        }
    }

    fn ablation(label: String, adc_flags: Vec<String>) -> Variant {
        Variant {
            label,
            bitcode: Bitcode::Unoptimized,
            tool: Tool::Adc,
            adc_flags,
            is_ablation: true,
        }
    }
}

/// The references (with `enzyme`, Enzyme and adc on clang-14 bitcode among them), then one
/// ablation per pass of the default pipelines (`-name`, read from `adc passes`), then
/// [`EXTRA_ABLATIONS`].
pub fn variants(pipeline_passes: &[String], enzyme: bool) -> Vec<Variant> {
    let mut all = vec![
        Variant::reference(DEFAULT, Bitcode::Unoptimized, &[]),
        Variant::reference(BEFORE_OPT, Bitcode::Unoptimized, &["--ad-before-opt"]),
        Variant::reference(AFTER_CLANG_O2_SCALAR, Bitcode::Scalar, &[]),
        Variant::reference(AFTER_CLANG_O2_VEC, Bitcode::Vectorized, &[]),
    ];
    if enzyme {
        all.push(Variant {
            tool: Tool::Enzyme,
            ..Variant::reference(ENZYME, Bitcode::Clang14, &[])
        });
        all.push(Variant::reference(ADC_CLANG14, Bitcode::Clang14, &[]));
    }
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
        let all = variants(&passes, false);
        let labels: Vec<&str> = all.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(&labels[..4], &[DEFAULT, BEFORE_OPT, AFTER_CLANG_O2_SCALAR, AFTER_CLANG_O2_VEC]);
        assert_eq!(&labels[4..6], &["-licm", "-gvn"]);
        assert_eq!(all[4].adc_flags, vec!["--passes=-licm".to_string()]);
        assert!(all[4..].iter().all(|v| v.is_ablation && v.bitcode == Bitcode::Unoptimized));
        assert!(all.iter().all(|v| v.tool == Tool::Adc));
        assert_eq!(all.len(), 6 + EXTRA_ABLATIONS.len());
    }

    #[test]
    fn enzyme_and_adc_share_the_clang14_bitcode() {
        let all = variants(&[], true);
        let enzyme = all.iter().find(|v| v.label == ENZYME).expect("enzyme variant");
        let adc = all.iter().find(|v| v.label == ADC_CLANG14).expect("adc on clang-14 bitcode");
        assert_eq!((enzyme.tool, adc.tool), (Tool::Enzyme, Tool::Adc));
        assert!(enzyme.bitcode.is_clang14() && adc.bitcode.is_clang14());
        assert!(!enzyme.is_ablation && !adc.is_ablation && adc.adc_flags.is_empty());
        // The vectorized and clang-14 bitcode are plain -O2, as users compile.
        assert_eq!(Bitcode::Vectorized.clang_flags(), &["-O2"]);
        assert_eq!(Bitcode::Clang14.clang_flags(), &["-O2"]);
    }
}
