//! Nested API calls (higher-order derivatives): `__enzyme_fwddiff` of a function that
//! itself calls `__enzyme_autodiff` (forward over reverse: Hessian-vector products), or
//! the other way round. The inner request must be lowered first, so that the outer
//! synthesis differentiates a call to the synthesized inner derivative rather than a call
//! to the API entry point, which has no derivative.

use std::collections::HashSet;

use adc_ir::{FuncId, InstructionData, Module};

use super::is_api_function;
use crate::callees::{TAPE_GIVE, TAPE_PUSH, TAPE_TAKE};
use crate::error::{AdError, AdErrorKind, Site};

/// Whether `function`, or a defined function it calls directly or through other calls,
/// still contains a call to an API entry point.
pub(super) fn reaches_api_call(module: &Module, function: FuncId) -> bool {
    walk_calls(module, vec![function], |callee| is_api_function(module, callee)).is_none()
}

/// The functions that a differentiated function (`differentiated`, those of every API
/// call) is or reaches through direct calls: the derivatives called from them are
/// differentiated again (higher derivatives). Computed once, before any call is lowered.
pub(super) fn reached_from(
    module: &Module,
    differentiated: impl Iterator<Item = FuncId>,
) -> HashSet<FuncId> {
    walk_calls(module, differentiated.collect(), |_| false).unwrap_or_default()
}

/// The defined functions reachable from `starts` through direct calls (`starts`
/// included), or `None` as soon as a call's callee satisfies `stop`.
fn walk_calls(
    module: &Module,
    starts: Vec<FuncId>,
    stop: impl Fn(FuncId) -> bool,
) -> Option<HashSet<FuncId>> {
    let mut seen = HashSet::new();
    let mut work = starts;
    while let Some(id) = work.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(func) = module.functions.get(id) else { continue };
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Call { callee, .. } = func.inst(inst) {
                if stop(*callee) {
                    return None;
                }
                if module.functions.get(*callee).is_some_and(|f| !f.is_declaration()) {
                    work.push(*callee);
                }
            }
        }
    }
    Some(seen)
}

/// Most instructions inlined into one function differentiated again.
const MAX_INLINED: usize = 20_000;

/// Inlines the calls of `function` to derivatives synthesized for earlier (inner)
/// requests, before `function` is differentiated itself. Differentiating the call would
/// go through the inner derivative's split functions, whose augmented forward returns its
/// tape inside an aggregate (`{primal, tape}`), and a third level then needs a shadow for
/// that pointer; the inlined body is plain code (its tapes are pushes, mallocs and loads
/// that every level differentiates). The tape helper `__adc_tape_push` goes inline too:
/// its `realloc` then grows a block held in the tape header's first field, which the
/// outer derivative shadows like any block a local slot holds. Derivatives that call
/// themselves stay calls.
///
/// The inlined body is cleaned up with [`CLEANUP`] before it is differentiated again.
pub(super) fn inline_inner_derivatives(
    module: &mut Module,
    function: FuncId,
    inner: &[FuncId],
) -> Result<(), AdError> {
    let mut copied = 0;
    while copied < MAX_INLINED {
        let func = &module.functions[function];
        let site = func.layout.insts().find_map(|(_, inst)| match func.inst(inst) {
            InstructionData::Call { callee, .. }
                if *callee != function
                    && (inner.contains(callee) || module.functions[*callee].name == TAPE_PUSH)
                    && !calls_itself(module, *callee) =>
            {
                Some((inst, *callee))
            }
            _ => None,
        });
        let Some((call, callee)) = site else { break };
        let body = module.functions[callee].clone();
        copied +=
            adc_passes::inline::inline_call(&mut module.functions[function], call, &body).max(1);
    }
    if copied == 0 {
        return Ok(());
    }
    allocate_inlined_tapes_afresh(module, function);
    clean_up(module, function)
}

/// What runs on a function after inner derivatives were inlined into it: the inlined
/// derivative is fresh synthesis output (the post-AD pipeline runs once every request is
/// lowered), whose tape offsets, shadow addresses and constants are computed inside its
/// loops. Differentiated as they are, the next level tapes them per iteration, next to
/// the doubles, in records whose fields it then cannot tell apart when a level above
/// differentiates those tapes again (fourth derivatives, Enzyme's `mycos`). After these
/// passes, loop-invariant addresses sit outside the loops and offsets are induction
/// variables, which the cache planner recomputes.
const CLEANUP: &[&str] =
    &["simplify-cfg", "sroa", "mem2reg", "sccp", "simplify-cfg", "gvn", "licm", "dse", "dce"];

fn clean_up(module: &mut Module, function: FuncId) -> Result<(), AdError> {
    let name = module.functions[function].name.clone();
    let internal =
        |what: String| AdError::new(Site::function(&name), AdErrorKind::Internal { what });
    let passes: Vec<_> = CLEANUP
        .iter()
        .map(|name| adc_passes::lookup(name))
        .collect::<Result<_, _>>()
        .map_err(|e| internal(e.to_string()))?;
    let manager = adc_passes::PassManager::new(passes, Default::default());
    let (_, result) = manager.run_on_function(module, function);
    result.map_err(|e| internal(format!("cleaning up the inlined inner derivatives: {e}")))
}

/// Turns the inlined tape buffers kept across calls (`__adc_tape_take(slot, bytes)`,
/// `__adc_tape_give(slot, data)`, see `reverse::tape_reuse`) back into `malloc(bytes)` and
/// `free(data)`. The outer derivative differentiates the allocation like any other, while
/// the slot, a global holding a pointer, would need a shadow no derivative can have. Both
/// calls of a buffer come from the same inlined body, so the pairs stay matched; the
/// inner derivative itself keeps its slots for its other callers.
fn allocate_inlined_tapes_afresh(module: &mut Module, function: FuncId) {
    let by_name = |name: &str| module.function_by_name(name);
    let (Some(take), Some(give)) = (by_name(TAPE_TAKE), by_name(TAPE_GIVE)) else { return };
    // The helpers are defined with `malloc` and `free` declared beside them.
    let (Some(malloc), Some(free)) = (by_name("malloc"), by_name("free")) else { return };
    let func = &mut module.functions[function];
    let calls: Vec<_> = func.layout.insts().map(|(_, inst)| inst).collect();
    for inst in calls {
        if let InstructionData::Call { callee, args, .. } = &mut func.dfg.insts[inst] {
            if (*callee == take || *callee == give) && args.len() == 2 {
                *callee = if *callee == take { malloc } else { free };
                args.remove(0);
            }
        }
    }
}

fn calls_itself(module: &Module, function: FuncId) -> bool {
    let func = &module.functions[function];
    func.layout.insts().any(|(_, inst)| {
        matches!(func.inst(inst), InstructionData::Call { callee, .. } if *callee == function)
    })
}
