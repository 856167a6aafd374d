//! The importer corpus: every `tests/c/import/*.c` compiled by clang-19 and clang-14 at
//! several optimization levels, imported, round-tripped through the text form, verified and
//! run in the interpreter against the native program built from the same bitcode.
//!
//! One test per (compiler, level, program); a missing compiler is skipped with a notice.
//! The native reference is the bitcode itself compiled at -O0 (no further optimization),
//! so it computes exactly what the imported IR must compute. Build products go under
//! `CARGO_TARGET_TMPDIR`. The last stage builds the imported module with the Cranelift
//! backend (`adc_backend::compile_object`), links it with `cc prog.o -lm` and requires the
//! same output as the native program. A table of per-stage pass counts is printed at the end.
//!
//! The optimized stages then run the imported module through the `pre-ad` and `post-ad`
//! pipelines (verifying after every pass), and require the interpreter and the
//! Cranelift-built program of the optimized module to print what the native program
//! prints. To keep CI time reasonable they run at the levels in `OPTIMIZED_LEVELS` only
//! (unoptimized input, the pipelines' main customer, and -O2); the other levels stop after
//! `adc-native-matches`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};

const LEVELS: &[(&str, &[&str])] = &[
    ("O0", &["-O0", "-Xclang", "-disable-O0-optnone"]),
    ("O0-g", &["-O0", "-Xclang", "-disable-O0-optnone", "-g"]),
    ("O1", &["-O1"]),
    ("O2", &["-O2"]),
    ("O3", &["-O3"]),
    ("O2-fast", &["-O2", "-ffast-math"]),
    ("O3-g", &["-O3", "-g"]),
];

const COMPILERS: &[&str] = &["clang-19", "clang-14"];

/// Stages a case goes through, in order; a case counts as passing a stage only if it
/// passed all earlier ones.
const STAGES: &[&str] = &[
    "compile",
    "import",
    "round-trip",
    "verify",
    "interp-matches",
    "adc-native-matches",
    "opt-verify",
    "opt-interp",
    "opt-native",
];

/// Levels whose cases also go through `pre-ad` + `post-ad` (a sample: see the module doc).
const OPTIMIZED_LEVELS: &[&str] = &["O0", "O2"];

/// Per (compiler, level): cases passing each stage, then cases run.
type Table = Arc<Mutex<BTreeMap<(String, String), [usize; STAGES.len() + 1]>>>;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c/import");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/c/import exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    programs.sort();
    let out_root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus");
    let table: Table = Arc::default();

    let mut trials = Vec::new();
    for compiler in COMPILERS {
        let present =
            Command::new(compiler).arg("--version").output().is_ok_and(|o| o.status.success());
        if !present {
            eprintln!("notice: {compiler} not found, its corpus cases are skipped");
            continue;
        }
        for (level, flags) in LEVELS {
            for program in &programs {
                let stem =
                    program.file_stem().and_then(|s| s.to_str()).unwrap_or("prog").to_string();
                let case = Case {
                    compiler: compiler.to_string(),
                    level: level.to_string(),
                    flags,
                    source: program.clone(),
                    dir: out_root.join(compiler).join(level),
                    stem: stem.clone(),
                    table: table.clone(),
                };
                trials.push(Trial::test(format!("{compiler}/{level}/{stem}"), move || case.run()));
            }
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    print_table(&table);
    conclusion.exit();
}

fn print_table(table: &Table) {
    let table = table.lock().unwrap_or_else(|e| e.into_inner());
    if table.is_empty() {
        return;
    }
    eprintln!("\ncorpus stage counts (cases passing each stage / cases run):");
    let header: Vec<String> = STAGES.iter().map(|s| format!("{s:>12}")).collect();
    eprintln!("{:<10} {:<8} {}", "compiler", "level", header.join(" "));
    for ((compiler, level), counts) in table.iter() {
        let total = counts[STAGES.len()];
        // The optimized stages run at the sampled levels only (see `OPTIMIZED_LEVELS`).
        let sampled = OPTIMIZED_LEVELS.contains(&level.as_str());
        let cells: Vec<String> = (0..STAGES.len())
            .map(|i| {
                let cell = if i >= 6 && !sampled {
                    "not run".to_string()
                } else {
                    format!("{}/{}", counts[i], total)
                };
                format!("{cell:>12}")
            })
            .collect();
        eprintln!("{:<10} {:<8} {}", compiler, level, cells.join(" "));
    }
}

struct Case {
    compiler: String,
    level: String,
    flags: &'static [&'static str],
    source: PathBuf,
    dir: PathBuf,
    stem: String,
    table: Table,
}

