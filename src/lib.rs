//! The `adc` command-line tool's library: the filetest runner and the textual invocation
//! syntax shared by `adc test`, `adc interp` and `cargo test --test filetests`.

pub mod analyze;
pub mod filetest;
pub mod gradcheck;
pub mod invocation;
pub mod native;
pub mod pass_args;
pub mod tangentcheck;
