//! Building the benchmark executables: the native primal (clang -O2), the adc primals, one
//! adc gradient build per variant and, with `--enzyme`, Enzyme's gradient, all linked with
//! the heap meter. A failed build keeps the tool's own error line so the report can show
//! why.

use std::path::{Path, PathBuf};
use std::process::Command;

use thiserror::Error;

use crate::variants::Bitcode;

/// The linker's --wrap of the allocator for bench/programs/heap_meter.c.
const HEAP_METER_LINK_FLAG: &str = "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free";

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("cannot start {tool}: {source}")]
    Spawn { tool: String, source: std::io::Error },
    /// The tool ran and failed; `message` holds its first error lines.
    #[error("{tool} failed: {message}")]
    Failed { tool: String, message: String },
}

/// The external tools and the scratch directory builds go to.
pub struct Toolchain {
    pub clang: String,
    pub cc: String,
    pub adc: PathBuf,
    pub work: PathBuf,
    /// The Enzyme comparison's tools; None when it is skipped.
    pub enzyme: Option<EnzymeTools>,
}

/// What Enzyme v0.0.148 needs (bitcode from LLVM 14, as its anchor README runs it).
#[derive(Debug, Clone)]
pub struct EnzymeTools {
    pub clang14: String,
    pub opt14: String,
    /// LLVMEnzyme-14.so.
    pub plugin: PathBuf,
}

impl EnzymeTools {
    /// The tools if the comparison can run, else the reason it is skipped (for the
    /// report): no plugin given, a plugin path that does not exist, or clang-14/opt-14
    /// not runnable.
    pub fn find(plugin: Option<&Path>, clang14: &str, opt14: &str) -> Result<EnzymeTools, String> {
        let plugin = plugin.ok_or("no `--enzyme PLUGIN` given")?;
        if !plugin.is_file() {
            return Err(format!("the Enzyme plugin {} does not exist", plugin.display()));
        }
        for (tool, variable) in [(clang14, "CLANG14"), (opt14, "OPT14")] {
            let runs =
                Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
            if !runs {
                return Err(format!("`{tool} --version` does not run (set {variable})"));
            }
        }
        Ok(EnzymeTools {
            clang14: clang14.to_string(),
            opt14: opt14.to_string(),
            plugin: plugin.to_path_buf(),
        })
    }
}

