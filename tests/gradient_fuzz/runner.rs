//! Builds and runs one rendered program: clang-19 at each optimization level, `adc build`
//! to an object (native) or to IR run by `adc interp --fn main` (the interpreter), then
//! reads the program's verdict lines. A failure of clang or of the probe is a bug of the
//! generator (reported as an error), a failure of adc or of the program is a finding.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::program::Program;
use super::render::render;

pub const CLANG: &str = "clang-19";

/// The programs, once built, run well under a second; a hang is a finding.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Engine {
    Native,
    Interp,
}

/// One way of building and running a program.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Config {
    pub level: &'static str,
    pub clang_flags: &'static [&'static str],
    pub adc_flags: &'static [&'static str],
    pub engine: Engine,
}

impl Config {
    pub fn name(&self) -> String {
        let engine = match self.engine {
            Engine::Native => "native",
            Engine::Interp => "interp",
        };
        format!("{}/{engine}", self.level)
    }
}

/// -O0 keeps clang's allocas and loads; `optnone` would forbid adc's pipeline to touch them.
const O0: &[&str] = &["-O0", "-Xclang", "-disable-O0-optnone"];
const O2: &[&str] = &["-O2"];

/// The configurations every program runs in: both levels natively, and the interpreter
/// (the reference semantics after AD) at -O0.
pub const CONFIGS: &[Config] = &[
    Config { level: "O0", clang_flags: O0, adc_flags: &[], engine: Engine::Native },
    Config { level: "O2", clang_flags: O2, adc_flags: &[], engine: Engine::Native },
    Config { level: "O0", clang_flags: O0, adc_flags: &[], engine: Engine::Interp },
];

/// What must run to reproduce a finding in `config`: the interpreter is compared with the
/// native run at the same level.
pub fn reproducing(config: &Config) -> Vec<Config> {
    match config.engine {
        Engine::Native => vec![*config],
        Engine::Interp => vec![Config { engine: Engine::Native, ..*config }, *config],
    }
}

/// More configurations for long runs: AD before optimization, the reference pipeline.
pub const EXTRA_CONFIGS: &[Config] = &[Config {
    level: "O2-ad-before-opt",
    clang_flags: O2,
    adc_flags: &["--ad-before-opt"],
    engine: Engine::Native,
}];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FindingKind {
    /// A derivative or primal value differs from finite differences / the primal.
    Mismatch,
    /// `adc build` refused or crashed on the program.
    BuildError,
    /// The object did not link.
    LinkError,
    /// The program crashed, hung, or the interpreter stopped with an error.
    Crash,
}

#[derive(Clone, Debug)]
pub struct Finding {
    pub config: Config,
    pub kind: FindingKind,
    /// The modes with a mismatch (`reverse`, `forward`, `split`).
    pub modes: Vec<String>,
    pub output: String,
}

impl Finding {
    /// The same failure, as far as shrinking is concerned.
    pub fn same_as(&self, other: &Finding) -> bool {
        self.config == other.config
            && self.kind == other.kind
            && (self.kind != FindingKind::Mismatch
                || self.modes.iter().any(|m| other.modes.contains(m)))
    }

    pub fn summary(&self) -> String {
        let what = match self.kind {
            FindingKind::Mismatch => format!("mismatch in {}", self.modes.join(", ")),
            FindingKind::BuildError => "adc build failed".into(),
            FindingKind::LinkError => "link failed".into(),
            FindingKind::Crash => "the program crashed or hung".into(),
        };
        format!("{}: {what}", self.config.name())
    }
}

pub enum Verdict {
    /// Every configuration passed `checks` comparisons each.
    Pass {
        checks: usize,
    },
    /// The probe rejected the point (near a kink, or values too large).
    Skip,
    /// adc declined some configurations with its documented mixed-activity error (clang
    /// merged a pointer into `enzyme_const` memory with one into `enzyme_dup` memory,
    /// which Enzyme only differentiates with runtime activity, and otherwise gets wrong);
    /// the other configurations passed `checks` comparisons.
    Declined {
        checks: usize,
        configs: Vec<String>,
    },
    Fail(Vec<Finding>),
}

/// What every adc error for a pointer merging active and inactive memory says (see
/// `ad/src/reverse/memory.rs`): the way out the user has.
const MIXED_ACTIVITY_ADVICE: &str = "as `enzyme_dup` avoids it";

