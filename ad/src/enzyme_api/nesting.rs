//! Nested API calls (higher-order derivatives): `__enzyme_fwddiff` of a function that
//! itself calls `__enzyme_autodiff` (forward over reverse: Hessian-vector products), or
//! the other way round. The inner request must be lowered first, so that the outer
//! synthesis differentiates a call to the synthesized inner derivative rather than a call
//! to the API entry point, which has no derivative.

use std::collections::HashSet;

use adc_ir::{FuncId, InstructionData, Module};

use super::is_api_function;
use crate::callees::TAPE_PUSH;

/// Whether `function`, or a defined function it calls directly or through other calls,
/// still contains a call to an API entry point.
pub(super) fn reaches_api_call(module: &Module, function: FuncId) -> bool {
    let mut seen = HashSet::new();
    let mut work = vec![function];
    while let Some(id) = work.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(func) = module.functions.get(id) else { continue };
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Call { callee, .. } = func.inst(inst) {
                if is_api_function(module, *callee) {
                    return true;
                }
                if module.functions.get(*callee).is_some_and(|f| !f.is_declaration()) {
                    work.push(*callee);
                }
            }
        }
    }
    false
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
pub(super) fn inline_inner_derivatives(module: &mut Module, function: FuncId, inner: &[FuncId]) {
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
        let Some((call, callee)) = site else { return };
        let body = module.functions[callee].clone();
        copied +=
            adc_passes::inline::inline_call(&mut module.functions[function], call, &body).max(1);
    }
}

fn calls_itself(module: &Module, function: FuncId) -> bool {
    let func = &module.functions[function];
    func.layout.insts().any(|(_, inst)| {
        matches!(func.inst(inst), InstructionData::Call { callee, .. } if *callee == function)
    })
}
