//! Every pass of the default pipelines can be disabled alone: `pre-ad` then `post-ad`
//! with `--passes=-NAME` (and with nothing disabled) keeps the results of
//!
//! - every `; run:` line of every filetest (`tests/filetests/**/*.adir`), evaluated by the
//!   interpreter before and after: same result, buffers and output, or the same error
//!   (except where the line expects undefined behaviour, which passes may refine away);
//! - a sample of the import corpus (`tests/c/import/*.c`, every `CORPUS_STRIDE`-th
//!   program, clang-19 -O0): `main` prints the same in the interpreter before and after.
//!
//! A pass that other passes silently rely on (one that must run for a later one to be
//! correct) fails here. The pipelines verify after every pass.

use std::path::{Path, PathBuf};
use std::process::Command;

use adc::filetest::collect;
use adc::invocation::{Expect, Invocation};
use adc_ir::interp::Interpreter;
use adc_ir::text::parse_module;
use adc_ir::Module;
use adc_passes::{resolve, run_passes, Options, Selection};

/// One in this many corpus programs is in the sample.
const CORPUS_STRIDE: usize = 4;

/// `None` (the full pipelines), then each pass of `pre-ad` or `post-ad` once.
fn toggles() -> Vec<Option<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    for pipeline in ["pre-ad", "post-ad"] {
        for name in adc_passes::pipelines::pipeline(pipeline).expect("exists").passes {
            if !names.contains(name) {
                names.push(name);
            }
        }
    }
    std::iter::once(None).chain(names.into_iter().map(Some)).collect()
}

/// `module` through `pre-ad` then `post-ad`, without `disabled`.
fn optimize(module: &Module, disabled: Option<&str>) -> Result<Module, String> {
    let mut optimized = module.clone();
    let options = Options { verify_each: true, ..Default::default() };
    for pipeline in ["pre-ad", "post-ad"] {
        let selection = Selection {
            pipeline: Some(pipeline.to_string()),
            passes: disabled.map(|name| format!("-{name}")),
        };
        let passes = resolve(&selection, pipeline).map_err(|e| e.to_string())?;
        let (_, result) = run_passes(&mut optimized, &passes, &options);
        result.map_err(|e| format!("{pipeline}: {e}"))?;
    }
    Ok(optimized)
}

fn describe(disabled: Option<&str>) -> String {
    disabled.map_or("pre-ad + post-ad".to_string(), |n| format!("pre-ad + post-ad, -{n}"))
}

/// Filetests with `; run:` lines, with those lines.
fn filetests_with_runs() -> Vec<(PathBuf, String, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let files = collect(std::slice::from_ref(&root)).expect("filetests are listed");
    let mut tests = Vec::new();
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable filetest");
        let runs: Vec<String> = source
            .lines()
            .take_while(|l| !l.trim_start().starts_with("; output:"))
            .filter_map(|l| l.trim_start().strip_prefix(';'))
            .filter_map(|c| c.trim().strip_prefix("run:"))
            .map(|r| r.trim().to_string())
            .collect();
        if !runs.is_empty() {
            tests.push((path, source, runs));
        }
    }
    tests
}

/// A line that expects the interpreter to report undefined behaviour (an uninitialized
/// read, an access to dead stack memory, an alloca too large to make): the optimized
/// program may do anything there, and it does when a pass deletes the offending dead
/// load or alloca (a legal refinement). Traps the program asks for (`abort`, `exit`,
/// failed asserts) and calls the interpreter cannot make are behaviour and must stay.
fn expects_undefined_behaviour(run: &Invocation) -> bool {
    const KEPT: &[&str] = &["abort", "exit called", "assertion", "unknown external"];
    match &run.expect {
        Some(Expect::Error(text)) => !KEPT.iter().any(|k| text.contains(k)),
        _ => false,
    }
}

/// What a `; run:` line observed, or the error it expected (already checked by
/// `evaluate`), as text to compare.
fn observe(module: &Module, run: &Invocation) -> Result<String, String> {
    let outcome = run.evaluate(module, Some(10_000_000))?;
    Ok(format!("{:?} {:?} {:?}", outcome.result, outcome.buffers, outcome.output))
}

#[test]
fn each_pass_can_be_disabled_on_the_filetests() {
    let tests = filetests_with_runs();
    assert!(tests.len() >= 100, "only {} filetests have `; run:` lines", tests.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for (path, source, runs) in &tests {
        let name = path.display();
        // Files meant to fail parsing or verification have nothing to optimize.
        let Ok(mut module) = parse_module(source) else { continue };
        if adc_ir::verify::verify_module(&module).is_err() {
            continue;
        }
        let runs: Vec<Invocation> = runs.iter().filter_map(|r| Invocation::parse(r).ok()).collect();
        // The harness calls these from outside the module, as another object would: an
        // internal one must stay (global-dce removes internal functions nothing calls).
        for run in &runs {
            if let Some(id) = module.function_by_name(&run.function) {
                module.functions[id].linkage = adc_ir::Linkage::External;
            }
        }
        let before: Vec<Result<String, String>> =
            runs.iter().map(|r| observe(&module, r)).collect();
        for disabled in toggles() {
            let optimized = match optimize(&module, disabled) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{name} [{}]: {e}", describe(disabled)));
                    continue;
                }
            };
            for (run, before) in runs.iter().zip(&before) {
                // A line the original fails is the filetest's own business.
                let Ok(before) = before else { continue };
                checked += 1;
                if expects_undefined_behaviour(run) {
                    continue;
                }
                match observe(&optimized, run) {
                    Ok(after) if &after == before => {}
                    after => failures.push(format!(
                        "{name} [{}]: `@{}`: {after:?} instead of {before}",
                        describe(disabled),
                        run.function
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked > 1000, "only {checked} run lines checked");
}

/// What `main` prints in the interpreter.
fn interpret_main(module: &Module) -> Result<String, String> {
    let main = module.function_by_name("main").ok_or("no @main")?;
    let mut interp = Interpreter::new(module).map_err(|e| e.message())?;
    let result = interp.call_main(main);
    let output = interp.output().to_string();
    result.map(|_| output).map_err(|e| e.message())
}

#[test]
fn each_pass_can_be_disabled_on_a_corpus_sample() {
    let compiler = "clang-19";
    if !Command::new(compiler).arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("notice: {compiler} not found, the corpus sample is skipped");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/import");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/c/import exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    programs.sort();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pass-toggles");
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let mut failures = Vec::new();
    let mut checked = 0;
    for source in programs.iter().step_by(CORPUS_STRIDE) {
        let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("prog");
        let bc = out.join(format!("{stem}.bc"));
        let compiled = Command::new(compiler)
            .args(["-O0", "-Xclang", "-disable-O0-optnone", "-c", "-emit-llvm", "-o"])
            .arg(&bc)
            .arg(source)
            .output()
            .expect("clang runs");
        assert!(compiled.status.success(), "{stem}: {}", String::from_utf8_lossy(&compiled.stderr));
        let module = adc_frontend_llvm::import_bitcode_file(&bc)
            .unwrap_or_else(|e| panic!("{stem}: {}", e.to_diagnostic()));
        let expected = interpret_main(&module).unwrap_or_else(|e| panic!("{stem}: {e}"));
        for disabled in toggles() {
            checked += 1;
            let after = optimize(&module, disabled).and_then(|m| interpret_main(&m));
            if after.as_ref() != Ok(&expected) {
                failures.push(format!(
                    "{stem} [{}]: {after:?}\n  instead of {expected:?}",
                    describe(disabled)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 10 * toggles().len(), "only {checked} runs checked");
}
