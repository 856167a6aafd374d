//! adc-ir: the intermediate representation every other adc crate reads and writes.
//!
//! SSA with block parameters instead of phis; typed `u32` entities; a `Function` is its
//! signature, a data-flow graph (what exists) and a layout (in which order). Memory is
//! byte-addressed and pointer arithmetic is an explicit byte offset (`ptradd`). The crate
//! also holds the text form (parser and printer), the verifier, the reference interpreter
//! and the diagnostics shared by them.

pub mod builder;
pub mod constant;
pub mod dfg;
pub mod diagnostic;
pub mod dominance;
pub mod entities;
pub mod examples;
pub mod function;
pub mod heap;
pub mod instructions;
pub mod interp;
pub mod layout;
pub mod module;
pub mod nvvm;
pub mod text;
pub mod types;
pub mod varargs;
pub mod verify;

pub use constant::{Constant, Symbol};
pub use dfg::{DataFlowGraph, DebugLoc, TextSpan, ValueDef};
pub use diagnostic::{Diagnostic, Diagnostics};
pub use entities::{Block, FuncId, GlobalId, Inst, Value};
pub use function::{Function, Linkage, Signature};
pub use heap::{Allocation, HeapFunction};
pub use instructions::*;
pub use layout::Layout;
pub use module::{Global, Module, StartupFunction, StartupKind};
pub use types::{StructType, Type};

/// Hash maps and sets for the hot tables of analyses and passes (dominator trees, the
/// verifier, sccp, gvn, mem2reg), keyed by entities: std's SipHash took 16% of a release
/// build's instructions. Output never depends on iteration order (std's is random per
/// process), so the hasher changes no result.
pub use rustc_hash::{FxHashMap, FxHashSet};
