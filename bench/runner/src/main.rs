//! `adc-bench`: builds the seven paper benchmarks (bench/programs) natively with clang -O2
//! and with adc under the default pipeline (from -O0, scalar -O2 and plain -O2 bitcode),
//! `--ad-before-opt`, and each pass of the default pipelines disabled in turn, and with
//! `--enzyme` Enzyme and adc from the same clang-14 -O2 bitcode; checks every gradient
//! against central finite differences; times what passed; writes bench/results/latest.md,
//! SVG charts and optionally JSON.

mod charts;
mod compile_time;
mod measure;
mod report;
mod results;
mod suite;
mod toolchain;
mod variants;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Parser;

use measure::Samples;
use results::{CheckVerdicts, GradientResult, InputResult, Outcome, Report};
use suite::Benchmark;
use toolchain::{EnzymeTools, Toolchain};
use variants::{Bitcode, Tool, Variant};

#[derive(Parser)]
#[command(name = "adc-bench", about = "Build, check, time and chart the adc benchmark suite")]
struct Args {
    /// Benchmarks to run (gmm ba lstm euler rk4 fft bruss); all when none is given.
    benches: Vec<String>,
    /// One modest input per benchmark and fewer repetitions (minutes, not hours).
    #[arg(long)]
    quick: bool,
    /// Also write the results as JSON to this file (`-` for standard output).
    #[arg(long)]
    json: Option<String>,
    /// The adc binary (default: $ADC, else the debug build target/debug/adc, built with
    /// `cargo build -p adc` when missing; any profile generates the same code).
    #[arg(long)]
    adc: Option<PathBuf>,
    /// The ADBench data directory (default: ../shared/data/adbench beside the repository).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Where latest.md and the charts go (default: bench/results).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Timing rounds: each round runs every variant once (REPS repetitions each), in turn.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Skip the per-pass ablation builds (default pipeline and --ad-before-opt only).
    #[arg(long)]
    no_ablation: bool,
    /// Measure compile time instead: `adc build` against Enzyme's pipeline on the same
    /// clang-14 -O2 bitcode, for the selected programs and the generated modules; writes
    /// compile_time.md. The adc binary defaults to the release build here.
    #[arg(long)]
    compile_time: bool,
    /// The Enzyme plugin for opt-14 (LLVMEnzyme-14.so): the timing tables then compare
    /// Enzyme's gradient with adc's on the same clang-14 -O2 bitcode (clang-14 and opt-14,
    /// or $CLANG14 and $OPT14), as do the compile-time tables.
    #[arg(long)]
    enzyme: Option<PathBuf>,
    /// Sizes (functions) of the generated modules of the compile-time tables.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 200, 400, 800, 1600])]
    sizes: Vec<usize>,
}

/// The repository root: this crate lives in bench/runner.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// The 1, 5 and 15 minute load averages, or "unknown" off Linux.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The compile-time tables (`--compile-time`): written to `out/compile_time.md`.
fn compile_time_tables(
    args: &Args,
    selected: &[&Benchmark],
    root: &Path,
    out: &Path,
    work: &Path,
) -> Result<()> {
    let options = compile_time::CompileTimeOptions {
        adc: find_adc(args.adc.clone(), root, "release")?,
        enzyme: args.enzyme.clone(),
        programs: selected
            .iter()
            .map(|b| (b.name.to_string(), root.join("bench/programs").join(b.source)))
            .collect(),
        sizes: args.sizes.clone(),
        rounds: args.rounds,
        work: work.to_path_buf(),
    };
    let load_before = load_average();
    let rows = compile_time::run(&options);
    let text = compile_time::markdown(&rows, &options, (&load_before, &load_average()));
    let path = out.join("compile_time.md");
    std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    print!("{text}");
    eprintln!("wrote {}", path.display());
    let _ = std::fs::remove_dir_all(work);
    Ok(())
}

