//! Import errors: what could not be read or translated, with enough context (function,
//! offending LLVM instruction as text, reason) to act on, and their conversion to
//! `adc_ir::Diagnostic` for rendering at the edge.

use std::path::PathBuf;

use adc_ir::Diagnostic;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{} is not an LLVM bitcode file", path.display())]
    NotBitcode { path: PathBuf },
    #[error("cannot parse {}: {reason} (truncated, or written by an LLVM newer than 19?)", path.display())]
    BadBitcode { path: PathBuf, reason: String },
    /// The `llvm-ir` crate gave up on the module (it panics on a few constructs).
    #[error("llvm-ir could not read {}: {reason}", path.display())]
    LlvmIr { path: PathBuf, reason: String },
    /// An instruction (or terminator) of a function that adc cannot represent.
    #[error("in function @{function}: cannot import `{inst}`: {reason}")]
    Unsupported { function: String, inst: String, reason: String },
    /// A function-level problem (signature, attributes, varargs definitions).
    #[error("in function @{function}: {reason}")]
    Function { function: String, reason: String },
    /// A global variable, alias or ifunc that adc cannot represent.
    #[error("global @{global}: {reason}")]
    Global { global: String, reason: String },
    /// Several inputs that LLVM's linker could not merge (two definitions of one symbol).
    #[error("cannot link the inputs: {reason}")]
    Link { reason: String },
}

impl ImportError {
    /// The error as a diagnostic: a one-line message, the LLVM text as the label and the
    /// function as a note, so that the CLI renders it like any other adc error.
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            ImportError::Unsupported { function, inst, reason } => {
                Diagnostic::new(format!("cannot import instruction in @{function}: {reason}"))
                    .with_label(format!("LLVM: {inst}"))
                    .with_note(format!("in function @{function}"))
            }
            ImportError::Function { function, .. } => {
                Diagnostic::new(self.to_string()).with_note(format!("in function @{function}"))
            }
            other => Diagnostic::new(other.to_string()),
        }
    }
}

impl From<ImportError> for Diagnostic {
    fn from(error: ImportError) -> Diagnostic {
        error.to_diagnostic()
    }
}
