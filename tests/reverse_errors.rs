//! `adc build` on C programs whose Enzyme API use cannot be differentiated: each
//! `tests/c/reverse/errors/*.c` and `tests/c/forward/errors/*.c` names, in a `// expect-error: file:line: message` line,
//! the source line and the message the diagnostic must contain. The build must exit with
//! status 1 and that diagnostic, never panic. Compiled with clang-19 -O0 -g and -O2 -g so
//! the call site has a line; without clang-19 the cases are ignored with a notice.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

const COMPILER: &str = "clang-19";
const LEVELS: &[(&str, &[&str])] =
    &[("O0", &["-O0", "-Xclang", "-disable-O0-optnone", "-g"]), ("O2", &["-O2", "-g"])];

/// The suites under `tests/c/` that have an `errors/` directory.
const SUITES: &[&str] = &["reverse", "forward"];

fn main() {
    let args = Arguments::from_args();
    let c_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut programs: Vec<(&str, PathBuf)> = Vec::new();
    for suite in SUITES {
        let root = c_root.join(suite).join("errors");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        found.sort();
        programs.extend(found.into_iter().map(|p| (*suite, p)));
    }
    let present =
        Command::new(COMPILER).arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        eprintln!("notice: {COMPILER} not found, the Enzyme API error cases are ignored");
    }
    let out_root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reverse_errors");
    let mut trials = Vec::new();
    for (level, flags) in LEVELS {
        for (suite, program) in &programs {
            let stem = program.file_stem().and_then(|s| s.to_str()).unwrap_or("prog").to_string();
            let (source, dir) = (program.clone(), out_root.join(level).join(suite));
            // Reverse mode keeps its original test names (`O0/wrong_marker`).
            let prefix = if *suite == "reverse" { String::new() } else { format!("{suite}/") };
            let name = format!("{level}/{prefix}{stem}");
            trials.push(
                Trial::test(name, move || run_case(&source, flags, &dir, &stem))
                    .with_ignored_flag(!present),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The `// expect-error: file:line: message` line of a program: (location, message).
fn expectation(text: &str) -> Option<(String, String)> {
    let rest = text.lines().find_map(|l| l.trim().strip_prefix("// expect-error:"))?.trim();
    let (file, rest) = rest.split_once(':')?;
    let (line, message) = rest.split_once(':')?;
    Some((format!("{file}:{}:", line.trim()), message.trim().to_string()))
}

fn run_case(source: &Path, flags: &[&str], dir: &Path, stem: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(source).map_err(|e| e.to_string())?;
    let (location, message) =
        expectation(&text).ok_or("the program has no `// expect-error: file:line: message`")?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let bc = dir.join(format!("{stem}.bc"));
    let clang = Command::new(COMPILER)
        .args(["-c", "-emit-llvm"])
        .args(flags)
        .arg(source)
        .arg("-o")
        .arg(&bc)
        .output()
        .map_err(|e| e.to_string())?;
    if !clang.status.success() {
        return Err(format!("clang failed:\n{}", String::from_utf8_lossy(&clang.stderr)).into());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_adc"))
        .arg("build")
        .arg(&bc)
        .arg("-o")
        .arg(dir.join(format!("{stem}.o")))
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(1) {
        return Err(format!("expected exit status 1, got {}:\n{stderr}", out.status).into());
    }
    if stderr.contains("panicked") {
        return Err(format!("adc panicked:\n{stderr}").into());
    }
    let first = stderr.lines().next().unwrap_or("");
    // The location is the path clang recorded (absolute here), then `:line:col`.
    let at_line =
        first.split_once(": error:").is_some_and(|(loc, _)| format!("{loc}:").contains(&location));
    if !at_line || !first.contains("error:") {
        return Err(format!(
            "the diagnostic does not start with `{location}...: error:`:\n{stderr}"
        )
        .into());
    }
    if !stderr.contains(&message) {
        return Err(format!("the diagnostic lacks `{message}`:\n{stderr}").into());
    }
    Ok(())
}