/// Whether adc's error output is its mixed-activity refusal.
pub fn is_mixed_activity_refusal(output: &str) -> bool {
    output.contains(MIXED_ACTIVITY_ADVICE)
}

impl Finding {
    /// A refusal of mixed activity, not a bug (see [`Verdict::Declined`]).
    fn declines_mixed_activity(&self) -> bool {
        self.kind == FindingKind::BuildError && is_mixed_activity_refusal(&self.output)
    }
}

pub struct Tools {
    pub adc: PathBuf,
}

impl Tools {
    /// `ADC=/path/to/adc` checks another build of adc (a fix on another branch).
    pub fn from_env() -> Tools {
        let adc = std::env::var_os("ADC")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_adc")));
        Tools { adc }
    }

    pub fn clang_present() -> bool {
        Command::new(CLANG).arg("--version").output().is_ok_and(|o| o.status.success())
    }
}

/// The shell commands that build and run `prog.c` in `config` (for failure reports).
pub fn commands(tools: &Tools, config: &Config) -> String {
    let level = config.clang_flags.join(" ");
    let flags: String = config.adc_flags.iter().map(|f| format!(" {f}")).collect();
    let adc = tools.adc.display();
    let kernel = format!("{CLANG} -c -emit-llvm {level} -DFUZZ_KERNEL prog.c -o kernel.bc");
    match config.engine {
        Engine::Native => format!(
            "{kernel}\n{adc} build kernel.bc -o kernel.o{flags}\n\
             {CLANG} -c -O1 -DFUZZ_HARNESS prog.c -o harness.o\n\
             cc kernel.o harness.o -lm -o prog && ./prog"
        ),
        Engine::Interp => format!(
            "{kernel}\n{CLANG} -c -emit-llvm -O1 -DFUZZ_HARNESS -DFUZZ_DUMP prog.c -o harness.bc\n\
             {adc} build kernel.bc harness.bc --emit ir -o prog.adir{flags}\n\
             (the values it prints must equal the native program's V lines)\n\
             {adc} interp prog.adir --fn main --fuel 4000000000"
        ),
    }
}

fn run(command: &mut Command) -> Result<Output, String> {
    command.output().map_err(|e| format!("cannot run {command:?}: {e}"))
}

/// Runs with a time limit; `None` when it was killed.
fn run_limited(command: &mut Command, limit: Duration) -> Result<Option<Output>, String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    let start = Instant::now();
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return child.wait_with_output().map(Some).map_err(|e| e.to_string());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Writes the program to `dir/prog.c` and screens its point with the probe (clang alone).
/// `Ok(Some(reason))`: rejected.
pub fn write_and_probe(text_of_program: &str, dir: &Path) -> Result<Option<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let source = dir.join("prog.c");
    std::fs::write(&source, text_of_program).map_err(|e| e.to_string())?;
    let probe = dir.join("probe");
    let mut clang = Command::new(CLANG);
    clang.args(["-O0", "-DFUZZ_PROBE_ONLY", "-Wall", "-Werror"]);
    clang.args([
        "-Wno-unused-function",
        "-Wno-unused-const-variable",
        "-Wno-unused-but-set-variable",
        // The generator may write `x = x` (a scalar assigned an expression of itself).
        "-Wno-self-assign",
    ]);
    clang.arg(&source).arg("-lm").arg("-o").arg(&probe);
    let out = run(&mut clang)?;
    if !out.status.success() {
        return Err(format!("generator bug: the probe does not compile:\n{}", text(&out)));
    }
    let out = run(&mut Command::new(&probe))?;
    match out.status.code() {
        Some(0) => Ok(None),
        Some(3) => Ok(Some(String::from_utf8_lossy(&out.stdout).trim().to_string())),
        _ => Err(format!("generator bug: the probe failed ({}):\n{}", out.status, text(&out))),
    }
}

/// How far the interpreter's dumped values may be from the native program's, relative:
/// about 2^-20 for f64 programs, about 80 ulps for f32 ones.
const INTERP_ROUNDING_F64: f64 = 1e-6;
const INTERP_ROUNDING_F32: f64 = 1e-5;

/// The interpreter's allowance for a rendered program: its `real` typedef says whether it
/// computes in `float`.
fn interp_rounding(source: &str) -> f64 {
    if source.contains("typedef float real;") {
        INTERP_ROUNDING_F32
    } else {
        INTERP_ROUNDING_F64
    }
}

