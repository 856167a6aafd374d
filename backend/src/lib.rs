//! adc-backend: lowers adc-ir to machine code through Cranelift for the host ISA: object
//! files that keep the input's symbol names and linkage (`object.rs`), and a JIT for tests
//! and `adc interp --jit` (`jit.rs`).
//!
//! - `abi`: adc types as Cranelift leaves, signatures;
//! - `lower`: one function (control flow, memory, calls, aggregates);
//! - `ops`: per-lane arithmetic, casts, reductions, atomics;
//! - `data`: global initializers;
//! - `module`: the module driver shared by objects and the JIT (declarations, data,
//!   variadic-call thunks, function definitions).

pub mod abi;
mod data;
pub mod jit;
mod lower;
mod module;
pub mod object;
mod ops;

use adc_ir::Diagnostic;

pub use jit::{Jit, JitValue};
pub use object::compile_object;

/// The error of every backend entry point: what failed, naming the adc function.
pub type Result<T> = std::result::Result<T, Diagnostic>;

/// Builds the host's Cranelift ISA. `pic` is true for objects, false for the JIT.
pub fn host_isa(pic: bool) -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>> {
    use cranelift_codegen::settings::{self, Configurable};
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, name: &str, value: &str| {
        flags
            .set(name, value)
            .map_err(|e| Diagnostic::new(format!("cranelift setting {name}: {e}")))
    };
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "is_pic", if pic { "true" } else { "false" })?;
    set(&mut flags, "enable_llvm_abi_extensions", "true")?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    set(&mut flags, "preserve_frame_pointers", "true")?;
    let isa = cranelift_native::builder()
        .map_err(|e| Diagnostic::new(format!("unsupported host: {e}")))?;
    isa.finish(settings::Flags::new(flags))
        .map_err(|e| Diagnostic::new(format!("cannot configure the host ISA: {e}")))
}
