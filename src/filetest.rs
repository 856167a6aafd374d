//! The filetest runner behind `cargo test --test filetests` and `adc test PATH...`.
//!
//! A filetest is an `.adir` file whose leading comments say what to do with it:
//!
//! ```text
//! ; test optimize precise-output     <- kind: parse | verifier | interpret | run | optimize |
//!                                       analysis | type-tree | activity | tangent |
//!                                       gradient | cache-plan | ptx
//! ; passes: mem2reg, licm            <- optimize/analysis: the passes, in order
//! ; stat: licm: calls hoisted = 1    <- optimize/analysis: a statistics counter's total
//! ; check: %x = fadd                 <- filecheck directives on the printed module
//! ; run: @f(1.0, 2) == 3.0           <- interpreter invocations (see `invocation`); under
//!                                       `test run` also compiled by the Cranelift JIT
//! ; error: t.adir:5:3                <- substrings of the expected rendered diagnostics
//! ; activity: @f(dup, const) -> active <- activity: a request whose activity is printed
//! ```
//!
//! Every file that parses must also survive the text round trip: printing, re-parsing and
//! printing again gives the same text, and the re-parsed module verifies. With
//! `precise-output`, the printed module is compared with the comment block after
//! `; output:` at the end of the file; `ADC_TEST_BLESS=1` (or `adc test --bless`) rewrites
//! that block instead of failing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use adc_ir::text::{parse_module, print_module};
use adc_ir::verify::verify_module;
use adc_ir::{Diagnostics, Module};

use crate::invocation::{Clause, Expect, Invocation};

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum TestKind {
    /// Parse and verify; checks run on the printed module.
    Parse,
    /// Verify; `; error:` lines say which diagnostics are expected.
    Verifier,
    /// Parse, verify, and evaluate the `; run:` lines.
    Interpret,
    /// As `Interpret`, and also run each `; run:` line through the Cranelift JIT, requiring
    /// the same result and buffers. Lines that expect an error, or check printed output,
    /// are interpreter-only (native code would crash, or print to the real stdout).
    Run,
    /// Run `; passes:`, verifying after each; checks run on the result, and `; run:` lines
    /// must give the same results before and after.
    Optimize,
    /// Run `; passes:` (analysis printers, typically); checks run on what they printed.
    Analysis,
    /// Synthesize a forward-mode derivative and check it against finite differences
    /// (`; tangent:`, `; tangentcheck:`; see `tangentcheck`). Checks and `; run:` lines
    /// see the module with the derivative; `; error:` lines expect synthesis to fail.
    Tangent,
    /// Print the AD type trees of every defined function (and the type answer for each
    /// memory access); checks run on that.
    TypeTree,
    /// Print the activity of each `; activity: @f(dup, const) -> active` request.
    Activity,
    /// Synthesize a reverse-mode derivative and compare it with finite differences
    /// (`crate::gradcheck` documents the directives).
    Gradient,
    /// Print the cache plan of each `; plan: @f(dup) -> active` request (reverse mode),
    /// under the settings of a `; cache: mincut,-cache-ivs` line; checks run on that.
    CachePlan,
    /// Build the module as `adc build --emit ptx` does (pipelines, Enzyme API lowering,
    /// synthesis, PTX for sm_80); checks run on the PTX text.
    Ptx,
}

impl TestKind {
    const NAMES: &'static [(TestKind, &'static str)] = &[
        (TestKind::Parse, "parse"),
        (TestKind::Verifier, "verifier"),
        (TestKind::Interpret, "interpret"),
        (TestKind::Run, "run"),
        (TestKind::Optimize, "optimize"),
        (TestKind::Analysis, "analysis"),
        (TestKind::Tangent, "tangent"),
        (TestKind::TypeTree, "type-tree"),
        (TestKind::Activity, "activity"),
        (TestKind::Gradient, "gradient"),
        (TestKind::CachePlan, "cache-plan"),
        (TestKind::Ptx, "ptx"),
    ];
}

/// What a filetest's comments ask for.
#[derive(Debug)]
pub struct FileTest {
    pub path: PathBuf,
    pub source: String,
    pub kind: TestKind,
    pub precise_output: bool,
    pub passes: String,
    /// filecheck directives, without the leading `;`.
    pub checks: Vec<String>,
    /// (line number, invocation text)
    pub runs: Vec<(usize, String)>,
    pub errors: Vec<String>,
    /// (line number, `pass: counter = N`)
    pub stats: Vec<(usize, String)>,
    /// `activity` tests: the requests, as `@f(dup, const) -> active`.
    pub activity_requests: Vec<String>,
    /// `cache-plan` tests: the requests (same syntax) and the planner settings.
    pub plan_requests: Vec<String>,
    pub cache: Vec<String>,
}

