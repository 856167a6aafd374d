//! Nested API calls (higher-order derivatives): `__enzyme_fwddiff` of a function that
//! itself calls `__enzyme_autodiff` (forward over reverse: Hessian-vector products), or
//! the other way round. The inner request must be lowered first, so that the outer
//! synthesis differentiates a call to the synthesized inner derivative rather than a call
//! to the API entry point, which has no derivative.

use std::collections::HashSet;

use adc_ir::{FuncId, InstructionData, Module};

use super::is_api_function;

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
