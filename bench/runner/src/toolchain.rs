//! Building the benchmark executables: the native primal (clang -O2), the adc primals, and
//! one adc gradient build per variant, linked with the heap meter. A failed build keeps
//! the tool's own error line so the report can show why.

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

    /// The bitcode adc builds from. `primal_only` compiles the AD calls out; the gradient
    /// bitcode reports each repetition's heap growth (`-DHEAP_METER`).
    pub fn bitcode(
        &self,
        source: &Path,
        stem: &str,
        level: Bitcode,
        primal_only: bool,
    ) -> Result<PathBuf, BuildError> {
        let suffix = if primal_only { "-primal" } else { "" };
        let bc = self.work.join(format!("{stem}{suffix}-{}.bc", level.tag()));
        let mut command = Command::new(&self.clang);
        command.args(level.clang_flags()).args(["-c", "-emit-llvm"]);
        command.arg(if primal_only { "-DPRIMAL_ONLY" } else { "-DHEAP_METER" });
        run_tool(&self.clang, command.arg(source).arg("-o").arg(&bc))?;
        Ok(bc)
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
