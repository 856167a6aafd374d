//! The measured results: for every benchmark and input, the outcome of each variant
//! (timed, or why it was not), and the derived ratios the report and charts show.

use crate::measure::Timing;
pub use crate::variants::{
    ADC_CLANG14, AFTER_CLANG_O2_SCALAR, AFTER_CLANG_O2_VEC, BEFORE_OPT, DEFAULT, ENZYME,
};

/// Per variant: Ok(max relative error against finite differences) or why it failed.
pub type CheckVerdicts = Vec<(String, Result<f64, String>)>;

/// What happened to one variant on one input.
#[derive(Debug, Clone)]
pub enum Outcome {
    Timed(Timing),
    /// The build failed; the tool's error line.
    BuildFailed(String),
    /// The gradient disagrees with finite differences; it is never timed.
    WrongGradient(String),
    /// It built and checked but the timed run failed.
    RunFailed(String),
    /// Not attempted (missing input file, and the like).
    Skipped(String),
}

impl Outcome {
    /// The time ratios are computed from: the fastest repetition. On a machine shared
    /// with other work, interference only ever adds time, so the minimum is the estimate
    /// least disturbed by it (the median is shown beside it).
    pub fn best(&self) -> Option<f64> {
        match self {
            Outcome::Timed(t) => Some(t.min),
            _ => None,
        }
    }

    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Timed(_) => "ok",
            Outcome::BuildFailed(_) => "build failed",
            Outcome::WrongGradient(_) => "wrong gradient",
            Outcome::RunFailed(_) => "run failed",
            Outcome::Skipped(_) => "skipped",
        }
    }

    pub fn detail(&self) -> String {
        match self {
            Outcome::Timed(t) => format!("{} runs", t.samples),
            Outcome::BuildFailed(m)
            | Outcome::WrongGradient(m)
            | Outcome::RunFailed(m)
            | Outcome::Skipped(m) => m.clone(),
        }
    }
}

/// One gradient variant: its label (`default`, `ad-before-opt`, `-licm`, ...) and outcome.
#[derive(Debug, Clone)]
pub struct GradientResult {
    pub variant: String,
    pub outcome: Outcome,
}

/// Everything measured for one benchmark on one input.
#[derive(Debug, Clone)]
pub struct InputResult {
    pub bench: String,
    pub input: String,
    pub native_primal: Outcome,
    /// adc's pipelines on unoptimized bitcode (what the default gradient starts from).
    pub adc_primal: Outcome,
    /// adc's pipelines on clang -O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops
    /// bitcode.
    pub adc_primal_clang_o2_scalar: Outcome,
    /// adc's pipelines on plain clang -O2 bitcode (vectorized, unrolled).
    pub adc_primal_clang_o2_vec: Outcome,
    pub gradients: Vec<GradientResult>,
}

impl InputResult {
    pub fn gradient(&self, variant: &str) -> Option<&Outcome> {
        self.gradients.iter().find(|g| g.variant == variant).map(|g| &g.outcome)
    }

    pub fn gradient_best(&self, variant: &str) -> Option<f64> {
        self.gradient(variant).and_then(Outcome::best)
    }

    /// adc gradient time over adc primal time, both from unoptimized bitcode.
    pub fn gradient_primal_ratio(&self) -> Option<f64> {
        Some(self.gradient_best(DEFAULT)? / self.adc_primal.best()?)
    }

    /// `variant`'s gradient time over the clang -O2 primal time.
    pub fn gradient_native_ratio(&self, variant: &str) -> Option<f64> {
        Some(self.gradient_best(variant)? / self.native_primal.best()?)
    }

    /// How much faster `variant`'s gradient is than AD before optimization (both
    /// `DEFAULT` and `BEFORE_OPT` start from the same unoptimized bitcode).
    pub fn speedup_over_before(&self, variant: &str) -> Option<f64> {
        Some(self.gradient_best(BEFORE_OPT)? / self.gradient_best(variant)?)
    }

    /// How much faster AD after optimization is than AD before it, on the same bitcode.
    pub fn after_vs_before_speedup(&self) -> Option<f64> {
        self.speedup_over_before(DEFAULT)
    }

    /// adc's gradient time from plain clang -O2 bitcode over its time from the scalar
    /// (-fno-vectorize ...) bitcode: below 1 LLVM's vector loops pay off through AD.
    pub fn vectorized_over_scalar(&self) -> Option<f64> {
        Some(self.gradient_best(AFTER_CLANG_O2_VEC)? / self.gradient_best(AFTER_CLANG_O2_SCALAR)?)
    }

    /// adc's gradient over adc's primal, both from plain clang -O2 bitcode.
    pub fn vectorized_gradient_primal_ratio(&self) -> Option<f64> {
        Some(self.gradient_best(AFTER_CLANG_O2_VEC)? / self.adc_primal_clang_o2_vec.best()?)
    }

    /// adc's gradient time over Enzyme's, both from the same clang-14 -O2 bitcode (below 1:
    /// adc is faster).
    pub fn adc_over_enzyme(&self) -> Option<f64> {
        Some(self.gradient_best(ADC_CLANG14)? / self.gradient_best(ENZYME)?)
    }

