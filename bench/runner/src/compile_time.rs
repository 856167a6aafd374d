//! Compile time (issue 30): `adc build` against Enzyme's pipeline on the same bitcode, and
//! where adc's build time goes.
//!
//! Every input is compiled once by `clang-14 -O2` (the newest clang whose bitcode both
//! tools read): adc builds the bitcode to an object; Enzyme's pipeline is `opt-14` with
//! the Enzyme plugin, then `opt-14 -O2` and `llc-14 -O2` to an object, as the anchor's
//! README runs it. Inputs: the seven benchmark programs and generated modules of N small
//! differentiated functions (the scaling series). Times are the best of `rounds` runs of
//! the whole build; the largest pass is summed over both pipelines and given as a share
//! of adc's whole build (from `--time-passes`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What the compile-time comparison runs on and with.
pub struct CompileTimeOptions {
    pub adc: PathBuf,
    /// The Enzyme plugin for opt-14 (`LLVMEnzyme-14.so`); adc alone when absent.
    pub enzyme: Option<PathBuf>,
    pub programs: Vec<(String, PathBuf)>,
    /// Sizes of the generated modules, in functions.
    pub sizes: Vec<usize>,
    pub rounds: u32,
    pub work: PathBuf,
}

/// One input's measurements; a failed step keeps its error line.
pub struct Row {
    pub input: String,
    /// Functions differentiated, for the generated modules.
    pub functions: Option<usize>,
    pub adc_seconds: Result<f64, String>,
    /// The pass with the largest summed time, and its share of the adc build.
    pub largest_pass: Option<(String, f64)>,
    pub enzyme_seconds: Option<Result<f64, String>>,
}

/// A module of `n` small functions, each differentiated by its own `__enzyme_autodiff`
/// call: a loop over an array with a libm call, four shapes in turn, each function with
/// its own constant (so that no two are identical).
pub fn generated_module(n: usize) -> String {
    const SHAPES: [&str; 4] = [
        "sin(x[j] * C) * x[j]",
        "x[j] * x[j] * C + exp(-x[j])",
        "sqrt(1.0 + x[j] * x[j]) * C",
        "log(1.0 + x[j] * x[j]) + C * x[j]",
    ];
    let mut out = String::from(
        "#include <math.h>\nextern int enzyme_dup, enzyme_const;\n\
         double __enzyme_autodiff(void *, ...);\n",
    );
    for i in 0..n {
        let c = format!("{:.4}", 1.0 + i as f64 / 1000.0);
        let body = SHAPES[i % SHAPES.len()].replace('C', &c);
        let _ = writeln!(
            out,
            "static double f{i}(const double *x, int n) {{\n  double s = 0.0;\n  \
             for (int j = 0; j < n; j++)\n    s += {body};\n  return s;\n}}\n\
             void g{i}(const double *x, double *dx, int n) {{\n  \
             __enzyme_autodiff((void *)f{i}, enzyme_dup, x, dx, enzyme_const, n);\n}}"
        );
    }
    out
}

fn run_step(command: &mut Command) -> Result<std::process::Output, String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command.output().map_err(|e| format!("cannot run {program}: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("no error output");
        Err(format!("{program} failed: {}", line.trim()))
    }
}

/// The summed milliseconds of each pass in `--time-passes` output (both pipelines).
fn pass_times(stderr: &str) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    let mut in_pass_table = false;
    for line in stderr.lines() {
        if line.starts_with("; pass timings") {
            in_pass_table = true;
            continue;
        }
        if line.starts_with("; build phases") {
            in_pass_table = false;
        }
        let fields: Vec<&str> = line.trim_start_matches(';').split_whitespace().collect();
        // `;   9  egraph   476.395   48.1  yes`
        let [index, name, ms, _, _] = fields[..] else { continue };
        if !in_pass_table || index.parse::<u32>().is_err() {
            continue;
        }
        let Ok(ms) = ms.parse::<f64>() else { continue };
        match sums.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total += ms,
            None => sums.push((name.to_string(), ms)),
        }
    }
    sums
}

