//! The `adc` command-line tool's library: the `adc build` AD pipeline, the filetest runner
//! and the textual invocation syntax shared by `adc test`, `adc interp` and `cargo test`.

pub mod analyze;
pub mod build;
pub mod filetest;
pub mod gradcheck;
pub mod invocation;
pub mod native;
pub mod pass_args;
pub mod phases;
pub mod tangentcheck;