const OUTPUT_MARKER: &str = "; output:";

impl FileTest {
    pub fn load(path: &Path) -> Result<FileTest, String> {
        let source = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        FileTest::from_source(path, source)
    }

    pub fn from_source(path: &Path, source: String) -> Result<FileTest, String> {
        let mut kind = None;
        let mut precise_output = false;
        let mut passes = String::new();
        let mut checks = Vec::new();
        let mut runs = Vec::new();
        let mut errors = Vec::new();
        let mut stats = Vec::new();
        let mut activity_requests = Vec::new();
        let mut plan_requests = Vec::new();
        let mut cache = Vec::new();
        for (index, line) in source.lines().enumerate() {
            if line.trim_start().starts_with(OUTPUT_MARKER) {
                break;
            }
            let Some(comment) = line.trim_start().strip_prefix(';') else {
                continue;
            };
            let comment = comment.trim();
            if let Some(rest) = comment.strip_prefix("test ") {
                let mut words = rest.split_whitespace();
                let name = words.next().unwrap_or("");
                let found = TestKind::NAMES.iter().find(|(_, n)| *n == name);
                let Some((k, _)) = found else {
                    let names: Vec<_> = TestKind::NAMES.iter().map(|(_, n)| *n).collect();
                    return Err(format!(
                        "line {}: unknown test kind `{name}` (valid: {})",
                        index + 1,
                        names.join(", ")
                    ));
                };
                kind = Some(*k);
                for flag in words {
                    match flag {
                        "precise-output" => precise_output = true,
                        other => {
                            return Err(format!("line {}: unknown test flag `{other}`", index + 1))
                        }
                    }
                }
            } else if let Some(rest) = comment.strip_prefix("passes:") {
                passes = rest.trim().to_string();
            } else if let Some(rest) = comment.strip_prefix("run:") {
                runs.push((index + 1, rest.trim().to_string()));
            } else if let Some(rest) = comment.strip_prefix("stat:") {
                stats.push((index + 1, rest.trim().to_string()));
            } else if let Some(rest) = comment.strip_prefix("activity:") {
                activity_requests.push(rest.trim().to_string());
            } else if let Some(rest) = comment.strip_prefix("plan:") {
                plan_requests.push(rest.trim().to_string());
            } else if let Some(rest) = comment.strip_prefix("cache:") {
                cache.extend(rest.split(',').map(|w| w.trim().to_string()));
            } else if let Some(rest) = comment.strip_prefix("error:") {
                errors.push(rest.trim().to_string());
            } else if ["check:", "nextln:", "sameln:", "not:", "unordered:", "regex:"]
                .iter()
                .any(|d| comment.starts_with(d))
            {
                checks.push(comment.to_string());
            }
        }
        let kind = kind.ok_or("no `; test <kind>` line in the file header")?;
        Ok(FileTest {
            path: path.to_path_buf(),
            source,
            kind,
            precise_output,
            passes,
            checks,
            runs,
            errors,
            stats,
            activity_requests,
            plan_requests,
            cache,
        })
    }

    fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Runs the test. `bless` rewrites a precise-output block instead of failing on it.
    pub fn run(&self, bless: bool) -> Result<(), String> {
        if self.kind == TestKind::Gradient {
            let check = |output: &str| self.check_output(output, false);
            return crate::gradcheck::run(&self.path, &self.source, &self.errors, &check);
        }
        let file_name = self.file_name();
        let render = |d: &Diagnostics| d.render(&file_name, &self.source);
        let module = match self.parse_and_verify() {
            Ok(module) if self.errors.is_empty() || self.kind == TestKind::Tangent => module,
            Ok(_) => {
                return Err(format!(
                    "expected diagnostics containing {:?}, but the file parsed and verified",
                    self.errors
                ))
            }
            Err(diagnostics) => {
                let rendered = render(&diagnostics);
                if self.errors.is_empty() {
                    return Err(rendered);
                }
                let missing: Vec<_> =
                    self.errors.iter().filter(|e| !rendered.contains(e.as_str())).collect();
                if missing.is_empty() {
                    return Ok(());
                }
                return Err(format!(
                    "expected diagnostics containing {missing:?}, got:\n{rendered}"
                ));
            }
        };
        let mut printed = round_trip(&module)?;
        let mut module = module;
        if self.kind == TestKind::Tangent {
            module = crate::tangentcheck::check(&module, &self.source, &self.errors)?;
            printed = round_trip(&module)?;
        }
        let output = match self.kind {
            TestKind::Parse
            | TestKind::Verifier
            | TestKind::Interpret
            | TestKind::Run
            | TestKind::Tangent => printed,
            TestKind::Optimize => self.optimize(&module)?.0,
            TestKind::Analysis => self.optimize(&module)?.1,
            TestKind::TypeTree => crate::analyze::type_tree_report(&module, None)?,
            TestKind::Activity => {
                crate::analyze::activity_report(&module, &self.activity_requests)?
            }
            TestKind::CachePlan => {
                let mut options = adc_ad::cache::CacheOptions::default();
                for word in &self.cache {
                    options.apply(word)?;
                }
                crate::analyze::cache_plan_spec_report(&module, &self.plan_requests, options)?
            }
            TestKind::Ptx => ptx_of(module.clone())?,
            // Handled by `gradcheck` above.
            TestKind::Gradient => printed,
        };
        self.check_output(&output, bless)?;
        for (line, text) in &self.runs {
            self.run_invocation(&module, *line, text)?;
        }
        Ok(())
    }