/// The one edit Enzyme's anchor README makes to clang-14's textual IR (its `sed -E
/// '/^attributes #/s/ writeonly//g'`): LLVM 14's verifier rejects the `readnone` Enzyme adds
/// to calls of libm declarations whose attribute groups say `writeonly`. Only attribute
/// group lines change; every other line, and the line endings, stay as they are.
pub fn without_writeonly_attributes(ll: &str) -> String {
    ll.split_inclusive('\n')
        .map(|line| {
            if line.starts_with("attributes #") {
                line.replace(" writeonly", "")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// The first lines of a tool's error output worth showing in a table cell: the `error:`
/// line and its first note, joined.
fn error_summary(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let start = lines.iter().position(|l| l.contains("error")).unwrap_or(0);
    // "path/to/scratch.bc: error: ..." -> "error: ...": the scratch path changes every run.
    let picked: Vec<&str> = lines
        .iter()
        .skip(start)
        .take(2)
        .map(|l| l.find("error:").map_or(*l, |at| &l[at..]))
        .collect();
    if picked.is_empty() {
        "no error output".to_string()
    } else {
        picked.join(" / ")
    }
}

fn run_tool(tool: &str, command: &mut Command) -> Result<(), BuildError> {
    let output =
        command.output().map_err(|source| BuildError::Spawn { tool: tool.to_string(), source })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(BuildError::Failed {
            tool: tool.to_string(),
            message: error_summary(&String::from_utf8_lossy(&output.stderr)),
        })
    }
}

impl Toolchain {
    /// clang -O2 straight to an executable, with the AD calls compiled out.
    pub fn native_primal(&self, source: &Path, stem: &str) -> Result<PathBuf, BuildError> {
        let exe = self.work.join(format!("{stem}-native"));
        run_tool(
            &self.clang,
            Command::new(&self.clang)
                .arg("-O2")
                .arg("-DPRIMAL_ONLY")
                .arg(source)
                .arg("-lm")
                .arg("-o")
                .arg(&exe),
        )?;
        Ok(exe)
    }

    /// The clang that compiles `level`'s bitcode: clang-14 for the Enzyme comparison.
    fn clang_for(&self, level: Bitcode) -> Result<&str, BuildError> {
        if !level.is_clang14() {
            return Ok(&self.clang);
        }
        self.enzyme.as_ref().map(|e| e.clang14.as_str()).ok_or_else(|| BuildError::Failed {
            tool: "clang-14".into(),
            message: "the Enzyme comparison's tools were not found".into(),
        })
    }

    /// The bitcode adc builds from. `primal_only` compiles the AD calls out; the gradient
    /// bitcode reports each repetition's heap growth (`-DHEAP_METER`).
    pub fn bitcode(
        &self,
        source: &Path,
        stem: &str,
        level: Bitcode,
        primal_only: bool,
    ) -> Result<PathBuf, BuildError> {
        let clang = self.clang_for(level)?;
        let suffix = if primal_only { "-primal" } else { "" };
        let bc = self.work.join(format!("{stem}{suffix}-{}.bc", level.tag()));
        let mut command = Command::new(clang);
        command.args(level.clang_flags()).args(["-c", "-emit-llvm"]);
        command.arg(if primal_only { "-DPRIMAL_ONLY" } else { "-DHEAP_METER" });
        run_tool(clang, command.arg(source).arg("-o").arg(&bc))?;
        Ok(bc)
    }

    /// Enzyme's gradient, as its anchor README builds it: clang-14 -O2 textual IR (with
    /// `-DHEAP_METER`, like adc's gradient bitcode), the `writeonly` edit, opt-14 with the
    /// plugin, opt-14 -O2, then clang-14 -O2 links it with the heap meter when one is given.
    pub fn enzyme_build(
        &self,
        source: &Path,
        stem: &str,
        heap_meter: Option<&Path>,
    ) -> Result<PathBuf, BuildError> {
        let enzyme = self.enzyme.as_ref().ok_or_else(|| BuildError::Failed {
            tool: "enzyme".into(),
            message: "no Enzyme plugin".into(),
        })?;
        let ll = self.work.join(format!("{stem}-enzyme-in.ll"));
        let differentiated = self.work.join(format!("{stem}-enzyme.bc"));
        let optimized = self.work.join(format!("{stem}-enzyme-O2.bc"));
        let exe = self.work.join(format!("{stem}-enzyme"));
        run_tool(
            &enzyme.clang14,
            Command::new(&enzyme.clang14)
                .args(Bitcode::Clang14.clang_flags())
                .args(["-S", "-emit-llvm", "-DHEAP_METER"])
                .arg(source)
                .arg("-o")
                .arg(&ll),
        )?;
        let io_error = |e: std::io::Error| BuildError::Failed {
            tool: "adc-bench".into(),
            message: format!("{}: {e}", ll.display()),
        };
        let text = std::fs::read_to_string(&ll).map_err(io_error)?;
        std::fs::write(&ll, without_writeonly_attributes(&text)).map_err(io_error)?;
        run_tool(
            "opt-14 (Enzyme)",
            Command::new(&enzyme.opt14)
                .arg(&ll)
                .arg(format!("-load-pass-plugin={}", enzyme.plugin.display()))
                .arg("-passes=preserve-nvvm,enzyme")
                .arg("-o")
                .arg(&differentiated),
        )?;
        run_tool(
            &enzyme.opt14,
            Command::new(&enzyme.opt14).arg("-O2").arg(&differentiated).arg("-o").arg(&optimized),
        )?;
        let mut link = Command::new(&enzyme.clang14);
        link.arg("-O2").arg(&optimized);
        if let Some(meter) = heap_meter {
            link.arg(meter).arg(HEAP_METER_LINK_FLAG);
        }
        run_tool(&enzyme.clang14, link.arg("-lm").arg("-o").arg(&exe))?;
        Ok(exe)
    }

    /// Compiles bench/programs/heap_meter.c (natively: it is measuring, not measured).
    pub fn heap_meter(&self, source: &Path) -> Result<PathBuf, BuildError> {
        let object = self.work.join("heap_meter.o");
        run_tool(
            &self.clang,
            Command::new(&self.clang).args(["-O2", "-c"]).arg(source).arg("-o").arg(&object),
        )?;
        Ok(object)
    }

    /// `adc build <bc> [flags]` then `cc -lm`, with the heap meter when one is given;
    /// `tag` names the variant in file names.
    pub fn adc_build(
        &self,
        bc: &Path,
        stem: &str,
        tag: &str,
        flags: &[String],
        heap_meter: Option<&Path>,
    ) -> Result<PathBuf, BuildError> {
        let safe_tag: String =
            tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let object = self.work.join(format!("{stem}-{safe_tag}.o"));
        let exe = self.work.join(format!("{stem}-{safe_tag}"));
        run_tool(
            "adc",
            Command::new(&self.adc).arg("build").arg(bc).arg("-o").arg(&object).args(flags),
        )?;
        let mut link = Command::new(&self.cc);
        link.arg(&object);
        if let Some(meter) = heap_meter {
            link.arg(meter).arg(HEAP_METER_LINK_FLAG);
        }
        run_tool(&self.cc, link.arg("-lm").arg("-o").arg(&exe))?;
        Ok(exe)
    }

    /// The distinct pass names of adc's pre-AD and post-AD pipelines, in first-use order,
    /// read from `adc passes` (so the ablation follows the pipelines as they are).
    pub fn pipeline_passes(&self) -> Result<Vec<String>, BuildError> {
        let output = Command::new(&self.adc)
            .arg("passes")
            .output()
            .map_err(|source| BuildError::Spawn { tool: "adc".into(), source })?;
        if !output.status.success() {
            return Err(BuildError::Failed {
                tool: "adc passes".into(),
                message: error_summary(&String::from_utf8_lossy(&output.stderr)),
            });
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let mut passes: Vec<String> = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim_start();
            if !(trimmed.starts_with("pre-ad ") || trimmed.starts_with("post-ad ")) {
                continue;
            }
            let (Some(open), Some(close)) = (line.find('['), line.rfind(']')) else { continue };
            for name in line[open + 1..close].split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !passes.iter().any(|p| p == name) {
                    passes.push(name.to_string());
                }
            }
        }
        if passes.is_empty() {
            return Err(BuildError::Failed {
                tool: "adc passes".into(),
                message: "no pre-ad/post-ad pipeline lines in its output".into(),
            });
        }
        Ok(passes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writeonly_leaves_attribute_groups_only() {
        let ll = "declare double @exp(double) local_unnamed_addr #1\n\
                  define void @f(double* nocapture writeonly %out) #0 {\n\
                  }\n\
                  attributes #0 = { nofree nosync writeonly \"frame-pointer\"=\"none\" }\n\
                  attributes #1 = { mustprogress nofree nounwind willreturn writeonly }\n\
                  attributes #2 = { argmemonly nofree nounwind willreturn writeonly }\r\n\
                  !0 = !{!\"attributes # writeonly\"}";
        let fixed = without_writeonly_attributes(ll);
        assert!(fixed.contains("double* nocapture writeonly %out"), "parameters keep it: {fixed}");
        assert!(fixed.contains("attributes #0 = { nofree nosync \"frame-pointer\"=\"none\" }\n"));
        assert!(fixed.contains("attributes #1 = { mustprogress nofree nounwind willreturn }\n"));
        assert!(fixed.contains("attributes #2 = { argmemonly nofree nounwind willreturn }\r\n"));
        assert!(fixed.ends_with("!0 = !{!\"attributes # writeonly\"}"), "no newline added");
        assert_eq!(without_writeonly_attributes(&fixed), fixed, "a second edit changes nothing");
    }

    #[test]
    fn enzyme_is_skipped_with_a_reason() {
        let no_plugin = EnzymeTools::find(None, "clang-14", "opt-14").unwrap_err();
        assert!(no_plugin.contains("--enzyme"), "{no_plugin}");
        let missing = EnzymeTools::find(
            Some(Path::new("/nonexistent/LLVMEnzyme-14.so")),
            "clang-14",
            "opt-14",
        )
        .unwrap_err();
        assert!(
            missing.contains("/nonexistent/LLVMEnzyme-14.so") && missing.contains("does not exist")
        );
        // An existing file but a tool that cannot start: the variable to set is named.
        let exists = std::env::current_exe().expect("test binary");
        let no_tool =
            EnzymeTools::find(Some(&exists), "/nonexistent/clang-14", "opt-14").unwrap_err();
        assert!(no_tool.contains("CLANG14"), "{no_tool}");
    }

    #[test]
    fn error_summary_keeps_enzymes_error_line() {
        let stderr = "warning: ignored\nerror: <unknown>:0:0: in function preprocess_integrate: Enzyme: No create nofree of unknown value\nvoid (double*)* %0\n";
        let summary = error_summary(stderr);
        assert!(summary.starts_with("error: <unknown>:0:0: in function preprocess_integrate"));
        assert!(summary.contains("No create nofree of unknown value"), "{summary}");
    }
}
