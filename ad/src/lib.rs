//! adc-ad: automatic differentiation over adc-ir: Enzyme C API lowering, type-tree and
//! activity analyses, the derivative-rule table, reverse and forward mode, and cache
//! planning.
//!
//! The contract between the pieces: a [`DiffRequest`] names a function and the activity
//! of each argument and of the return; synthesis adds the derivative function to the
//! module (memoised per request) and reports failures as [`AdError`]s that name the
//! instruction and its source line.
//!
//! The modules form layers; each uses only its own layer and those below it, and no two
//! modules import each other in a cycle (`tests/layers.rs` checks both on the sources):
//!
//! ```text
//!  Enzyme API lowering   enzyme_api        call sites -> requests, results back in place
//!          |
//!  orchestration         differentiator    memoization per request, split functions,
//!          |                               runtime declarations, custom-rule wrappers
//!  synthesis             reverse  forward  build derivative functions
//!          |
//!  planning              cache             CachePlan: what the reverse pass recomputes,
//!          |                               stores in slots or tapes (a value; reverse/
//!          |                               carries it out)
//!  analyses              activity typetree facts computed from the IR: activity, type
//!          |             callees  custom   trees, callee facts, registered derivatives,
//!          |             thread_sharing    GPU loads private to their thread
//!  rules                 rules             the derivative table (data)
//!          |
//!  vocabulary            request error toggles   types every layer speaks
//! ```
//!
//! Analyses and the plan are plain values computed from the primal (as Cranelift's
//! `DominatorTree::compute` or rustc's dataflow results are), so a change to the
//! synthesis state cannot ripple into them, and each can be tested on a small function.

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
pub mod thread_sharing;
pub mod toggles;
pub mod typetree;

pub use differentiator::{Differentiator, DifferentiatorOptions};
pub use enzyme_api::{lower_enzyme_calls, LoweringReport};
pub use error::{AdError, AdErrorKind, Site};
pub use request::{ArgActivity, DiffMode, DiffRequest, RetActivity, SplitFunction, Synthesize};
