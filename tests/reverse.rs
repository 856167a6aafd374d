//! End-to-end reverse mode: every `tests/c/reverse/*.c` program is compiled by clang-19 at
//! -O0 and -O2 to bitcode, built by `adc build` (which replaces its `__enzyme_autodiff`
//! calls by synthesized derivatives; once as is, once with `--ad-before-opt`), linked with
//! `cc prog.o -lm` and run. Each program
//! checks its gradients against analytic derivatives or central finite differences and
//! exits non-zero on a mismatch; its output is shown when the case fails.
//!
//! One libtest-mimic test per (level, program); without clang-19 every case is ignored with
//! a notice. Build products go under `CARGO_TARGET_TMPDIR/reverse`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};

const COMPILER: &str = "clang-19";

/// -O0 keeps clang's allocas and loads (adc's pre-AD pipeline promotes them); optnone
/// would forbid that, as it does for Enzyme.
const O0: &[&str] = &["-O0", "-Xclang", "-disable-O0-optnone", "-g"];
const O2: &[&str] = &["-O2", "-g"];

/// (name, clang flags, `adc build` flags). The `ad-before-opt` variants differentiate the
/// imported code before adc's pipelines run (the ablation reference point), so the
/// derivative of unoptimized code is checked too.
const LEVELS: &[(&str, &[&str], &[&str])] = &[
    ("O0", O0, &[]),
    ("O2", O2, &[]),
    ("O0-ad-before-opt", O0, &["--ad-before-opt"]),
    ("O2-ad-before-opt", O2, &["--ad-before-opt"]),
];

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/reverse");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/c/reverse exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    programs.sort();
    let present =
        Command::new(COMPILER).arg("--version").output().is_ok_and(|o| o.status.success());
    if !present {
        eprintln!("notice: {COMPILER} not found, the reverse-mode C cases are ignored");
    }
    let out_root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reverse");
    let mut trials = Vec::new();
    for (level, flags, adc_flags) in LEVELS {
        for program in &programs {
            let stem = program.file_stem().and_then(|s| s.to_str()).unwrap_or("prog").to_string();
            let case = Case {
                flags,
                adc_flags,
                source: program.clone(),
                include: root.clone(),
                dir: out_root.join(level),
                stem: stem.clone(),
            };
            trials.push(
                Trial::test(format!("{level}/{stem}"), move || case.run())
                    .with_ignored_flag(!present),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

struct Case {
    flags: &'static [&'static str],
    adc_flags: &'static [&'static str],
    source: PathBuf,
    include: PathBuf,
    dir: PathBuf,
    stem: String,
}

impl Case {
    fn run(&self) -> Result<(), Failed> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let bc = self.dir.join(format!("{}.bc", self.stem));
        let obj = self.dir.join(format!("{}.o", self.stem));
        let exe = self.dir.join(&self.stem);
        let mut clang = Command::new(COMPILER);
        clang.args(["-c", "-emit-llvm"]).args(self.flags).arg("-I").arg(&self.include);
        clang.arg(&self.source).arg("-o").arg(&bc);
        expect_success("clang", &run(&mut clang)?)?;
        let mut adc = Command::new(env!("CARGO_BIN_EXE_adc"));
        adc.arg("build").arg(&bc).arg("-o").arg(&obj).args(self.adc_flags);
        expect_success("adc build", &run(&mut adc)?)?;
        let mut cc = Command::new("cc");
        cc.arg(&obj).arg("-lm").arg("-o").arg(&exe);
        expect_success("cc", &run(&mut cc)?)?;
        let out = run(&mut Command::new(&exe))?;
        expect_success("the program", &out)
    }
}

fn run(command: &mut Command) -> Result<Output, Failed> {
    command.output().map_err(|e| format!("cannot run {command:?}: {e}").into())
}

fn expect_success(what: &str, out: &Output) -> Result<(), Failed> {
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
    .into())
}
