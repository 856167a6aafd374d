//! adc-ad: automatic differentiation over adc-ir: Enzyme C API lowering, type-tree and
//! activity analyses, the derivative-rule table, reverse and forward mode, and cache
//! planning.
//!
//! The contract between the pieces: a [`DiffRequest`] names a function and the activity
//! of each argument and of the return; synthesis adds the derivative function to the
//! module (memoised per request) and reports failures as [`AdError`]s that name the
//! instruction and its source line.

pub mod activity;
pub mod cache;
pub mod callees;
pub mod custom;
pub mod differentiator;
pub mod enzyme_api;
pub mod error;
pub mod forward;
pub mod request;
pub mod reverse;
pub mod rules;
pub mod toggles;
pub mod typetree;

pub use differentiator::{Differentiator, DifferentiatorOptions};
pub use enzyme_api::{lower_enzyme_calls, LoweringReport};
pub use error::{AdError, AdErrorKind, Site};
pub use request::{ArgActivity, DiffMode, DiffRequest, RetActivity, SplitFunction, Synthesize};
