//! adc-frontend-llvm: imports LLVM bitcode (via the `llvm-ir` crate, LLVM 19) into an adc-ir
//! `Module`. It is the only crate that knows LLVM; version-specific details stay here.
//!
//! `import_bitcode_file` is the complete path: it checks and parses the file with the LLVM
//! C API (to get LLVM's own error message and the facts llvm-ir 0.11 does not expose:
//! fast-math flags, `disjoint`, TBAA tags, kernel annotations), rewrites constant GEPs into
//! byte offsets, then reads it (rewritten) through llvm-ir and translates. `import_module`
//! translates an llvm-ir module alone; it then lacks those facts (see `Extras`).

mod byte_geps;
mod calls;
mod constants;
mod error;
mod extras;
mod function;
mod globals;
mod inline_asm;
mod instructions;
mod intrinsics;
mod link;
mod odd_ints;
mod types;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use adc_ir::Module;

pub use error::ImportError;
pub use extras::{Extras, InstExtra};
pub use link::link_bitcode_files;

/// Reads a bitcode file (clang 13..19) and translates it.
pub fn import_bitcode_file(path: &Path) -> Result<Module, ImportError> {
    let (extras, llvm) = read_module(path)?;
    import_module_with(&llvm, &extras)
}

/// The extras and the llvm-ir module of a bitcode file; llvm-ir reads the module after the
/// C API has rewritten its constant GEPs into bytes (`byte_geps`).
fn read_module(path: &Path) -> Result<(Extras, llvm_ir::Module), ImportError> {
    let rewritten = temporary_bitcode_path("bytes");
    let (extras, changed) = extras::read_extras(path, &rewritten)?;
    if !changed {
        return Ok((extras, parse_bitcode(path)?));
    }
    let llvm = parse_bitcode(&rewritten).map_err(|e| match e {
        ImportError::BadBitcode { reason, .. } => {
            ImportError::BadBitcode { path: path.to_path_buf(), reason }
        }
        ImportError::LlvmIr { reason, .. } => {
            ImportError::LlvmIr { path: path.to_path_buf(), reason }
        }
        other => other,
    });
    let _ = std::fs::remove_file(&rewritten);
    Ok((extras, llvm?))
}

/// A fresh path in the temporary directory for a bitcode file adc writes and reads back.
fn temporary_bitcode_path(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "adc-{what}-{}-{}.bc",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ))
}

/// Reads one bitcode file, or links several (LLVM's linker, as for LTO: one translation
/// unit may differentiate a function another defines) and translates the result.
pub fn import_bitcode_files(paths: &[PathBuf]) -> Result<Module, ImportError> {
    if let [path] = paths {
        return import_bitcode_file(path);
    }
    let linked = temporary_bitcode_path("linked");
    let result = link_bitcode_files(paths, &linked).and_then(|()| import_bitcode_file(&linked));
    let _ = std::fs::remove_file(&linked);
    result
}

/// Parses a bitcode file with llvm-ir, which panics (instead of returning errors) on some
/// inputs it does not model.
fn parse_bitcode(path: &Path) -> Result<llvm_ir::Module, ImportError> {
    match catch_unwind(AssertUnwindSafe(|| llvm_ir::Module::from_bc_path(path))) {
        Ok(Ok(module)) => Ok(module),
        Ok(Err(reason)) => Err(ImportError::BadBitcode { path: path.to_path_buf(), reason }),
        Err(panic) => {
            Err(ImportError::LlvmIr { path: path.to_path_buf(), reason: panic_message(&panic) })
        }
    }
}

/// Reads a library's bitcode (such as CUDA's `libdevice.10.bc`) as far as adc can: a
/// function whose body uses something the importer does not support (libdevice's
/// half-precision conversions need an `f16` type adc does not have) stays a declaration,
/// and its error is returned beside the module.
pub fn import_library_bitcode(path: &Path) -> Result<(Module, Vec<ImportError>), ImportError> {
    let (extras, llvm) = read_module(path)?;
    guarded(path, || globals::translate_module_with(&llvm, &extras, true))
}

/// Translates an llvm-ir module without C-API extras: no fast-math flags, `disjoint` or
/// TBAA tags, and constant GEPs only with all-zero indices.
pub fn import_module(llvm: &llvm_ir::Module) -> Result<Module, ImportError> {
    import_module_with(llvm, &Extras::default())
}

/// Translates an llvm-ir module with the facts collected from the same bitcode.
pub fn import_module_with(llvm: &llvm_ir::Module, extras: &Extras) -> Result<Module, ImportError> {
    guarded(Path::new(&llvm.name), || globals::translate_module(llvm, extras))
}

/// Runs a translation, turning a panic (a bug in adc) into an error naming the input.
fn guarded<T>(
    path: &Path,
    translate: impl FnOnce() -> Result<T, ImportError>,
) -> Result<T, ImportError> {
    catch_unwind(AssertUnwindSafe(translate)).unwrap_or_else(|panic| {
        Err(ImportError::LlvmIr {
            path: path.to_path_buf(),
            reason: format!("internal error while translating: {}", panic_message(&panic)),
        })
    })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.lines().next().unwrap_or("").to_string()
    } else {
        "panic".to_string()
    }
}