    fn parse_and_verify(&self) -> Result<Module, Diagnostics> {
        let module = parse_module(&self.source)?;
        verify_module(&module)?;
        Ok(module)
    }

    /// Runs the passes with verify-each; returns the printed module and the report output.
    fn optimize(&self, module: &Module) -> Result<(String, String), String> {
        let passes = adc_passes::parse_pass_list(&self.passes).map_err(|d| d.to_string())?;
        let mut optimized = module.clone();
        let options = adc_passes::Options { verify_each: true, ..Default::default() };
        let (report, result) = adc_passes::run_passes(&mut optimized, &passes, &options);
        result.map_err(|e| format!("{e}\noutput so far:\n{}", report.output))?;
        for (line, text) in &self.stats {
            check_stat(&report, *line, text)?;
        }
        for (line, text) in &self.runs {
            self.run_invocation(&optimized, *line, text)
                .map_err(|e| format!("after the passes: {e}"))?;
        }
        Ok((print_module(&optimized), report.output))
    }

    fn run_invocation(&self, module: &Module, line: usize, text: &str) -> Result<(), String> {
        let invocation = Invocation::parse(text).map_err(|e| format!("line {line}: {e}"))?;
        let interp =
            invocation.evaluate(module, None).map_err(|e| format!("line {line}: `{text}`: {e}"))?;
        let native_ok = !matches!(invocation.expect, Some(Expect::Error(_)))
            && !invocation.clauses.iter().any(|c| matches!(c, Clause::Output(_)));
        if self.kind != TestKind::Run || !native_ok {
            return Ok(());
        }
        let jit = invocation
            .evaluate_jit(module)
            .map_err(|e| format!("line {line}: `{text}` (JIT): {e}"))?;
        if jit.result != interp.result || jit.buffers != interp.buffers {
            return Err(format!(
                "line {line}: `{text}`: the JIT and the interpreter differ:\n  interp: {:?} {:?}\n  jit:    {:?} {:?}",
                interp.result, interp.buffers, jit.result, jit.buffers
            ));
        }
        Ok(())
    }

    fn check_output(&self, output: &str, bless: bool) -> Result<(), String> {
        if !self.checks.is_empty() {
            let mut builder = filecheck::CheckerBuilder::new();
            for check in &self.checks {
                builder.directive(check).map_err(|e| format!("bad directive `{check}`: {e}"))?;
            }
            let (ok, explanation) = builder
                .finish()
                .explain(output, filecheck::NO_VARIABLES)
                .map_err(|e| format!("filecheck: {e}"))?;
            if !ok {
                return Err(format!("checks failed:\n{explanation}\noutput:\n{output}"));
            }
        }
        if self.precise_output {
            let expected = self.expected_output();
            if expected.as_deref() != Some(output) {
                if bless {
                    return self.bless(output);
                }
                return Err(format!(
                    "precise output differs (run with ADC_TEST_BLESS=1 to update)\nexpected:\n{}\nactual:\n{output}",
                    expected.unwrap_or_default()
                ));
            }
        }
        Ok(())
    }

    /// The block after `; output:`, with each line's `; ` prefix removed.
    fn expected_output(&self) -> Option<String> {
        let start = self.source.find(&format!("\n{OUTPUT_MARKER}"))?;
        let block = &self.source[start + 1 + OUTPUT_MARKER.len()..];
        let mut out = String::new();
        for line in block.lines().skip(1) {
            let line = line.strip_prefix(';').unwrap_or(line);
            out.push_str(line.strip_prefix(' ').unwrap_or(line));
            out.push('\n');
        }
        Some(out)
    }

