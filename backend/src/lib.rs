//! adc-backend: lowers adc-ir to machine code through Cranelift for the host ISA: object
//! files that keep the input's symbol names and linkage (`object.rs`), and a JIT for tests
//! and `adc interp --jit` (`jit.rs`).
//!
//! - `abi`: adc types as Cranelift leaves, signatures;
//! - `lower`: one function (control flow, memory, calls, aggregates);
//! - `ops`: per-lane arithmetic, casts, reductions, atomics;
//! - `simd`: float vectors as 128-bit SIMD values, and the conversions to and from the
//!   lane form that every operation without a SIMD lowering falls back to;
//! - `data`: global initializers;
//! - `module`: the module driver shared by objects and the JIT (declarations, data,
//!   variadic-call thunks, function definitions);
//! - `varargs`: variadic function definitions (an entry thunk that saves the argument
//!   registers, `va_start`/`va_copy`/`va_end`).

pub mod abi;
mod data;
pub mod jit;
mod lower;
mod module;
pub mod object;
mod ops;
mod simd;
mod varargs;

use adc_ir::Diagnostic;

pub use jit::{Jit, JitValue};
pub use module::{FLUSH_ENTER, FLUSH_EXIT};
pub use object::{compile_object, compile_object_with};

/// What the backend is asked to do, recorded by the callers' reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendOptions {
    /// Lower float vectors to 128-bit SIMD values (`abi.rs`); off, every vector is lowered
    /// lane by lane (the ablation point).
    pub simd: bool,
    /// Threads that compile functions with Cranelift at once (objects only; the JIT
    /// compiles one at a time): 0 picks the machine's available parallelism, 1 compiles
    /// sequentially. The object is the same whatever the number.
    pub threads: usize,
}

impl Default for BackendOptions {
    fn default() -> Self {
        BackendOptions { simd: true, threads: 0 }
    }
}

impl BackendOptions {
    /// The defaults with `ADC_SIMD` applied: `0`/`off` turns SIMD off, `1`/`on` on; and
    /// `ADC_CODEGEN_THREADS=N` ([`BackendOptions::threads`]); unset gives the defaults. Read by the command line and the test harness, never here.
    pub fn from_env() -> std::result::Result<BackendOptions, String> {
        let mut options = BackendOptions::default();
        if let Ok(text) = std::env::var("ADC_SIMD") {
            options.simd = match text.trim() {
                "0" | "off" => false,
                "1" | "on" | "" => true,
                other => return Err(format!("ADC_SIMD: `{other}` is not 0, 1, off or on")),
            };
        }
        if let Ok(text) = std::env::var("ADC_CODEGEN_THREADS") {
            options.threads = text.trim().parse().map_err(|_| {
                format!("ADC_CODEGEN_THREADS: `{text}` is not a number of threads (0: all cores)")
            })?;
        }
        Ok(options)
    }

    /// How many threads compile `functions` function bodies: never more than there are
    /// bodies, and one where there is a single body (a thread would only add its start).
    pub fn codegen_threads(&self, functions: usize) -> usize {
        let wanted = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        wanted.min(functions).max(1)
    }
}

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
    // Cranelift's IR verifier checks the lowering's output before every compile: 5.5% of
    // a release build's instructions on the generated modules of the compile-time table.
    // Debug builds (every test) keep it, as rustc_codegen_cranelift does; it only checks,
    // so the code is the same either way.
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    let isa = cranelift_native::builder()
        .map_err(|e| Diagnostic::new(format!("unsupported host: {e}")))?;
    isa.finish(settings::Flags::new(flags))
        .map_err(|e| Diagnostic::new(format!("cannot configure the host ISA: {e}")))
}
