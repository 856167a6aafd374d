//! What the CUDA test binaries (`cuda_kernels`, `gpu_device`, `libdevice_trig`) share:
//! where the repository, clang-19, ptxas and libdevice are, the buffer element types, and
//! `tests/cuda/<file>.cu` through clang-19 into adc IR (and through `adc build`).
//!
//! Each binary includes this file as a module and uses a part of it, hence the
//! `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use adc::build::{build, BuildOptions, BuildOutput, Emit};
use adc::pass_args::PassArgs;
use adc_ir::Module;
use adc_ir::Type;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn have_clang() -> bool {
    Command::new("clang-19").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `ADC_PTXAS` or the repository's `.venv` (what scripts/install-deps.sh creates).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ADC_PTXAS") {
        return Some(PathBuf::from(path));
    }
    let venv_lib = repo_root().join(".venv/lib");
    std::fs::read_dir(venv_lib).into_iter().flatten().flatten().find_map(|entry| {
        let candidate = entry.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
        candidate.is_file().then_some(candidate)
    })
}

/// libdevice (installed beside ptxas) as adc imports it, with the functions the importer
/// skipped (and why); `None` without ptxas or libdevice.
pub fn import_libdevice() -> Option<(Module, Vec<String>)> {
    let path = adc_ptx::libdevice::find_libdevice(&find_ptxas()?)?;
    let (module, skipped) = adc_frontend_llvm::import_library_bitcode(&path).expect("import");
    Some((module, skipped.iter().map(|e| e.to_string()).collect()))
}

/// `tests/cuda/<file>.cu` compiled for the device (sm_80, -O2) and imported by adc.
pub fn import_cuda(file: &str, scratch: &Path) -> Module {
    let source = repo_root().join("tests/cuda").join(format!("{file}.cu"));
    let bitcode = scratch.join(format!("{file}.bc"));
    let output = Command::new("clang-19")
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
        .args(["-nocudainc", "-nocudalib", "-O2", "-emit-llvm", "-c"])
        .arg(&source)
        .arg("-o")
        .arg(&bitcode)
        .output()
        .expect("run clang-19");
    assert!(output.status.success(), "clang-19: {}", String::from_utf8_lossy(&output.stderr));
    adc_frontend_llvm::import_bitcode_file(&bitcode).expect("import")
}

/// `tests/cuda/<file>.cu` after `adc build` (pre-AD pipeline, derivatives, post-AD
/// pipeline), as IR, with what the build reports.
pub fn build_cuda(file: &str, scratch: &Path) -> (Module, BuildOutput) {
    let mut module = import_cuda(file, scratch);
    let options = BuildOptions {
        pass_args: PassArgs::default(),
        ad_before_opt: false,
        emit: Emit::Ir,
        backend: Default::default(),
        flush_denormals: false,
        specialize_args: true,
        scalarize_vectors: true,
        devectorize_loops: true,
    };
    let mut synth = adc_ad::Differentiator::default();
    match build(&mut module, file, &options, &mut synth) {
        Ok(output) => (module, output),
        Err(e) => panic!("adc build of {file}.cu failed:\n{e}"),
    }
}

/// Assembles the PTX file `ptx` for `arch` with ptxas as a complete program (no
/// `--compile-only`: every function must be defined); `Err` holds ptxas's complaint.
pub fn assemble(ptxas: &Path, ptx: &Path, arch: adc_ptx::Arch) -> Result<(), String> {
    let out = Command::new(ptxas)
        .args(["--gpu-name", arch.name(), "-o"])
        .arg(ptx.with_extension("cubin"))
        .arg(ptx)
        .output()
        .expect("run ptxas");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Distance in units in the last place between two doubles of the same sign.
pub fn ulps64(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
}

/// Element type of a kernel buffer.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Elem {
    F32,
    F64,
    I32,
}

impl Elem {
    pub fn ty(self) -> Type {
        match self {
            Elem::F32 => Type::F32,
            Elem::F64 => Type::F64,
            Elem::I32 => Type::I32,
        }
    }

    pub fn size(self) -> usize {
        if self == Elem::F64 {
            8
        } else {
            4
        }
    }
}
