//! Differentiating vectorized functions as scalar code (`scalarize-vectors`), before the
//! pre-AD pipeline.
//!
//! clang -O2 vectorizes loops by default, so the functions users differentiate arrive
//! with `<2 x f64>` loads, shuffles and reductions. Reverse mode of vector code keeps
//! vector tapes and the adjoints of every shuffle and lane move; on the GMM benchmark that
//! took 1.6x the time of the gradient of the same source compiled without vectorization
//! (Enzyme's time is the same either way). The API call is therefore rewritten to
//! differentiate a copy in which every vector is split into its lanes
//! (`adc_passes::scalarize`), named `<f>.scalar`; the primal keeps its vectors, and the
//! post-AD `vectorize` pass packs simple loops of the derivative again.
//!
//! A function is copied only when it computes with float vectors and every vector in it
//! has a lane-wise form; otherwise the call differentiates it as it is, vectors and all.
//! Split-mode entry points are left alone (the augmented forward and the reverse call
//! must name the same function), as are functions with a registered custom derivative.

use std::collections::HashMap;

use adc_ir::{FuncId, Linkage, Module};

use super::specialize::point_call_at;
use super::{decode_call, find_api_calls, split_api};
use crate::custom::Registrations;

/// The toggle (`--passes=-scalarize-vectors` differentiates vector code as it is).
pub const TOGGLE: &str = "scalarize-vectors";

/// What the rewrite did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalarCopyReport {
    /// The scalarized copies made, in creation order.
    pub copies: Vec<FuncId>,
    /// API calls that now differentiate a copy.
    pub calls_rewritten: usize,
}

/// Rewrites every `__enzyme_autodiff`/`__enzyme_fwddiff` call of a function that computes
/// with float vectors to differentiate a scalarized copy of it.
pub fn scalarize_differentiated_functions(module: &mut Module) -> ScalarCopyReport {
    let mut report = ScalarCopyReport::default();
    let Ok(registrations) = Registrations::read(module) else { return report };
    // `None`: the function cannot be scalarized (looked at once).
    let mut copies: HashMap<FuncId, Option<FuncId>> = HashMap::new();
    for (caller, call) in find_api_calls(module) {
        if split_api::entry_of(module, caller, call).is_some() {
            continue;
        }
        let Ok(decoded) = decode_call(module, caller, call) else { continue };
        let function = decoded.function;
        let target = &module.functions[function];
        if target.is_declaration()
            || registrations.is_registered(function)
            || !adc_passes::scalarize::has_float_vectors(target)
        {
            continue;
        }
        let copy = *copies.entry(function).or_insert_with(|| scalar_copy(module, function));
        let Some(copy) = copy else { continue };
        if !report.copies.contains(&copy) {
            report.copies.push(copy);
        }
        let operand = usize::from(decoded.sret.is_some());
        point_call_at(module, caller, call, operand, copy);
        report.calls_rewritten += 1;
    }
    report
}

/// An internal copy of `function` with its vectors split, or `None` when some vector has
/// no lane-wise form.
fn scalar_copy(module: &mut Module, function: FuncId) -> Option<FuncId> {
    let mut copy = module.functions[function].clone();
    if adc_passes::scalarize::scalarize(&mut copy) == 0 {
        return None;
    }
    let base = format!("{}.scalar", copy.name);
    copy.name = base.clone();
    let mut n = 1;
    while module.function_by_name(&copy.name).is_some() {
        n += 1;
        copy.name = format!("{base}.{n}");
    }
    copy.linkage = Linkage::Internal;
    Some(module.add_function(copy))
}
