//! Specialization of the differentiated function on its constant function-pointer
//! arguments (`specialize-args`), before the pre-AD pipeline.
//!
//! `__enzyme_autodiff((void *)integrate, enzyme_const, rhs_fn, ...)` differentiates
//! `integrate` for a call whose `rhs` is known at compile time. Differentiated as it is,
//! every `rhs(...)` inside stays a call through a pointer: reverse mode reaches the
//! target's split function through a dispatch, and each dynamic call allocates a frame
//! for what the target's reverse pass needs (the rk4 benchmark spent about half of its
//! gradient in `malloc`/`free` that way). The API call is therefore rewritten to
//! differentiate a copy of `integrate` in which that parameter is the constant
//! `@rhs_fn`: the pre-AD pipeline turns the calls through it into direct calls (`inline`
//! makes calls of a known address direct) and inlines them, and differentiation sees one
//! function with no call left. This is LLVM's function specialization, keyed on what the
//! API call site knows.
//!
//! What is bound: a parameter of pointer type that the function uses, whose argument at
//! the API call is the address of a function (after the same look-through as the
//! decoding: casts, locals written once), whatever its activity marker (a function
//! address is its own shadow, see `reverse::indirect`, so the derivative does not depend
//! on it). Call sites with the same function and bindings share one copy (an internal
//! function named `<f>.for.<g>`). Not touched: split-mode entry points (the forward and
//! reverse calls must name the same function), functions with a registered custom
//! derivative (the registration names the original), and calls the lowering will reject
//! (they are reported there, unchanged).

use std::collections::HashMap;

use adc_ir::{Constant, FuncId, Inst, InstructionData, Linkage, Module, Type};

use super::{decode_call, find_api_calls, is_api_function, is_used, origin, split_api, Origin};
use crate::custom::Registrations;

/// The toggle names accepted in `--passes` (with `-` or `+`).
pub const TOGGLES: &[(&str, &str)] = &[
    (
        "specialize-args",
        "differentiate a copy of the function with its constant function-pointer arguments bound",
    ),
    (
        super::scalar_copy::TOGGLE,
        "differentiate a copy of a vectorized function with every vector split into lanes",
    ),
    (
        super::scalar_copy::DEVECTORIZE_TOGGLE,
        "reverse mode: differentiate the scalar fallback of loops LLVM's loop vectorizer made",
    ),
];

/// What the specialization did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecializeReport {
    /// The copies made, in creation order.
    pub copies: Vec<FuncId>,
    /// API calls that now differentiate a copy.
    pub calls_rewritten: usize,
}

/// A differentiated function and its bound parameters (index, function), in index order.
type Key = (FuncId, Vec<(usize, FuncId)>);

/// Rewrites every `__enzyme_autodiff`/`__enzyme_fwddiff` call that passes a function
/// address for a used pointer parameter to differentiate a copy with it bound.
pub fn specialize_function_arguments(module: &mut Module) -> SpecializeReport {
    let mut report = SpecializeReport::default();
    // Malformed registrations are the lowering's to report; nothing is specialized then.
    let Ok(registrations) = Registrations::read(module) else { return report };
    let mut copies: HashMap<Key, FuncId> = HashMap::new();
    for (caller, call) in find_api_calls(module) {
        if split_api::entry_of(module, caller, call).is_some() {
            continue;
        }
        let Ok(decoded) = decode_call(module, caller, call) else { continue };
        let function = decoded.function;
        let target = &module.functions[function];
        if target.is_declaration() || registrations.is_registered(function) {
            continue;
        }
        let caller_fn = &module.functions[caller];
        let bindings: Vec<(usize, FuncId)> = decoded
            .args
            .iter()
            .zip(target.params())
            .enumerate()
            .filter_map(|(index, (arg, &param))| {
                if !target.dfg.value_type(param).is_ptr() || !is_used(target, param) {
                    return None;
                }
                match origin(module, caller_fn, arg.value) {
                    Origin::Function(g) if !is_api_function(module, g) => Some((index, g)),
                    _ => None,
                }
            })
            .collect();
        if bindings.is_empty() {
            continue;
        }
        let key = (function, bindings);
        let copy = match copies.get(&key) {
            Some(copy) => *copy,
            None => {
                // A body without an instruction to put the bound addresses before (not
                // valid IR) is left to the verifier and the lowering.
                let Some(copy) = specialized_copy(module, &key) else { continue };
                report.copies.push(copy);
                copies.insert(key, copy);
                copy
            }
        };
        let operand = usize::from(decoded.sret.is_some());
        point_call_at(module, caller, call, operand, copy);
        report.calls_rewritten += 1;
    }
    report
}

pub(super) fn address(f: FuncId) -> InstructionData {
    InstructionData::Const { ty: Type::PTR, value: Constant::function(f) }
}

/// A copy of `key.0` (internal) whose bound parameters' uses read the bound addresses.
fn specialized_copy(module: &mut Module, (function, bindings): &Key) -> Option<FuncId> {
    let original = &module.functions[*function];
    let first = original.layout.first_inst(original.entry_block()?)?;
    let mut copy = module.functions[*function].clone();
    let bound: Vec<&str> =
        bindings.iter().map(|(_, g)| module.functions[*g].name.as_str()).collect();
    let base = format!("{}.for.{}", copy.name, bound.join("."));
    copy.name = base.clone();
    let mut n = 1;
    while module.function_by_name(&copy.name).is_some() {
        n += 1;
        copy.name = format!("{base}.{n}");
    }
    copy.linkage = Linkage::Internal;
    for &(index, g) in bindings {
        let param = copy.params()[index];
        let inst = copy.dfg.make_inst(address(g), Some(Type::PTR));
        copy.layout.insert_inst_before(inst, first);
        let constant = copy.dfg.inst_result(inst).expect("a const has a result");
        copy.dfg.replace_uses(param, constant);
    }
    Some(module.add_function(copy))
}

/// Makes operand `operand` of the API call `call` (the function to differentiate) the
/// address of `copy`.
pub(super) fn point_call_at(
    module: &mut Module,
    caller: FuncId,
    call: Inst,
    operand: usize,
    copy: FuncId,
) {
    let func = &mut module.functions[caller];
    let inst = func.dfg.make_inst(address(copy), Some(Type::PTR));
    func.layout.insert_inst_before(inst, call);
    func.dfg.debug_locs[inst] = func.dfg.debug_locs[call].clone();
    let value = func.dfg.inst_result(inst).expect("a const has a result");
    if let InstructionData::Call { args, .. } = &mut func.dfg.insts[call] {
        args[operand] = value;
    }
}
