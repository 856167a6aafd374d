//! Several bitcode files as one module: LLVM's own linker (`LLVMLinkModules2`) merges them
//! in one context, with LLVM's rules for symbols (a definition replaces declarations,
//! `linkonce_odr` copies collapse, internal symbols are renamed apart, two strong
//! definitions of one name are an error). This is what makes a program whose
//! `__enzyme_autodiff` call and differentiated function sit in different translation
//! units importable, as Enzyme's link-time plugin does.

use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

use llvm_sys::core::*;
use llvm_sys::prelude::*;

use crate::error::ImportError;
use crate::extras::{diagnostic_handler, parse_in_context};

/// Links `inputs` (two or more bitcode files) and writes the result to `output`.
pub fn link_bitcode_files(inputs: &[PathBuf], output: &Path) -> Result<(), ImportError> {
    let Some((first, rest)) = inputs.split_first() else {
        return Err(ImportError::Link { reason: "no input to link".into() });
    };
    // SAFETY: the modules live in `context`; each source module is consumed by
    // `LLVMLinkModules2` (linked or not), the destination is disposed of before the
    // context, and the diagnostic handler only writes into `message`, which outlives them.
    unsafe {
        let context = LLVMContextCreate();
        let mut message: Option<String> = None;
        LLVMContextSetDiagnosticHandler(
            context,
            Some(diagnostic_handler),
            &mut message as *mut Option<String> as *mut c_void,
        );
        let result = link_into(context, first, rest, output, &mut message);
        LLVMContextDispose(context);
        result
    }
}

/// # Safety
/// `context` must be live, with [`diagnostic_handler`] writing into `message`.
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
