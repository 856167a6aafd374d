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
const STAGES: &[&str] =
    &["compile", "import", "round-trip", "verify", "interp-matches", "adc-native-matches"];

type Table = Arc<Mutex<BTreeMap<(String, String), [usize; 7]>>>;

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
    eprintln!(
        "{:<10} {:<8} {:>8} {:>8} {:>8} {:>10} {:>14} {:>18}",
        "compiler", "level", STAGES[0], STAGES[1], STAGES[2], STAGES[3], STAGES[4], STAGES[5]
    );
    for ((compiler, level), counts) in table.iter() {
        let total = counts[6];
        let cell = |i: usize| format!("{}/{}", counts[i], total);
        eprintln!(
            "{:<10} {:<8} {:>8} {:>8} {:>8} {:>10} {:>14} {:>18}",
            compiler,
            level,
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            cell(4),
            cell(5)
        );
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
        row[6] += 1;
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
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::Type;

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
        let main = module.function_by_name("main").ok_or("no main")?;
        let mut interp =
            Interpreter::new(module).map_err(|e| format!("interpreter: {}", e.message()))?;
        let args = if module.functions[main].signature.params.len() >= 2 {
            let name: Vec<Val> = b"prog\0".iter().map(|b| Val::Int(u128::from(*b))).collect();
            let name = interp.alloc(&Type::I8, &name).map_err(|e| e.message())?;
            let argv = interp.alloc(&Type::PTR, &[name, Val::Ptr(0)]).map_err(|e| e.message())?;
            vec![Val::Int(1), argv]
        } else {
            Vec::new()
        };
        let result = interp.call(main, &args);
        let output = interp.output().to_string();
        if let Err(e) = result {
            return Err(format!(
                "interpreter error: {}\n  output so far: {output:?}",
                e.to_diagnostic()
            )
            .into());
        }
        if output != expected {
            return Err(format!(
                "interpreter output differs:\n  native: {expected:?}\n  interp: {output:?}"
            )
            .into());
        }
        *passed = 5;

        let object =
            adc_backend::compile_object(module, &case.stem).map_err(|d| format!("backend: {d}"))?;
        let obj = case.dir.join(format!("{}.adc.o", case.stem));
        let exe = case.dir.join(format!("{}.adc", case.stem));
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
            )
            .into());
        }
        let run = Command::new(&exe).output().map_err(|e| format!("running adc build: {e}"))?;
        let native = String::from_utf8_lossy(&run.stdout);
        if native != expected {
            return Err(format!(
                "adc-built program output differs ({}):\n  clang: {expected:?}\n  adc:   {native:?}",
                run.status
            )
            .into());
        }
        *passed = 6;
        Ok(())
    }
}