/// Best-of-`rounds` adc build time and the largest pass's share of that build.
fn time_adc(
    options: &CompileTimeOptions,
    bc: &Path,
    stem: &str,
) -> (Result<f64, String>, Option<(String, f64)>) {
    let object = options.work.join(format!("{stem}-adc.o"));
    let mut best: Option<(f64, String)> = None;
    for _ in 0..options.rounds {
        let start = Instant::now();
        let output = run_step(
            Command::new(&options.adc)
                .arg("build")
                .arg(bc)
                .arg("-o")
                .arg(&object)
                .arg("--time-passes"),
        );
        let seconds = start.elapsed().as_secs_f64();
        match output {
            Err(e) => return (Err(e), None),
            Ok(output) => {
                if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
                    best = Some((seconds, String::from_utf8_lossy(&output.stderr).into_owned()));
                }
            }
        }
    }
    let Some((seconds, stderr)) = best else { return (Err("no rounds".into()), None) };
    let largest = pass_times(&stderr)
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, ms)| (name, ms / 1e3 / seconds));
    (Ok(seconds), largest)
}

/// Best-of-`rounds` time of opt-14 + Enzyme, opt-14 -O2 and llc-14 on `ll`.
fn time_enzyme(
    options: &CompileTimeOptions,
    plugin: &Path,
    ll: &Path,
    stem: &str,
) -> Result<f64, String> {
    let differentiated = options.work.join(format!("{stem}-enzyme.bc"));
    let optimized = options.work.join(format!("{stem}-enzyme-O2.bc"));
    let object = options.work.join(format!("{stem}-enzyme.o"));
    let mut best = f64::INFINITY;
    for _ in 0..options.rounds {
        let start = Instant::now();
        run_step(
            Command::new("opt-14")
                .arg(ll)
                .arg(format!("-load-pass-plugin={}", plugin.display()))
                .arg("-passes=preserve-nvvm,enzyme")
                .arg("-o")
                .arg(&differentiated),
        )?;
        run_step(Command::new("opt-14").arg("-O2").arg(&differentiated).arg("-o").arg(&optimized))?;
        run_step(
            Command::new("llc-14")
                .args(["-O2", "-filetype=obj"])
                .arg(&optimized)
                .arg("-o")
                .arg(&object),
        )?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// clang-14 -O2 bitcode for adc and, for Enzyme, the same as text with the one fix its
/// README gives (LLVM 14's verifier rejects `writeonly` on the libm declarations).
fn clang14(source: &Path, work: &Path, stem: &str) -> Result<(PathBuf, PathBuf), String> {
    let bc = work.join(format!("{stem}.bc"));
    let ll = work.join(format!("{stem}.ll"));
    run_step(
        Command::new("clang-14")
            .args(["-O2", "-c", "-emit-llvm", "-w"])
            .arg(source)
            .arg("-o")
            .arg(&bc),
    )?;
    run_step(
        Command::new("clang-14")
            .args(["-O2", "-S", "-emit-llvm", "-w"])
            .arg(source)
            .arg("-o")
            .arg(&ll),
    )?;
    let text =
        std::fs::read_to_string(&ll).map_err(|e| format!("cannot read {}: {e}", ll.display()))?;
    std::fs::write(&ll, crate::toolchain::without_writeonly_attributes(&text))
        .map_err(|e| format!("cannot write {}: {e}", ll.display()))?;
    Ok((bc, ll))
}

fn measure(
    options: &CompileTimeOptions,
    source: &Path,
    stem: &str,
    functions: Option<usize>,
) -> Row {
    eprintln!("== compile time: {stem}");
    let mut row = Row {
        input: stem.to_string(),
        functions,
        adc_seconds: Err(String::new()),
        largest_pass: None,
        enzyme_seconds: None,
    };
    let (bc, ll) = match clang14(source, &options.work, stem) {
        Ok(files) => files,
        Err(e) => {
            row.adc_seconds = Err(e);
            return row;
        }
    };
    (row.adc_seconds, row.largest_pass) = time_adc(options, &bc, stem);
    row.enzyme_seconds =
        options.enzyme.as_deref().map(|plugin| time_enzyme(options, plugin, &ll, stem));
    row
}

/// Measures every program and generated module.
pub fn run(options: &CompileTimeOptions) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, source) in &options.programs {
        rows.push(measure(options, source, name, None));
    }
    for &n in &options.sizes {
        let stem = format!("generated-{n}");
        let source = options.work.join(format!("{stem}.c"));
        if let Err(e) = std::fs::write(&source, generated_module(n)) {
            rows.push(Row {
                input: stem,
                functions: Some(n),
                adc_seconds: Err(format!("cannot write {}: {e}", source.display())),
                largest_pass: None,
                enzyme_seconds: None,
            });
            continue;
        }
        rows.push(measure(options, &source, &stem, Some(n)));
    }
    rows
}

