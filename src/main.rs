//! `adc`, the automatic-differentiation compiler's command line. Every failure is a
//! rendered diagnostic and exit status 1; success is 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand};

use adc::build::{render_ad_error, BuildError, BuildOptions, Emit};
use adc::invocation::{Arg, Invocation};
use adc::pass_args::{report_text, PassArgs};
use adc_ad::cache::CacheOptions;
use adc_ir::text::{parse_module, print_module};
use adc_ir::verify::verify_module;
use adc_ir::Module;

#[derive(Parser)]
#[command(
    name = "adc",
    version,
    about = "adc: an automatic-differentiation compiler for LLVM bitcode and adc IR",
    after_help = "Examples:\n  adc import prog.bc -o prog.adir\n  adc opt examples/sum.adir --passes ''\n  adc interp examples/sum.adir --fn sum '[f64 1.0, 2.0, 3.0]' 3\n  adc test tests/filetests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import LLVM bitcode (clang 13 to 19) and print it as adc IR.
    #[command(
        after_help = "Example:\n  clang-19 -O2 -c -emit-llvm prog.c -o prog.bc\n  adc import prog.bc -o prog.adir"
    )]
    Import {
        /// The bitcode file; several are linked into one module first (LLVM's linker).
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// Where to write the module (standard output by default).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Parse and verify an .adir file, run passes over it, and print the result.
    ///
    /// Without --passes or --pipeline, runs the O0 pipeline. Analysis printers, dumps,
    /// timings and JSON lines go to standard error; the module to standard output (or -o).
    #[command(
        after_help = "Examples:\n  adc opt in.adir --passes mem2reg,licm -o out.adir\n  adc opt in.adir --pipeline pre-ad --passes=-licm --time-passes\n  adc opt in.adir --passes print-loops -o /dev/null"
    )]
    Opt {
        /// The input module in adc's text form.
        input: PathBuf,
        #[command(flatten)]
        pass_args: PassArgs,
        /// Where to write the module (standard output by default).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// List every pass and analysis printer with its description, and the pipelines.
    Passes,
    /// Run a function of an .adir file in the reference interpreter.
    #[command(
        after_help = "Arguments are literals typed by the function's signature: 1, -2.5, nan, true,\nnull, [1.0, 2.0] for a vector, {1, 2.0} for a struct. For a pointer parameter,\n[f64 1.0, 2.0] allocates a buffer; name it ($x = [f64 ...]) to print it after the call.\n\nExample:\n  adc interp sum.adir --fn scale '$v = [f64 1.0, 2.0]' 2.0 2"
    )]
    Interp {
        input: PathBuf,
        /// The function to call.
        #[arg(long = "fn")]
        function: String,
        /// Arguments, one literal each.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
        /// Maximum number of instructions to execute.
        #[arg(long)]
        fuel: Option<u64>,
        /// Compile with Cranelift and run natively instead of interpreting (`ADC_SIMD=0`:
        /// every vector lane by lane).
        #[arg(long)]
        jit: bool,
    },
    /// Compile LLVM bitcode or an .adir file to an object file, replacing every
    /// `__enzyme_autodiff` call by its synthesized derivative.
    ///
    /// Stages: import, the pre-ad pipeline, Enzyme API lowering and synthesis, the post-ad
    /// pipeline, Cranelift. `--passes=-licm` toggles both pipelines, `--pipeline` replaces
    /// the pre-AD one, an explicit `--passes a,b` list runs exactly those (before AD).
    #[command(
        after_help = "Example:\n  clang-19 -O2 -c -emit-llvm prog.c -o prog.bc\n  adc build prog.bc -o prog.o && cc prog.o -lm -o prog\n  adc build prog.bc -o prog.adir --emit ir --ad-before-opt"
    )]
    Build {
        /// A bitcode file (.bc) or adc's text form (.adir). Several bitcode files are
        /// linked into one module first (LLVM's linker, as for LTO), so a translation unit
        /// may differentiate a function another one defines; the object then replaces all
        /// of their objects.
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// The output file.
        #[arg(short, long)]
        output: PathBuf,
        /// `obj` (default): a relocatable object; `ir`: the module after everything, as text;
        /// `ptx`: PTX assembly of nvptx device code (see --gpu-arch).
        #[arg(long, default_value = "obj", value_parser = ["obj", "ir", "ptx"])]
        emit: String,
        /// The GPU architecture of `--emit ptx`.
        #[arg(long, default_value = "sm_80", value_parser = ["sm_80", "sm_90"])]
        gpu_arch: String,
        /// Differentiate the imported module first, then run both pipelines (the reference
        /// point of ablations).
        #[arg(long)]
        ad_before_opt: bool,
        /// The cache planner of reverse mode: `heuristic` (recompute whatever is legal) or
        /// `mincut` (a minimum cut decides what is stored). Cache toggles go in `--passes`:
        /// `--passes=-cache-ivs,-cache-licm,-cache-cse`. Default: `ADC_CACHE`, else the defaults.
        /// `--passes=-lane-packing` turns off lane packing of vector forward mode.
        #[arg(long, value_parser = ["heuristic", "mincut"])]
        cache: Option<String>,
        /// Lower every vector lane by lane instead of keeping f64/f32 vectors in 128-bit
        /// SIMD registers (the ablation point). Default: `ADC_SIMD=0` turns SIMD off.
        #[arg(long)]
        no_simd: bool,
        /// Denormal floats in derivatives: `ieee` (default) keeps them; `flush` runs each
        /// derivative with flush-to-zero and denormals-are-zero (x86-64 MXCSR, restored
        /// on return): values below 2.2e-308 become zero, and adjoint arithmetic on tiny
        /// values stops paying ~100-cycle microcode assists.
        #[arg(long, default_value = "ieee", value_parser = ["ieee", "flush"])]
        denormals: String,
        /// Where GPU derivatives keep tapes whose size is known only at run time:
        /// `local` (default: a 4096-byte region of each thread's local memory; a thread
        /// needing more traps, stopping the launch with an error), `local=BYTES` (a larger
        /// region, up to 524288), or `heap` (the device heap: any size, but one `malloc`
        /// per tape and thread, which serializes the launch; raise the host's
        /// `cudaLimitMallocHeapSize` beyond its 8 MB default).
        #[arg(long, default_value = "local")]
        gpu_tapes: String,
        #[command(flatten)]
        pass_args: PassArgs,
    },
    /// Print the AD analyses: type trees, or the activity of one differentiation request.
    Analyze(adc::analyze::AnalyzeArgs),
    /// Run filetests (.adir files with `; test` headers), like `cargo test` does.
    #[command(after_help = "Example:\n  adc test tests/filetests my-tests/licm.adir")]
    Test {
        /// Files or directories (searched for *.adir).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Rewrite precise-output blocks instead of failing on them.
        #[arg(long)]
        bless: bool,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Import { inputs, output } => {
            let module = adc_frontend_llvm::import_bitcode_files(&inputs)
                .map_err(|e| anyhow!("{}", e.to_diagnostic()))?;
            verify_module(&module).map_err(|d| {
                anyhow!("the imported module does not verify (an importer bug):\n{d}")
            })?;
            write_output(output.as_deref(), &print_module(&module))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Opt { input, pass_args, output } => {
            let passes = pass_args.resolve("O0").map_err(|e| anyhow!("error: {e}"))?;
            let options = pass_args.options().map_err(|e| anyhow!("error: {e}"))?;
            let (_, mut module) = load(&input)?;
            let (report, result) = adc_passes::run_passes(&mut module, &passes, &options);
            eprint!("{}", report_text(&report));
            result.map_err(|e| anyhow!("error: {e}"))?;
            verify_module(&module).map_err(|d| anyhow!("after the passes:\n{d}"))?;
            write_output(output.as_deref(), &print_module(&module))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Build {
            inputs,
            output,
            emit,
            gpu_arch,
            ad_before_opt,
            cache,
            no_simd,
            denormals,
            gpu_tapes,
            mut pass_args,
        } => {
            let device_tapes = adc_ad::request::DeviceTapeSpace::parse(&gpu_tapes)
                .map_err(|e| anyhow!("error: --gpu-tapes {e}"))?;
            let mut backend =
                adc_backend::BackendOptions::from_env().map_err(|e| anyhow!("error: {e}"))?;
            backend.simd &= !no_simd;
            let mut cache_options = CacheOptions::from_env().map_err(|e| anyhow!("error: {e}"))?;
            if let Some(planner) = &cache {
                cache_options.apply(planner).map_err(|e| anyhow!("error: {e}"))?;
            }
            let mut forward_options = adc_ad::forward::ForwardOptions::default();
            let mut specialize_args = true;
            let mut scalarize_vectors = true;
            let mut devectorize_loops = true;
            if let Some(list) = pass_args.passes.take() {
                pass_args.passes = forward_options
                    .split_toggles(&list)
                    .and_then(|rest| cache_options.split_toggles(&rest))
                    .and_then(|rest| {
                        let api_toggles = adc_ad::enzyme_api::TOGGLES;
                        adc_ad::toggles::take(&rest, api_toggles, |name, on| match name {
                            "specialize-args" => specialize_args = on,
                            "devectorize-loops" => devectorize_loops = on,
                            _ => scalarize_vectors = on,
                        })
                    });
            }
            let import_start = std::time::Instant::now();
            let mut module = load_inputs(&inputs)?;
            let import_time = import_start.elapsed();
            let input = &inputs[0];
            let emit = match emit.as_str() {
                "ir" => Emit::Ir,
                "ptx" => Emit::Ptx(
                    adc_ptx::Arch::from_name(&gpu_arch)
                        .ok_or_else(|| anyhow!("unknown GPU architecture {gpu_arch}"))?,
                ),
                _ => Emit::Object,
            };
            let flush_denormals = denormals == "flush";
            let options = BuildOptions {
                pass_args,
                ad_before_opt,
                emit,
                backend,
                flush_denormals,
                specialize_args,
                scalarize_vectors,
                devectorize_loops,
            };
            let name = input.file_stem().and_then(|s| s.to_str()).unwrap_or("module");
            let mut synth = adc_ad::Differentiator::new(adc_ad::DifferentiatorOptions {
                cache: cache_options,
                forward: forward_options,
                device_tapes,
                ..Default::default()
            });
            let time_passes = options.pass_args.time_passes;
            let built = adc::build::build(&mut module, name, &options, &mut synth);
            let mut built = built.map_err(|e| match e {
                BuildError::Ad(e) => anyhow!("{}", render_ad_error(&e, Some(input))),
                other => anyhow!("{other}"),
            })?;
            eprint!("{}", built.diagnostics);
            if time_passes {
                built.phases.add_first("import", import_time);
                let analyses = synth.analyses.time;
                built.phases.add_detail("differentiation", "type trees, effects", analyses);
                let activity = synth.analyses.activity_time;
                built.phases.add_detail("differentiation", "activity", activity);
                let synthesis =
                    built.phases.time_of("differentiation").saturating_sub(analyses + activity);
                built.phases.add_detail("differentiation", "synthesis (the rest)", synthesis);
                eprint!("{}", built.phases.table());
            }
            std::fs::write(&output, built.bytes)
                .with_context(|| format!("cannot write {}", output.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Analyze(args) => {
            let module = load_any(&args.input)?;
            print!("{}", adc::analyze::run(&args, &module)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Passes => {
            print!("{}", list_passes());
            Ok(ExitCode::SUCCESS)
        }
        Command::Interp { input, function, args, fuel, jit } => {
            let (_, module) = load(&input)?;
            let args = args.iter().map(|a| parse_arg(a)).collect::<Result<Vec<_>>>()?;
            let invocation = Invocation { function, args, expect: None, clauses: Vec::new() };
            let outcome = if jit {
                invocation.evaluate_jit(&module).map_err(|e| anyhow!("error: {e}"))?
            } else {
                invocation.evaluate(&module, fuel).map_err(|e| anyhow!("error: {e}"))?
            };
            print!("{}", outcome.output);
            if let Some(result) = outcome.result {
                println!("{result}");
            }
            for (name, contents) in outcome.buffers {
                println!("${name} = {contents}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Test { paths, bless } => {
            let files = adc::filetest::collect(&paths).map_err(|e| anyhow!(e))?;
            let (mut passed, mut failed) = (0, 0);
            for file in &files {
                match adc::filetest::run_file(file, bless) {
                    Ok(()) => passed += 1,
                    Err(message) => {
                        failed += 1;
                        println!("FAIL {}\n{message}\n", file.display());
                    }
                }
            }
            println!("{passed} passed, {failed} failed");
            Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

/// `adc passes`: the registry grouped by kind, then the pipelines.
fn list_passes() -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for kind in [
        adc_passes::PassKind::Transform,
        adc_passes::PassKind::Printer,
        adc_passes::PassKind::Utility,
    ] {
        let _ = writeln!(out, "{}:", kind.heading());
        for info in adc_passes::REGISTRY.iter().filter(|p| p.kind == kind) {
            let _ = writeln!(out, "  {:<20} {}", info.name, info.description);
        }
    }
    let _ = writeln!(out, "cache toggles (reverse mode, in --passes; planner: --cache):");
    for (name, description) in adc_ad::cache::TOGGLES {
        let _ = writeln!(out, "  {name:<20} {description}");
    }
    let _ = writeln!(out, "forward-mode toggles (in --passes):");
    for (name, description) in adc_ad::forward::TOGGLES {
        let _ = writeln!(out, "  {name:<20} {description}");
    }
    let _ = writeln!(out, "Enzyme API toggles (in --passes):");
    for (name, description) in adc_ad::enzyme_api::TOGGLES {
        let _ = writeln!(out, "  {name:<20} {description}");
    }
    let _ = writeln!(out, "pipelines:");
    for p in adc_passes::PIPELINES {
        let _ = writeln!(out, "  {:<20} {} [{}]", p.name, p.description, p.passes.join(", "));
    }
    out
}

/// Writes `text` to `path`, or to standard output without one.
fn write_output(path: Option<&Path>, text: &str) -> Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Reads, parses and verifies a module, rendering diagnostics against the file.
fn load(path: &Path) -> Result<(String, Module)> {
    let source =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path.display().to_string();
    let module = parse_module(&source).map_err(|d| anyhow!("{}", d.render(&name, &source)))?;
    verify_module(&module).map_err(|d| anyhow!("{}", d.render(&name, &source)))?;
    Ok((source, module))
}

/// Reads a module from bitcode (`.bc`) or text (anything else), verified.
fn load_any(path: &Path) -> Result<Module> {
    load_inputs(std::slice::from_ref(&path.to_path_buf()))
}

/// Reads one module: one input, or several bitcode files linked together; verified.
fn load_inputs(paths: &[PathBuf]) -> Result<Module> {
    let is_bitcode = |p: &PathBuf| p.extension().is_some_and(|e| e == "bc");
    if paths.iter().all(is_bitcode) {
        let module = adc_frontend_llvm::import_bitcode_files(paths)
            .map_err(|e| anyhow!("{}", e.to_diagnostic()))?;
        verify_module(&module)
            .map_err(|d| anyhow!("the imported module does not verify (an importer bug):\n{d}"))?;
        return Ok(module);
    }
    match paths {
        [path] => Ok(load(path)?.1),
        _ => Err(anyhow!(
            "error: several inputs must all be bitcode files (.bc), which are linked; an .adir \
             input must come alone"
        )),
    }
}

/// One command-line argument in the invocation literal syntax.
fn parse_arg(text: &str) -> Result<Arg> {
    let invocation = Invocation::parse(&format!("@f({text})"))
        .map_err(|e| anyhow!("cannot read argument `{text}`: {e}"))?;
    match <[Arg; 1]>::try_from(invocation.args) {
        Ok([arg]) => Ok(arg),
        Err(_) => Err(anyhow!("argument `{text}` must be one literal")),
    }
}
