//! Several bitcode files as one module: LLVM's own linker (`LLVMLinkModules2`) merges them
//! in one context, with LLVM's rules for symbols (a definition replaces declarations,
//! `linkonce_odr` copies collapse, internal symbols are renamed apart, two strong
//! definitions of one name are an error). This is what makes a program whose
//! `__enzyme_autodiff` call and differentiated function sit in different translation
//! units importable, as Enzyme's link-time plugin does.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use llvm_sys::core::*;
use llvm_sys::prelude::*;

use crate::error::ImportError;
use crate::extras::{parse_in_context, with_context};

/// Links `inputs` (two or more bitcode files) and writes the result to `output`.
pub fn link_bitcode_files(inputs: &[PathBuf], output: &Path) -> Result<(), ImportError> {
    let Some((first, rest)) = inputs.split_first() else {
        return Err(ImportError::Link { reason: "no input to link".into() });
    };
    // SAFETY: the modules live in the context; each source module is consumed by
    // `LLVMLinkModules2` (linked or not) and the destination is disposed of before the
    // context.
    with_context(|context, message| unsafe { link_into(context, first, rest, output, message) })
}

/// # Safety
/// `context` must be live, with its diagnostics going to `message` ([`with_context`]).
unsafe fn link_into(
    context: LLVMContextRef,
    first: &Path,
    rest: &[PathBuf],
    output: &Path,
    message: &mut Option<String>,
) -> Result<(), ImportError> {
    let destination = parse_in_context(context, first, message)?;
    for path in rest {
        let source = match parse_in_context(context, path, message) {
            Ok(module) => module,
            Err(e) => {
                LLVMDisposeModule(destination);
                return Err(e);
            }
        };
        if llvm_sys::linker::LLVMLinkModules2(destination, source) != 0 {
            LLVMDisposeModule(destination);
            let reason = message.take().unwrap_or_else(|| "the linker failed".into());
            return Err(ImportError::Link {
                reason: format!("linking {}: {reason}", path.display()),
            });
        }
    }
    let written = CString::new(output.as_os_str().as_encoded_bytes())
        .map(|c| llvm_sys::bit_writer::LLVMWriteBitcodeToFile(destination, c.as_ptr()) == 0)
        .unwrap_or(false);
    LLVMDisposeModule(destination);
    match written {
        true => Ok(()),
        false => Err(ImportError::Link {
            reason: format!("cannot write the linked module to {}", output.display()),
        }),
    }
}
