//! End-to-end PTX tests: every `tests/cuda/*.cu` (but the `grad_*` kernels, whose API
//! calls need AD first) is compiled by clang-19 to nvptx
//! bitcode, imported, verified, emitted for sm_80 and sm_90, and assembled by `ptxas`.
//! Without clang-19 or ptxas (`scripts/install-deps.sh` installs it into `.venv`), the
//! test prints why and skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use adc_ptx::{emit_module, Arch, PtxOptions};

mod common;
use common::{find_ptxas, ptxas, repo_root};

fn have_clang() -> bool {
    Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("adc-ptx-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn compile_cuda(source: &Path, out: &Path) -> Result<(), String> {
    let output = Command::new("clang-19")
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
        .args(["-nocudainc", "-nocudalib", "-O2", "-emit-llvm", "-c"])
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn cuda_sources_assemble_with_ptxas() {
    if !have_clang() {
        println!("SKIPPED: clang-19 not found; run scripts/install-deps.sh");
        return;
    }
    let Some(ptxas_path) = find_ptxas() else {
        println!("SKIPPED: ptxas not found; run scripts/install-deps.sh (creates .venv)");
        return;
    };
    let mut sources: Vec<PathBuf> = std::fs::read_dir(repo_root().join("tests/cuda"))
        .expect("tests/cuda exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        // The gradient kernels call `__enzyme_autodiff_*` with a function address, which
        // only AD lowers: tests/cuda_kernels.rs emits and assembles them after `adc build`.
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("grad_")))
        .collect();
    sources.sort();
    assert!(sources.len() >= 8, "expected the eight CUDA test sources, found {sources:?}");
    let scratch = scratch_dir();
    let mut failures = Vec::new();
    for source in &sources {
        let stem = source.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let bitcode = scratch.join(format!("{stem}.bc"));
        if let Err(e) = compile_cuda(source, &bitcode) {
            failures.push(format!("{stem}: clang failed:\n{e}"));
            continue;
        }
        let module = match adc_frontend_llvm::import_bitcode_file(&bitcode) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{stem}: import failed: {e}"));
                continue;
            }
        };
        if let Err(d) = adc_ir::verify::verify_module(&module) {
            failures.push(format!("{stem}: imported module does not verify:\n{d}"));
            continue;
        }
        for arch in [Arch::Sm80, Arch::Sm90] {
            let options = PtxOptions { arch, ..PtxOptions::default() };
            let text = match emit_module(&module, &options) {
                Ok(text) => text,
                Err(e) => {
                    failures.push(format!("{stem} ({}): emit failed: {e}", arch.name()));
                    continue;
                }
            };
            let ptx_file = scratch.join(format!("{stem}.{}.ptx", arch.name()));
            std::fs::write(&ptx_file, &text).expect("write ptx");
            match ptxas(&ptxas_path, &ptx_file, arch) {
                Ok(()) => println!("ok: {stem} {}", arch.name()),
                Err(e) => failures.push(format!(
                    "{stem} ({}): ptxas rejected {}:\n{e}",
                    arch.name(),
                    ptx_file.display()
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
