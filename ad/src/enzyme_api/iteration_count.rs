//! `__enzyme_iter(n, step)`: an integer that grows by `step` with every differentiation of
//! the code holding it. Truncated series use it so that each derivative keeps as many
//! nonzero terms as the function (`for (i = 0; i <= __enzyme_iter(12, 1); i++)`: the
//! fourth derivative of a degree-`n` polynomial has degree `n - 4`).
//!
//! Enzyme's semantics: every copy of a call that a derivative makes has its count raised
//! by its step, and what remains once every request is lowered evaluates to its count.
//! Here the functions a request's synthesis created get `__enzyme_iter(n + step, step)`
//! (nested requests, lowered innermost first, raise the copies again), and
//! [`lower_remaining`] replaces every call by its first operand.

use adc_ir::{BinaryOp, FuncId, Function, Inst, InstFlags, InstructionData, Module, Value};

use crate::callees::ENZYME_ITER;
use crate::error::{AdError, AdErrorKind, Site};

/// The `__enzyme_iter` calls of `func` with their two operands.
fn iteration_calls(func: &Function, marker: FuncId) -> Vec<(Inst, Value, Value)> {
    func.layout
        .insts()
        .filter_map(|(_, inst)| match func.inst(inst) {
            InstructionData::Call { callee, args, .. } if *callee == marker => {
                Some((inst, *args.first()?, *args.get(1)?))
            }
            _ => None,
        })
        .collect()
}

fn marker(module: &Module) -> Option<FuncId> {
    module.function_by_name(ENZYME_ITER).filter(|&f| module.functions[f].is_declaration())
}

/// Checks every `__enzyme_iter` call of the module (before any synthesis copies one): the
/// count and the step are added, so they are integers of one type.
pub(super) fn check_calls(module: &Module) -> Result<(), AdError> {
    let Some(marker) = marker(module) else { return Ok(()) };
    for (id, func) in module.functions.iter() {
        for (call, count, step) in iteration_calls(func, marker) {
            let ty = func.dfg.value_type(count);
            if func.dfg.value_type(step) != ty || !ty.is_int() {
                return Err(AdError::new(
                    Site::inst(module, &module.functions[id], call),
                    AdErrorKind::BadApiCall {
                        api: ENZYME_ITER.into(),
                        reason: "its count and step must be integers of one type".into(),
                    },
                ));
            }
        }
    }
    Ok(())
}

/// Raises the count of every `__enzyme_iter` call in the functions from `first_new` on
/// (those a synthesis just created) by its step.
pub(super) fn raise_in_new_functions(module: &mut Module, first_new: usize) {
    let Some(marker) = marker(module) else { return };
    let new: Vec<FuncId> = module.functions.keys().skip(first_new).collect();
    for id in new {
        let func = &mut module.functions[id];
        for (call, count, step) in iteration_calls(func, marker) {
            let ty = func.dfg.value_type(count).clone();
            let add = InstructionData::Binary {
                op: BinaryOp::Add,
                flags: InstFlags::empty(),
                args: [count, step],
            };
            let raised_inst = func.dfg.make_inst(add, Some(ty));
            func.layout.insert_inst_before(raised_inst, call);
            func.dfg.debug_locs[raised_inst] = func.dfg.debug_locs[call].clone();
            let raised = func.dfg.inst_result(raised_inst).expect("an add has a result");
            if let InstructionData::Call { args, .. } = &mut func.dfg.insts[call] {
                args[0] = raised;
            }
        }
    }
}

/// Replaces every `__enzyme_iter(n, step)` by `n`: what a primal, and a derivative once
/// nothing differentiates it further, computes.
pub(super) fn lower_remaining(module: &mut Module) {
    let Some(marker) = marker(module) else { return };
    let ids: Vec<FuncId> = module.functions.keys().collect();
    for id in ids {
        let calls = iteration_calls(&module.functions[id], marker);
        let func = &mut module.functions[id];
        for (call, count, _) in calls {
            if let Some(result) = func.dfg.inst_result(call) {
                func.dfg.replace_uses(result, count);
            }
            func.layout.remove_inst(call);
        }
    }
}