/// Builds and runs the program in one configuration; `modes` filters nothing (all of the
/// program's requests run), it only names what a mismatch line belongs to.
fn run_config(
    tools: &Tools,
    dir: &Path,
    config: &Config,
    reference: Option<&str>,
    rounding: f64,
) -> Result<Result<(usize, String), Finding>, String> {
    let tag = config.name().replace('/', "-");
    let source = dir.join("prog.c");
    let kernel = dir.join(format!("{tag}.kernel.bc"));
    let mut clang = Command::new(CLANG);
    clang.args(["-c", "-emit-llvm", "-DFUZZ_KERNEL"]).args(config.clang_flags);
    let out = run(clang.arg(&source).arg("-o").arg(&kernel))?;
    if !out.status.success() {
        return Err(format!("generator bug: clang failed on the kernel:\n{}", text(&out)));
    }
    let finding = |kind, output: String| {
        let modes = mismatch_modes(&output);
        Ok(Err(Finding { config: *config, kind, modes, output }))
    };
    let harness = |ext: &str, flags: &[&str]| -> Result<PathBuf, String> {
        let path = dir.join(format!("{tag}.harness.{ext}"));
        let mut clang = Command::new(CLANG);
        clang.args(["-c", "-O1", "-DFUZZ_HARNESS"]).args(flags);
        let out = run(clang.arg(&source).arg("-o").arg(&path))?;
        if !out.status.success() {
            return Err(format!("generator bug: clang failed on the harness:\n{}", text(&out)));
        }
        Ok(path)
    };
    let mut adc = Command::new(&tools.adc);
    adc.arg("build").arg(&kernel);
    let program_out = match config.engine {
        Engine::Native => {
            let obj = dir.join(format!("{tag}.kernel.o"));
            let exe = dir.join(&tag);
            let out = run(adc.arg("-o").arg(&obj).args(config.adc_flags))?;
            if !out.status.success() {
                return finding(FindingKind::BuildError, text(&out));
            }
            let harness = harness("o", &[])?;
            let out =
                run(Command::new("cc").arg(&obj).arg(&harness).arg("-lm").arg("-o").arg(&exe))?;
            if !out.status.success() {
                return finding(FindingKind::LinkError, text(&out));
            }
            run_limited(&mut Command::new(&exe), RUN_TIMEOUT)?
        }
        Engine::Interp => {
            let ir = dir.join(format!("{tag}.adir"));
            let harness = harness("bc", &["-emit-llvm", "-DFUZZ_DUMP"])?;
            adc.arg(&harness).arg("--emit").arg("ir").arg("-o").arg(&ir).args(config.adc_flags);
            let out = run(&mut adc)?;
            if !out.status.success() {
                return finding(FindingKind::BuildError, text(&out));
            }
            let mut interp = Command::new(&tools.adc);
            interp.arg("interp").arg(&ir).args(["--fn", "main", "--fuel", "4000000000"]);
            run_limited(&mut interp, RUN_TIMEOUT)?
        }
    };
    let Some(out) = program_out else {
        return finding(FindingKind::Crash, format!("timed out after {RUN_TIMEOUT:?}"));
    };
    let output = text(&out);
    if config.engine == Engine::Interp {
        return Ok(compare_dumps(config, &output, reference, out.status.success(), rounding));
    }
    let count = |key: &str| -> Option<usize> {
        output.lines().find_map(|l| l.strip_prefix(key).and_then(|n| n.trim().parse().ok()))
    };
    match (count("checks "), count("failures ")) {
        (Some(checks), Some(0)) if !output.contains("FAIL ") => Ok(Ok((checks, output))),
        (Some(_), Some(_)) => finding(FindingKind::Mismatch, output),
        _ if output.contains("SKIP") => {
            Err(format!("generator bug: the probe passed under clang but not here:\n{output}"))
        }
        _ => finding(FindingKind::Crash, format!("{}\n{output}", out.status)),
    }
}

/// The `V <mode> <slot> <value>` lines of a program's output.
fn dumped(output: &str) -> Vec<(String, f64)> {
    output
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("V ")?.split_whitespace();
            let (mode, slot, value) = (w.next()?, w.next()?, w.next()?);
            Some((format!("{mode} {slot}"), parse_hex_float(value)?))
        })
        .collect()
}