impl Case {
    fn run(self) -> Result<(), Failed> {
        let mut passed = 0;
        let result = self.stages(&mut passed);
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let row = table.entry((self.compiler.clone(), self.level.clone())).or_default();
        for count in row.iter_mut().take(passed) {
            *count += 1;
        }
        row[STAGES.len()] += 1;
        result
    }

    fn stages(&self, passed: &mut usize) -> Result<(), Failed> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("mkdir: {e}"))?;
        let bc = self.dir.join(format!("{}.bc", self.stem));
        let status = Command::new(&self.compiler)
            .args(self.flags)
            .args(["-c", "-emit-llvm", "-o"])
            .arg(&bc)
            .arg(&self.source)
            .output()
            .map_err(|e| format!("running {}: {e}", self.compiler))?;
        if !status.status.success() {
            return Err(
                format!("compile failed: {}", String::from_utf8_lossy(&status.stderr)).into()
            );
        }
        *passed = 1;

        let module = adc_frontend_llvm::import_bitcode_file(&bc)
            .map_err(|e| format!("import failed: {}", e.to_diagnostic()))?;
        let text = adc_ir::text::print_module(&module);
        if module.function_by_name("main").is_none() {
            return Err("imported module has no @main".into());
        }
        std::fs::write(self.dir.join(format!("{}.adir", self.stem)), &text).ok();
        *passed = 2;

        let reparsed = adc_ir::text::parse_module(&text).map_err(|d| {
            format!("parse of printed module: {}", d.render("imported.adir", &text))
        })?;
        let again = adc_ir::text::print_module(&reparsed);
        if again != text {
            let line = text.lines().zip(again.lines()).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!(
                "print(parse(text)) differs at line {}:\n  printed: {}\n  again:   {}",
                line + 1,
                text.lines().nth(line).unwrap_or(""),
                again.lines().nth(line).unwrap_or("")
            )
            .into());
        }
        *passed = 3;
        pipeline::check(self, &bc, &module, &text, passed)
    }

    /// stdout of the native program built from the same bitcode, without optimization.
    fn native_output(&self, bc: &Path) -> Result<String, String> {
        let exe = self.dir.join(format!("{}.native", self.stem));
        let out = Command::new(&self.compiler)
            .arg("-O0")
            .arg(bc)
            .args(["-lm", "-o"])
            .arg(&exe)
            .output()
            .map_err(|e| format!("linking: {e}"))?;
        if !out.status.success() {
            return Err(format!("native link failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let run = Command::new(&exe).output().map_err(|e| format!("running native: {e}"))?;
        Ok(String::from_utf8_lossy(&run.stdout).into_owned())
    }
}

/// Verification and the differential run against the native program.
mod pipeline {
    use super::*;
    use adc_ir::interp::Interpreter;

    pub fn check(
        case: &Case,
        bc: &Path,
        module: &adc_ir::Module,
        _text: &str,
        passed: &mut usize,
    ) -> Result<(), Failed> {
        adc_ir::verify::verify_module(module).map_err(|d| format!("verifier: {d}"))?;
        *passed = 4;

        let expected = case.native_output(bc)?;
        let output = interpret_main(module)?;
        if output != expected {
            return Err(format!(
                "interpreter output differs:\n  native: {expected:?}\n  interp: {output:?}"
            )
            .into());
        }
        devectorized_matches(case, module, &expected)?;
        *passed = 5;

        let native = build_and_run(case, module, "adc")?;
        if native != expected {
            return Err(format!(
                "adc-built program output differs:\n  clang: {expected:?}\n  adc:   {native:?}"
            )
            .into());
        }
        *passed = 6;
        if !OPTIMIZED_LEVELS.contains(&case.level.as_str()) {
            return Ok(());
        }
        optimized(case, module, &expected, passed)
    }

    /// Every loop LLVM vectorized replaced by its scalar fallback
    /// (`adc_passes::devectorize`, what reverse mode differentiates) prints the same as
    /// the native program: the importer's `llvm.loop.isvectorized` marks and the guard it
    /// picks must make a legal run. Skipped under fast-math, where the vector loop's
    /// reassociated sums may round differently from the scalar loop.
    fn devectorized_matches(
        case: &Case,
        module: &adc_ir::Module,
        expected: &str,
    ) -> Result<(), String> {
        if case.flags.contains(&"-ffast-math") {
            return Ok(());
        }
        let mut devectorized = module.clone();
        let mut rewritten = 0;
        for func in devectorized.functions.values_mut() {
            rewritten += adc_passes::devectorize::take_scalar_fallbacks(func);
        }
        if rewritten == 0 {
            return Ok(());
        }
        adc_ir::verify::verify_module(&devectorized)
            .map_err(|d| format!("verifier after devectorizing: {d}"))?;
        let output = interpret_main(&devectorized)
            .map_err(|e| format!("interpreter on the devectorized module: {e}"))?;
        if output != expected {
            return Err(format!(
                "the devectorized module ({rewritten} loops) prints differently:\n  native: {expected:?}\n  interp: {output:?}"
            ));
        }
        Ok(())
    }

    /// What `main` prints in the interpreter (`main(1, {"prog"})` when it takes argv).
    fn interpret_main(module: &adc_ir::Module) -> Result<String, String> {
        let main = module.function_by_name("main").ok_or("no main")?;
        let mut interp =
            Interpreter::new(module).map_err(|e| format!("interpreter: {}", e.message()))?;
        let result = interp.call_main(main);
        let output = interp.output().to_string();
        match result {
            Ok(_) => Ok(output),
            Err(e) => Err(format!(
                "interpreter error: {}\n  output so far: {output:?}",
                e.to_diagnostic()
            )),
        }
    }

    /// stdout of the program Cranelift builds from `module` (`STEM.SUFFIX.o`, linked by cc);
    /// like the native reference, its exit status is not compared.
    fn build_and_run(case: &Case, module: &adc_ir::Module, suffix: &str) -> Result<String, String> {
        let object =
            adc_backend::compile_object(module, &case.stem).map_err(|d| format!("backend: {d}"))?;
        let obj = case.dir.join(format!("{}.{suffix}.o", case.stem));
        let exe = case.dir.join(format!("{}.{suffix}", case.stem));
        std::fs::write(&obj, object).map_err(|e| format!("writing the object: {e}"))?;
        let link = Command::new("cc")
            .arg(&obj)
            .args(["-lm", "-o"])
            .arg(&exe)
            .output()
            .map_err(|e| format!("running cc: {e}"))?;
        if !link.status.success() {
            return Err(format!(
                "linking the adc object failed: {}",
                String::from_utf8_lossy(&link.stderr)
            ));
        }
        let run =
            Command::new(&exe).output().map_err(|e| format!("running {suffix} build: {e}"))?;
        if !run.status.success() {
            return Err(format!(
                "the {suffix}-built program failed ({}): stdout {:?}",
                run.status,
                String::from_utf8_lossy(&run.stdout)
            ));
        }
        Ok(String::from_utf8_lossy(&run.stdout).into_owned())
    }

    /// The module through `pre-ad` then `post-ad`, verified after every pass, then run by
    /// the interpreter and built by Cranelift: both must print what the native program
    /// prints.
    fn optimized(
        case: &Case,
        module: &adc_ir::Module,
        expected: &str,
        passed: &mut usize,
    ) -> Result<(), Failed> {
        let mut optimized = module.clone();
        let options = adc_passes::Options { verify_each: true, ..Default::default() };
        for name in ["pre-ad", "post-ad"] {
            let selection =
                adc_passes::Selection { pipeline: Some(name.to_string()), passes: None };
            let passes = adc_passes::resolve(&selection, name).map_err(|e| e.to_string())?;
            let (_, result) = adc_passes::run_passes(&mut optimized, &passes, &options);
            result.map_err(|e| format!("{name}: {e}"))?;
        }
        let text = adc_ir::text::print_module(&optimized);
        std::fs::write(case.dir.join(format!("{}.opt.adir", case.stem)), &text).ok();
        *passed = 7;

        let output = interpret_main(&optimized)
            .map_err(|e| format!("interpreter on the optimized module: {e}"))?;
        if output != expected {
            return Err(format!(
                "interpreter output of the optimized module differs:\n  native: {expected:?}\n  interp: {output:?}"
            )
            .into());
        }
        *passed = 8;

        let native = build_and_run(case, &optimized, "opt")?;
        if native != expected {
            return Err(format!(
                "adc-built optimized program output differs:\n  clang: {expected:?}\n  adc:   {native:?}"
            )
            .into());
        }
        *passed = 9;
        Ok(())
    }
}
