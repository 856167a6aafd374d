//! Helpers shared by the PTX integration tests: where the repository and ptxas are, and
//! running ptxas on a file.

use std::path::{Path, PathBuf};
use std::process::Command;

use adc_ptx::Arch;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ptx/ has a parent").to_path_buf()
}

/// `ADC_PTXAS`, the repository's `.venv`, or `ptxas` on the PATH.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ADC_PTXAS") {
        return Some(PathBuf::from(path));
    }
    let venv_lib = repo_root().join(".venv/lib");
    if let Ok(entries) = std::fs::read_dir(&venv_lib) {
        for entry in entries.flatten() {
            let candidate = entry.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let on_path = Command::new("ptxas").arg("--version").output();
    on_path.ok().filter(|o| o.status.success()).map(|_| PathBuf::from("ptxas"))
}

/// Assembles `ptx_file`; a file with `.extern .func` declarations (libdevice calls) is
/// compiled as relocatable code (`--compile-only`), since the callee is linked later.
pub fn ptxas(ptxas: &Path, ptx_file: &Path, arch: Arch) -> Result<(), String> {
    let text = std::fs::read_to_string(ptx_file).map_err(|e| e.to_string())?;
    let mut command = Command::new(ptxas);
    if text.contains(".extern .func") {
        command.arg("--compile-only");
    }
    let output = command
        .args(["--gpu-name", arch.name(), "-o"])
        .arg(ptx_file.with_extension(format!("{}.cubin", arch.name())))
        .arg(ptx_file)
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}