/// The adc binary to benchmark: --adc, $ADC, or the build of `profile` (built when
/// absent). The profile changes how long builds take, never the generated code; compile
/// times are measured on the release build.
fn find_adc(explicit: Option<PathBuf>, root: &Path, profile: &str) -> Result<PathBuf> {
    if let Some(path) = explicit.or_else(|| std::env::var_os("ADC").map(PathBuf::from)) {
        if !path.exists() {
            bail!("adc binary {} does not exist", path.display());
        }
        return Ok(path);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let binary = target.join(profile).join("adc");
    if !binary.exists() {
        eprintln!(
            "adc-bench: building {} (cargo build --profile {profile} -p adc)",
            binary.display()
        );
        let cargo_profile = if profile == "debug" { "dev" } else { profile };
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--profile", cargo_profile, "-p", "adc"])
            .current_dir(root)
            .status()
            .context("cannot run cargo to build adc")?;
        if !status.success() {
            bail!("building adc failed");
        }
    }
    Ok(binary)
}

/// Builds every variant of one benchmark, checks the gradients, and times each input.
fn run_benchmark(
    bench: &Benchmark,
    tools: &Toolchain,
    variants: &[Variant],
    heap_meter: Option<&Path>,
    data: &Path,
    rounds: u32,
) -> (CheckVerdicts, Vec<InputResult>) {
    let source = repo_root().join("bench/programs").join(bench.source);
    let stem = bench.name;
    eprintln!("== {stem}: building");
    let native = tools.native_primal(&source, stem).map_err(|e| e.to_string());
    let adc_primal = |level: Bitcode| {
        tools
            .bitcode(&source, stem, level, true)
            .and_then(|bc| {
                tools.adc_build(&bc, stem, &format!("primal-{}", level.tag()), &[], None)
            })
            .map_err(|e| e.to_string())
    };
    let primal_unoptimized = adc_primal(Bitcode::Unoptimized);
    let primal_scalar = adc_primal(Bitcode::Scalar);
    let primal_vectorized = adc_primal(Bitcode::Vectorized);
    // The gradient bitcode of each level some adc variant starts from, compiled once.
    let mut bitcodes: Vec<(Bitcode, Result<PathBuf, String>)> = Vec::new();
    for variant in variants.iter().filter(|v| v.tool == Tool::Adc) {
        if !bitcodes.iter().any(|(level, _)| *level == variant.bitcode) {
            let bc = tools.bitcode(&source, stem, variant.bitcode, false);
            bitcodes.push((variant.bitcode, bc.map_err(|e| e.to_string())));
        }
    }

    // Each gradient variant: the executable or why there is none, and the
    // finite-difference verdict.
    let mut checks = Vec::new();
    let mut builds: Vec<(String, Result<PathBuf, Outcome>)> = Vec::new();
    for variant in variants {
        let label = &variant.label;
        let built = match variant.tool {
            Tool::Enzyme => tools
                .enzyme_build(&source, stem, heap_meter)
                .map_err(|e| Outcome::BuildFailed(e.to_string())),
            Tool::Adc => {
                let bc = bitcodes.iter().find(|(level, _)| *level == variant.bitcode).map_or_else(
                    || Err("no bitcode compiled for this level".into()),
                    |(_, bc)| bc.clone(),
                );
                bc.map_err(Outcome::BuildFailed).and_then(|bc| {
                    tools
                        .adc_build(
                            &bc,
                            stem,
                            &format!("grad{label}"),
                            &variant.adc_flags,
                            heap_meter,
                        )
                        .map_err(|e| Outcome::BuildFailed(e.to_string()))
                })
            }
        };
        let checked = built.and_then(|exe| match measure::check(&exe, &tools.work) {
            Ok(Ok(err)) => {
                checks.push((label.clone(), Ok(err)));
                Ok(exe)
            }
            Ok(Err(why)) => {
                checks.push((label.clone(), Err(why.clone())));
                Err(Outcome::WrongGradient(why))
            }
            Err(e) => {
                checks.push((label.clone(), Err(e.to_string())));
                Err(Outcome::RunFailed(format!("check: {e}")))
            }
        });
        if let Err(Outcome::BuildFailed(m)) = &checked {
            checks.push((label.clone(), Err(format!("build failed: {m}"))));
        }
        let status = match &checked {
            Ok(_) => "ok".to_string(),
            Err(o) => format!("{}: {}", o.status(), o.detail()),
        };
        eprintln!("   {label:<24} {status}");
        builds.push((label.clone(), checked));
    }

    let mut results = Vec::new();
    for input in &bench.inputs {
        eprintln!("== {stem} {}: timing ({rounds} rounds of {} runs)", input.label, input.reps);
        // Slots: the four primals, then every gradient variant. Rounds visit the slots in
        // turn so that load from other processes falls on all variants alike.
        let primal = |built: &Result<PathBuf, String>| built.clone().map_err(Outcome::BuildFailed);
        let mut slots: Vec<(&str, Result<PathBuf, Outcome>)> = vec![
            ("primal", primal(&native)),
            ("primal", primal(&primal_unoptimized)),
            ("primal", primal(&primal_scalar)),
            ("primal", primal(&primal_vectorized)),
        ];
        const PRIMAL_SLOTS: usize = 4;
        slots.extend(builds.iter().map(|(_, built)| ("grad", built.clone())));
        if let Some(f) = input.file(data).filter(|f| !f.exists()) {
            let why = Outcome::Skipped(format!("input {} missing", f.display()));
            for slot in &mut slots {
                if slot.1.is_ok() {
                    slot.1 = Err(why.clone());
                }
            }
        }
        let arg = input.argument(data);
        let mut samples: Vec<Samples> = vec![Samples::default(); slots.len()];
        for _ in 0..rounds {
            for (slot, acc) in slots.iter_mut().zip(samples.iter_mut()) {
                let Ok(exe) = &slot.1 else { continue };
                let args = [slot.0.to_string(), input.reps.to_string(), arg.clone()];
                match measure::samples(exe, &args, &tools.work) {
                    Ok(more) => acc.merge(more),
                    Err(e) => slot.1 = Err(Outcome::RunFailed(e.to_string())),
                }
            }
        }
        let mut outcomes: Vec<Outcome> = slots
            .into_iter()
            .zip(samples)
            .map(|(slot, samples)| match slot.1 {
                Err(outcome) => outcome,
                Ok(_) => measure::summarize(samples)
                    .map_or_else(|| Outcome::RunFailed("no samples".into()), Outcome::Timed),
            })
            .collect();
        let gradient_outcomes = outcomes.split_off(PRIMAL_SLOTS);
        let gradients = builds
            .iter()
            .zip(gradient_outcomes)
            .map(|((label, _), outcome)| GradientResult { variant: label.clone(), outcome })
            .collect();
        let [native_primal, adc_primal, adc_primal_clang_o2_scalar, adc_primal_clang_o2_vec]: [Outcome;
            PRIMAL_SLOTS] = outcomes.try_into().expect("four primal slots");
        results.push(InputResult {
            bench: stem.to_string(),
            input: input.label.clone(),
            native_primal,
            adc_primal,
            adc_primal_clang_o2_scalar,
            adc_primal_clang_o2_vec,
            gradients,
        });
    }
    (checks, results)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let root = repo_root();
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let all = suite::suite(args.quick);
    for name in &args.benches {
        if !all.iter().any(|b| b.name == name) {
            bail!(
                "unknown benchmark `{name}` (known: {})",
                all.iter().map(|b| b.name).collect::<Vec<_>>().join(" ")
            );
        }
    }
    let selected: Vec<&Benchmark> = all
        .iter()
        .filter(|b| args.benches.is_empty() || args.benches.iter().any(|n| n == b.name))
        .collect();
    let out = args.out.clone().unwrap_or_else(|| root.join("bench/results"));
    let work = std::env::temp_dir().join(format!("adc-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    if args.compile_time {
        return compile_time_tables(&args, &selected, &root, &out, &work);
    }
    let adc = find_adc(args.adc, &root, "debug")?;
    let data = args.data.unwrap_or_else(|| root.join("../shared/data/adbench"));
    let env_or = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    // Enzyme is optional: without it (or its LLVM 14 tools) the report says why it is absent.
    let enzyme = EnzymeTools::find(
        args.enzyme.as_deref(),
        &env_or("CLANG14", "clang-14"),
        &env_or("OPT14", "opt-14"),
    );
    if let Err(why) = &enzyme {
        eprintln!("adc-bench: Enzyme comparison skipped: {why}");
    }
    let tools = Toolchain {
        clang: env_or("CLANG", "clang-19"),
        cc: env_or("CC", "cc"),
        adc: adc.clone(),
        work: work.clone(),
        enzyme: enzyme.as_ref().ok().cloned(),
    };
    let started = std::time::Instant::now();
    let mut variants = variants::variants(
        &tools.pipeline_passes().context("reading the pipelines from `adc passes`")?,
        tools.enzyme.is_some(),
    );
    if args.no_ablation {
        variants.retain(|v| !v.is_ablation);
    }
    let ablations: Vec<String> =
        variants.iter().filter(|v| v.is_ablation).map(|v| v.label.clone()).collect();
    let meter_source = root.join("bench/programs/heap_meter.c");
    let heap_meter = match tools.heap_meter(&meter_source) {
        Ok(object) => Some(object),
        Err(e) => {
            eprintln!("adc-bench: no heap meter (tape bytes not measured): {e}");
            None
        }
    };

    let mut report = Report {
        quick: args.quick,
        rounds: args.rounds,
        load_before: load_average(),
        load_after: String::new(),
        adc: adc.display().to_string(),
        elapsed_s: 0.0,
        ablations,
        enzyme: enzyme.map(|e| e.plugin.display().to_string()),
        checks: Vec::new(),
        results: Vec::new(),
    };
    for bench in selected {
        let (checks, results) =
            run_benchmark(bench, &tools, &variants, heap_meter.as_deref(), &data, args.rounds);
        report.checks.push((bench.name.to_string(), checks));
        report.results.extend(results);
    }

    report.load_after = load_average();
    report.elapsed_s = started.elapsed().as_secs_f64();
    let markdown = report::markdown(&report, &all);
    let md_path = out.join("latest.md");
    std::fs::write(&md_path, markdown)
        .with_context(|| format!("cannot write {}", md_path.display()))?;
    charts::relative_speed(&report, &out.join("relative_speed.svg"))?;
    // A run without ablations (--no-ablation) leaves the last ablation chart as it was
    // rather than replacing it with an empty one; latest.md then does not link it.
    if !report.ablations.is_empty() {
        charts::ablation(&report, &out.join("ablation.svg"))?;
    }
    eprintln!("wrote {} and the charts in {}", md_path.display(), out.display());
    if let Some(json_path) = args.json {
        let json = report::json(&report);
        if json_path == "-" {
            println!("{json}");
        } else {
            std::fs::write(&json_path, json)
                .with_context(|| format!("cannot write {json_path}"))?;
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
