//! The pass-manager flags shared by `adc opt` and `adc build` (one clap `Args` struct,
//! flattened into each subcommand), and their translation into `adc_passes` types.

use clap::Args;

use adc_passes::{Options, PassError, PassInfo, Selection};

#[derive(Args, Clone, Debug, Default)]
pub struct PassArgs {
    /// An explicit list `a,b,c` (run exactly those, in order), or toggles on the pipeline:
    /// `--passes=-licm,+name`. `adc passes` lists the names.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST")]
    pub passes: Option<String>,
    /// The pipeline to start from: O0, pre-ad, post-ad.
    #[arg(long, value_name = "NAME")]
    pub pipeline: Option<String>,
    /// Run the verifier after every pass; a failure names the pass that broke the module.
    #[arg(long)]
    pub verify_each: bool,
    /// Print the module before each run of pass NAME (`all`: every pass). Repeatable.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub print_before: Vec<String>,
    /// Print the module after each run of pass NAME (`all`: every pass). Repeatable.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub print_after: Vec<String>,
    /// Print per-pass time and statistics (to standard error) at the end.
    #[arg(long)]
    pub time_passes: bool,
    /// Run only the first N non-required passes; later ones are skipped (and reported).
    #[arg(long, value_name = "N")]
    pub opt_bisect_limit: Option<usize>,
    /// Print one JSON line per pass (to standard error): name, time, statistics, options.
    #[arg(long)]
    pub json_stats: bool,
}

impl PassArgs {
    /// The passes to run, resolved against `default_pipeline` (see `adc_passes::resolve`).
    pub fn resolve(&self, default_pipeline: &str) -> Result<Vec<&'static PassInfo>, PassError> {
        let selection = Selection { pipeline: self.pipeline.clone(), passes: self.passes.clone() };
        adc_passes::resolve(&selection, default_pipeline)
    }

    /// The manager options; `--print-before/after` names must be registered passes or `all`.
    pub fn options(&self) -> Result<Options, PassError> {
        for name in self.print_before.iter().chain(&self.print_after) {
            if name != "all" {
                adc_passes::lookup(name)?;
            }
        }
        Ok(Options {
            verify_each: self.verify_each,
            print_before: self.print_before.clone(),
            print_after: self.print_after.clone(),
            time_passes: self.time_passes,
            opt_bisect_limit: self.opt_bisect_limit,
            json_stats: self.json_stats,
        })
    }
}

/// Writes what a report has for standard error: dumps and printer output, then the
/// timing table and the JSON lines when asked for.
pub fn report_text(report: &adc_passes::Report) -> String {
    let mut text = report.output.clone();
    if report.options.time_passes {
        text.push_str(&report.time_table());
    }
    if report.options.json_stats {
        text.push_str(&report.json_lines());
    }
    text
}