    fn bless(&self, output: &str) -> Result<(), String> {
        let body = match self.source.find(&format!("\n{OUTPUT_MARKER}")) {
            Some(start) => &self.source[..start + 1],
            None => &self.source,
        };
        let mut text = body.trim_end().to_string();
        text.push_str("\n\n");
        text.push_str(OUTPUT_MARKER);
        text.push('\n');
        for line in output.lines() {
            let _ = writeln!(text, "; {line}");
        }
        let text = text.replace(" \n", "\n");
        std::fs::write(&self.path, text).map_err(|e| format!("cannot bless: {e}"))
    }
}

/// Checks one `; stat: pass: counter = N` line against the report's totals.
fn check_stat(report: &adc_passes::Report, line: usize, text: &str) -> Result<(), String> {
    let parsed = text.split_once(':').and_then(|(pass, rest)| {
        let (counter, n) = rest.rsplit_once('=')?;
        Some((pass.trim(), counter.trim(), n.trim().parse::<u64>().ok()?))
    });
    let Some((pass, counter, expected)) = parsed else {
        return Err(format!("line {line}: expected `; stat: PASS: COUNTER = N`, got `{text}`"));
    };
    let actual = report.stat(pass, counter);
    if actual != expected {
        return Err(format!("line {line}: {pass}: {counter} = {actual}, expected {expected}"));
    }
    Ok(())
}

/// Prints, re-parses and re-prints: the text form must be a fixed point.
/// The PTX `adc build --emit ptx` writes for `module`.
fn ptx_of(mut module: Module) -> Result<String, String> {
    let options = crate::build::BuildOptions {
        pass_args: crate::pass_args::PassArgs::default(),
        ad_before_opt: false,
        emit: crate::build::Emit::Ptx(adc_ptx::Arch::Sm80),
        backend: Default::default(),
        flush_denormals: false,
        specialize_args: true,
        scalarize_vectors: true,
        devectorize_loops: true,
    };
    let mut synth = adc_ad::Differentiator::new(Default::default());
    let built = crate::build::build(&mut module, "filetest", &options, &mut synth)
        .map_err(|e| e.to_string())?;
    String::from_utf8(built.bytes).map_err(|e| e.to_string())
}

fn round_trip(module: &Module) -> Result<String, String> {
    let printed = print_module(module);
    let reparsed = parse_module(&printed).map_err(|d| {
        format!(
            "the printed module does not parse back:\n{}\n{printed}",
            d.render("printed", &printed)
        )
    })?;
    verify_module(&reparsed).map_err(|d| {
        format!("the re-parsed module does not verify:\n{}", d.render("printed", &printed))
    })?;
    let again = print_module(&reparsed);
    if again != printed {
        return Err(format!("printing is not a fixed point:\nfirst:\n{printed}\nsecond:\n{again}"));
    }
    Ok(printed)
}

/// Every `.adir` file under the given files and directories, sorted.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        collect_into(path, &mut files)?;
    }
    files.sort();
    Ok(files)
}

fn collect_into(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.is_dir() {
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            collect_into(&entry.path(), files)?;
        }
    } else if path.extension().is_some_and(|e| e == "adir") {
        files.push(path.to_path_buf());
    } else if !path.exists() {
        return Err(format!("{} does not exist", path.display()));
    }
    Ok(())
}

/// Loads and runs one file.
pub fn run_file(path: &Path, bless: bool) -> Result<(), String> {
    FileTest::load(path)?.run(bless)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_read() {
        let source = "; test optimize precise-output\n; passes: a, b\n; check: x\n; run: @f(1) == 2\n; error: e\nfunc @f() {\n^e:\n  ret\n}\n\n; output:\n; func @f() {\n";
        let t = FileTest::from_source(Path::new("x.adir"), source.into()).unwrap();
        assert_eq!(t.kind, TestKind::Optimize);
        assert!(t.precise_output);
        assert_eq!(t.passes, "a, b");
        assert_eq!(t.checks, vec!["check: x".to_string()]);
        assert_eq!(t.runs, vec![(4, "@f(1) == 2".to_string())]);
        assert_eq!(t.errors, vec!["e".to_string()]);
        assert_eq!(t.expected_output().as_deref(), Some("func @f() {\n"));
    }

    #[test]
    fn unknown_kind_is_reported() {
        let err = FileTest::from_source(Path::new("x.adir"), "; test bogus\n".into()).unwrap_err();
        assert!(err.contains("unknown test kind `bogus`"), "{err}");
        assert!(FileTest::from_source(Path::new("x.adir"), "func @f()".into()).is_err());
    }
}
