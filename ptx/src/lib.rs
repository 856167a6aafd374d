//! adc-ptx: emits PTX text (kernels as `.entry`, device functions as `.func`) from adc-ir
//! for NVIDIA GPUs.
//!
//! The emitter is hand-written and works on verified IR: every SSA value gets a virtual
//! register of its type's class (`%p` predicates, `%rs` 8/16-bit, `%r` 32-bit, `%rd`
//! 64-bit and pointers, `%f`/`%fd` floats) and ptxas does register allocation. Block
//! parameters become moves on the incoming edges. What PTX (or this emitter) cannot
//! express is a `PtxError` naming the function and the instruction, never a panic.
//!
//! Split by concern: `module` (header, globals, prototypes), `function` (signature,
//! parameters, blocks, edges), `select` (instruction selection), `registers` (register
//! classes and naming).

mod address_spaces;
mod aggregates;
mod function;
pub mod libdevice;
mod module;
mod nvvm_math;
mod registers;
mod select;

use adc_ir::Module;

/// The GPU architecture the PTX targets (`.target`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Arch {
    #[default]
    Sm80,
    Sm90,
}

impl Arch {
    /// The name used by `.target` and `ptxas --gpu-name`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm90 => "sm_90",
        }
    }

    pub fn from_name(text: &str) -> Option<Arch> {
        match text {
            "sm_80" => Some(Arch::Sm80),
            "sm_90" => Some(Arch::Sm90),
            _ => None,
        }
    }

    /// The lowest PTX ISA version that knows this architecture.
    fn ptx_version(self) -> &'static str {
        match self {
            Arch::Sm80 => "7.0",
            Arch::Sm90 => "7.8",
        }
    }
}

/// What the emitter produces; passed down, never global.
#[derive(Clone, Debug, Default)]
pub struct PtxOptions {
    pub arch: Arch,
    /// Write each IR instruction as a `//` comment before its PTX (for reading the output).
    pub annotate: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PtxError {
    /// An instruction that PTX (or this emitter) cannot express.
    #[error("in function @{function}: cannot emit `{inst}` as PTX: {reason}")]
    Unsupported { function: String, inst: String, reason: String },
    /// A parameter or return type without a PTX register class.
    #[error("in function @{function}: {reason}")]
    Signature { function: String, reason: String },
    /// A global that cannot be placed in a PTX state space.
    #[error("global @{global}: {reason}")]
    Global { global: String, reason: String },
}

/// Emits the whole module as one PTX text: header, globals, function prototypes, then
/// the bodies of the defined functions. Declarations of `llvm.nvvm.*` intrinsics are
/// not emitted (their calls become instructions); other declarations (libdevice `__nv_*`
/// functions, say) become `.extern .func` prototypes that must be linked in later.
pub fn emit_module(module: &Module, options: &PtxOptions) -> Result<String, PtxError> {
    module::emit(module, options)
}