fn cell(time: &Result<f64, String>) -> String {
    match time {
        Ok(s) => format!("{s:.3}"),
        Err(e) => format!("fails: {}", e.replace('|', "/")),
    }
}

/// The tables: adc against Enzyme per input, then the growth of the generated series.
pub fn markdown(rows: &[Row], options: &CompileTimeOptions, load: (&str, &str)) -> String {
    let mut out = String::from("# Compile time: adc build against Enzyme's pipeline\n\n");
    let _ = writeln!(
        out,
        "Same clang-14 -O2 bitcode; adc: `{}` build to an object; Enzyme: opt-14 + `{}`, \
         opt-14 -O2, llc-14 -O2 to an object. Best of {} runs each. Load average before: {}, \
         after: {}.\n",
        options.adc.display(),
        options.enzyme.as_ref().map_or("(not given)".into(), |p| p.display().to_string()),
        options.rounds,
        load.0,
        load.1
    );
    out.push_str("| input | adc build (s) | Enzyme pipeline (s) | adc / Enzyme | largest adc pass (share of build) |\n");
    out.push_str("|---|---|---|---|---|\n");
    for row in rows {
        let enzyme = row.enzyme_seconds.as_ref().map_or("-".into(), cell);
        let ratio = match (&row.adc_seconds, &row.enzyme_seconds) {
            (Ok(a), Some(Ok(e))) if *e > 0.0 => format!("{:.2}", a / e),
            _ => "-".into(),
        };
        let largest = row
            .largest_pass
            .as_ref()
            .map_or("-".into(), |(name, share)| format!("{name} ({:.0}%)", share * 100.0));
        let _ = writeln!(
            out,
            "| {} | {} | {enzyme} | {ratio} | {largest} |",
            row.input,
            cell(&row.adc_seconds)
        );
    }
    let series: Vec<(usize, f64)> =
        rows.iter().filter_map(|r| Some((r.functions?, *r.adc_seconds.as_ref().ok()?))).collect();
    if series.len() > 1 {
        out.push_str("\nGrowth of adc's build time with the generated module's size:\n\n");
        out.push_str("| functions | adc build (s) | t(n) / t(previous n) |\n|---|---|---|\n");
        for (i, (n, t)) in series.iter().enumerate() {
            let growth = if i == 0 { "-".into() } else { format!("{:.2}", t / series[i - 1].1) };
            let _ = writeln!(out, "| {n} | {t:.3} | {growth} |");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_functions_are_distinct_and_each_differentiated() {
        let text = generated_module(8);
        assert_eq!(text.matches("__enzyme_autodiff((void *)f").count(), 8);
        assert!(text.contains("static double f7(") && text.contains("1.0070"));
        assert!(
            text.contains("sin(x[j] * 1.0000)") && text.contains("log(1.0 + x[j] * x[j]) + 1.0030")
        );
    }

    #[test]
    fn pass_times_sum_each_pass_over_both_pipelines() {
        let stderr = "; pass timings and statistics (options: {})\n\
                      ;   #  pass  time (ms)  %  changed\n\
                      ;   1  sccp     10.000   50.0  yes\n\
                      ;        instructions folded: 3\n\
                      ;   2  egraph   10.000   50.0  no\n\
                      ;      total    20.000\n\
                      ; pass timings and statistics (options: {})\n\
                      ;   1  sccp      5.500   100.0  yes\n\
                      ; build phases\n\
                      ;      import   1.0   2.0\n";
        let times = pass_times(stderr);
        assert_eq!(times, [("sccp".to_string(), 15.5), ("egraph".to_string(), 10.0)]);
    }
}
