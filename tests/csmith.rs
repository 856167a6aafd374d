//! Differential test against clang on random C: csmith programs from fixed seeds, each built
//! by clang-19 natively (the reference) and by adc from clang-19 bitcode at -O0 and -O2
//! (`adc build` -> `cc`), must print the same checksum. One libtest-mimic test per (level,
//! seed), named `O2/seed-7`. A seed whose csmith program does not finish natively within
//! `RUN_LIMIT` is skipped (csmith programs may loop for very long); that depends only on the
//! program, so the same seeds are skipped on every run. Without csmith, its headers or
//! clang-19 every case is ignored with a notice. `scripts/csmith.sh --count N` runs more.
//! Build products go under `CARGO_TARGET_TMPDIR/csmith`.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

/// Seeds run in CI: about a minute on two cores with a debug build of adc (seed 9 alone
/// takes more than a minute to build at -O0 there; `scripts/csmith.sh` uses a release build).
const SEEDS: std::ops::RangeInclusive<u32> = 1..=8;
const CSMITH_INCLUDE: &str = "/usr/include/csmith";
/// Seconds a program may run, natively or built by adc.
const RUN_LIMIT: &str = "10";
const LEVELS: &[&str] = &["O0", "O2"];

fn main() {
    let args = Arguments::from_args();
    // In the temporary directory: csmith writes platform.info wherever it runs.
    let present = |tool: &str| {
        Command::new(tool)
            .current_dir(env!("CARGO_TARGET_TMPDIR"))
            .arg("--version")
            .output()
            .is_ok()
    };
    let usable = present("csmith")
        && present("clang-19")
        && present("timeout")
        && Path::new(CSMITH_INCLUDE).join("csmith.h").exists();
    if !usable {
        eprintln!(
            "notice: csmith, its headers or clang-19 not found: the csmith cases are ignored"
        );
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("csmith");
    let mut trials = Vec::new();
    for level in LEVELS {
        for seed in SEEDS {
            let out = out.clone();
            trials.push(
                Trial::test(format!("{level}/seed-{seed}"), move || run(seed, level, &out))
                    .with_ignored_flag(!usable),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn run(seed: u32, level: &str, out: &Path) -> Result<(), Failed> {
    let dir = out.join(format!("{level}-{seed}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let program = dir.join("program.c");
    // csmith writes platform.info into its current directory.
    let generated = Command::new("csmith")
        .current_dir(&dir)
        .args(["--seed", &seed.to_string(), "--no-volatiles", "--no-packed-struct", "-o"])
        .arg(&program)
        .output()
        .map_err(|e| format!("csmith: {e}"))?;
    if !generated.status.success() {
        return Err(format!("csmith failed: {}", String::from_utf8_lossy(&generated.stderr)).into());
    }
    let native = dir.join("native");
    let clang = |extra: &[&str], output: &PathBuf| -> Result<(), Failed> {
        let result = Command::new("clang-19")
            .args(["-w", "-I", CSMITH_INCLUDE])
            .args(extra)
            .arg(&program)
            .arg("-o")
            .arg(output)
            .output()
            .map_err(|e| format!("clang-19: {e}"))?;
        if result.status.success() {
            Ok(())
        } else {
            Err(format!("clang-19 failed: {}", String::from_utf8_lossy(&result.stderr)).into())
        }
    };
    clang(&["-O0"], &native)?;
    let Some(expected) = run_with_limit(&native)? else {
        eprintln!("seed {seed}: the native program runs longer than {RUN_LIMIT} s, skipped");
        return Ok(());
    };
    let bitcode = dir.join("program.bc");
    clang(&[&format!("-{level}"), "-c", "-emit-llvm"], &bitcode)?;
    let object = dir.join("program.o");
    let built = Command::new(env!("CARGO_BIN_EXE_adc"))
        .arg("build")
        .arg(&bitcode)
        .arg("-o")
        .arg(&object)
        .output()
        .map_err(|e| format!("adc: {e}"))?;
    if !built.status.success() {
        return Err(format!("adc build failed:\n{}", String::from_utf8_lossy(&built.stderr)).into());
    }
    let linked = dir.join("adc-built");
    let link = Command::new("cc")
        .arg(&object)
        .args(["-lm", "-o"])
        .arg(&linked)
        .output()
        .map_err(|e| format!("cc: {e}"))?;
    if !link.status.success() {
        return Err(format!("cc failed: {}", String::from_utf8_lossy(&link.stderr)).into());
    }
    match run_with_limit(&linked)? {
        Some(got) if got == expected => Ok(()),
        Some(got) => {
            Err(format!("adc's program printed\n{got}\nclang's printed\n{expected}").into())
        }
        None => Err(format!("adc's program ran longer than {RUN_LIMIT} s").into()),
    }
}

/// The program's output, `None` when it runs past `RUN_LIMIT`; a crash is an error.
fn run_with_limit(program: &Path) -> Result<Option<String>, Failed> {
    let result = Command::new("timeout")
        .arg(RUN_LIMIT)
        .arg(program)
        .output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    match result.status.code() {
        Some(0) => Ok(Some(String::from_utf8_lossy(&result.stdout).into_owned())),
        Some(124) => Ok(None),
        _ => Err(format!("{} failed: {}", program.display(), result.status).into()),
    }
}