    /// Gradient time without `pass` over the default gradient time (> 1: the pass helps).
    pub fn ablation_slowdown(&self, pass_variant: &str) -> Option<f64> {
        Some(self.gradient_best(pass_variant)? / self.gradient_best(DEFAULT)?)
    }
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct Report {
    pub quick: bool,
    /// Timing rounds (each runs every variant once, in turn).
    pub rounds: u32,
    pub adc: String,
    /// Wall-clock seconds of the whole run (builds, checks, timing).
    pub elapsed_s: f64,
    /// /proc/loadavg before and after the run: timings on a loaded machine are noisy.
    pub load_before: String,
    pub load_after: String,
    /// Ablation labels: `-name` for each pass of the default pipelines, then the extra
    /// ablations of `variants::EXTRA_ABLATIONS`.
    pub ablations: Vec<String>,
    /// Ok(the Enzyme plugin compared with) or why the Enzyme comparison was skipped.
    pub enzyme: Result<String, String>,
    /// Per benchmark: the gradient check of each variant (variant, Ok(max error) or why not).
    pub checks: Vec<(String, CheckVerdicts)>,
    pub results: Vec<InputResult>,
}

/// Geometric mean of the values present; None when there are none.
pub fn geometric_mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values
        .into_iter()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((0.0, 0usize), |(s, n), v| (s + v.ln(), n + 1));
    (count > 0).then(|| (sum / count as f64).exp())
}

impl Report {
    /// Geometric mean of `ratio` over the inputs where it exists, with their count.
    pub fn geomean_of(&self, ratio: impl Fn(&InputResult) -> Option<f64>) -> (usize, Option<f64>) {
        let values: Vec<f64> = self.results.iter().filter_map(ratio).collect();
        (values.len(), geometric_mean(values))
    }

    /// Geometric mean over inputs of the slowdown without `pass_variant`.
    pub fn ablation_geomean(&self, pass_variant: &str) -> Option<f64> {
        geometric_mean(self.results.iter().filter_map(|r| r.ablation_slowdown(pass_variant)))
    }

    /// On how many inputs both the ablation and the default were timed.
    pub fn ablation_inputs(&self, pass_variant: &str) -> usize {
        self.results.iter().filter(|r| r.ablation_slowdown(pass_variant).is_some()).count()
    }

    /// Ablation variants ordered by geometric-mean slowdown, largest first.
    pub fn ranked_ablations(&self) -> Vec<(String, f64)> {
        let mut ranked: Vec<(String, f64)> = self
            .ablations
            .iter()
            .filter_map(|a| self.ablation_geomean(a).map(|g| (a.clone(), g)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(min: f64) -> Outcome {
        Outcome::Timed(Timing {
            median: min,
            min,
            max: min,
            samples: 1,
            peak_rss_kib: 1,
            heap_peak_bytes: None,
        })
    }

    fn input(adc: Outcome, enzyme: Outcome) -> InputResult {
        InputResult {
            bench: "b".into(),
            input: "i".into(),
            native_primal: timed(1.0),
            adc_primal: timed(1.0),
            adc_primal_clang_o2_scalar: timed(1.0),
            adc_primal_clang_o2_vec: timed(2.0),
            gradients: vec![
                GradientResult { variant: AFTER_CLANG_O2_SCALAR.into(), outcome: timed(8.0) },
                GradientResult { variant: AFTER_CLANG_O2_VEC.into(), outcome: timed(6.0) },
                GradientResult { variant: ENZYME.into(), outcome: enzyme },
                GradientResult { variant: ADC_CLANG14.into(), outcome: adc },
            ],
        }
    }

    #[test]
    fn ratios_need_both_sides_timed() {
        let built = input(timed(1.0), timed(4.0));
        assert_eq!(built.adc_over_enzyme(), Some(0.25));
        assert_eq!(built.vectorized_over_scalar(), Some(0.75));
        assert_eq!(built.vectorized_gradient_primal_ratio(), Some(3.0));
        let failed = input(timed(1.0), Outcome::BuildFailed("No create nofree".into()));
        assert_eq!(failed.adc_over_enzyme(), None);
    }

    #[test]
    fn geomean_covers_the_inputs_enzyme_built() {
        let report = Report {
            quick: true,
            rounds: 1,
            adc: "adc".into(),
            elapsed_s: 0.0,
            load_before: String::new(),
            load_after: String::new(),
            ablations: vec![],
            enzyme: Ok("plugin".into()),
            checks: vec![],
            results: vec![
                input(timed(1.0), timed(4.0)),
                input(timed(4.0), timed(1.0)),
                input(timed(2.0), Outcome::BuildFailed("No create nofree".into())),
                input(timed(9.0), timed(1.0)),
            ],
        };
        let (count, geomean) = report.geomean_of(InputResult::adc_over_enzyme);
        assert_eq!(count, 3);
        // (0.25 * 4 * 9)^(1/3) = 9^(1/3)
        assert!((geomean.expect("geomean") - 9f64.cbrt()).abs() < 1e-12);
        assert_eq!(report.geomean_of(|_| None), (0, None));
    }
}