/// C's `%a` format (`-0x1.8p-3`, `0x0p+0`, `inf`, `nan`).
pub fn parse_hex_float(text: &str) -> Option<f64> {
    let (negative, t) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let value = if let Some(hex) = t.strip_prefix("0x") {
        let (mantissa, exp) = hex.split_once('p')?;
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut m = u64::from_str_radix(int, 16).ok()? as f64;
        for (k, c) in frac.chars().enumerate() {
            m += c.to_digit(16)? as f64 / 16f64.powi(k as i32 + 1);
        }
        // In two halves: 2^-1074 alone underflows in powi.
        let e: i32 = exp.parse().ok()?;
        m * 2f64.powi(e / 2) * 2f64.powi(e - e / 2)
    } else {
        t.parse().ok()?
    };
    Some(if negative { -value } else { value })
}

/// The interpreter's derivatives must match the native program's (which were checked
/// against finite differences) to rounding, `rounding` relative: the two run the same IR
/// with different libm (glibc's `tanhf`, `cosf` against the interpreter's, within an ulp
/// each), and a program's arithmetic amplifies those ulps (seed 110072, f32: 13 ulps).
fn compare_dumps(
    config: &Config,
    output: &str,
    reference: Option<&str>,
    exited: bool,
    rounding: f64,
) -> Result<(usize, String), Finding> {
    let got = dumped(output);
    let crash = |output: String| Finding {
        config: *config,
        kind: FindingKind::Crash,
        modes: vec![],
        output,
    };
    // A dump with no values is no crash: a program whose requests differentiate nothing
    // (no `Dup` memory, no active scalar, and no forward request since it has a
    // file-scope array) prints none; values the native run printed and the
    // interpreter's lacks are mismatches below.
    if !exited {
        return Err(crash(output.to_string()));
    }
    // Without a native run that passed there is nothing to compare with.
    let Some(reference) = reference else { return Ok((0, output.to_string())) };
    let want = dumped(reference);
    let mut report = String::new();
    let mut modes = Vec::new();
    for (key, w) in &want {
        let g = got.iter().find(|(k, _)| k == key).map(|(_, g)| *g);
        let close = g.is_some_and(|g| (g - w).abs() <= rounding * w.abs().max(1.0));
        if !close {
            let mode = key.split(' ').next().unwrap_or("").to_string();
            report.push_str(&format!(
                "FAIL {mode} interpreter vs native, slot {}: got {g:?} want {w}\n",
                key.split(' ').nth(1).unwrap_or("")
            ));
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
    }
    if modes.is_empty() {
        Ok((want.len(), output.to_string()))
    } else {
        Err(Finding {
            config: *config,
            kind: FindingKind::Mismatch,
            modes,
            output: format!("{report}\n--- interpreter output ---\n{output}"),
        })
    }
}

fn mismatch_modes(output: &str) -> Vec<String> {
    let mut modes: Vec<String> = Vec::new();
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("FAIL ") {
            let mode = rest.split_whitespace().next().unwrap_or("").to_string();
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
    }
    modes
}

/// Checks `program` in `configs`, building under `dir`.
pub fn check(
    tools: &Tools,
    program: &Program,
    dir: &Path,
    configs: &[Config],
) -> Result<Verdict, String> {
    check_source(tools, &render(program), dir, configs)
}

/// Checks a rendered program (a generated one, or one saved in `tests/c/fuzz-found`).
pub fn check_source(
    tools: &Tools,
    source: &str,
    dir: &Path,
    configs: &[Config],
) -> Result<Verdict, String> {
    if let Some(reason) = write_and_probe(source, dir)? {
        let _ = reason;
        return Ok(Verdict::Skip);
    }
    let mut findings = Vec::new();
    let mut checks = 0;
    let mut native_outputs: Vec<(&str, String)> = Vec::new();
    for config in configs {
        let reference = native_outputs.iter().find(|(l, _)| *l == config.level);
        let reference = reference.map(|(_, o)| o.as_str());
        match run_config(tools, dir, config, reference, interp_rounding(source))? {
            Ok((n, output)) => {
                checks += n;
                if config.engine == Engine::Native {
                    native_outputs.push((config.level, output));
                }
            }
            Err(f) => findings.push(f),
        }
    }
    Ok(if findings.is_empty() {
        Verdict::Pass { checks }
    } else if findings.iter().all(Finding::declines_mixed_activity) {
        Verdict::Declined { checks, configs: findings.iter().map(|f| f.config.name()).collect() }
    } else {
        Verdict::Fail(findings)
    })
}
