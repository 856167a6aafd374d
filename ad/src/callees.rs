//! Facts about callees that the analyses and the synthesis both rely on: which library
//! functions never carry derivatives, which functions an indirect call may reach, the
//! part of a module a request's analyses see, and the names of adc's runtime helpers.
//!
//! These are read off the module alone (no synthesis state), so the activity analysis
//! and both synthesis modes agree on them; they sit below everything that consumes them.

use std::collections::HashSet;

use adc_ir::{
    Constant, FuncId, Function, HeapFunction, InstructionData, Module, Signature, Symbol, Value,
};

use crate::custom::INACTIVE_FN;

/// `__adc_tape_push(ptr %tape, i64 %size) -> ptr`: reserves one element on a tape (defined
/// by the reverse synthesis in every module with derivatives).
pub const TAPE_PUSH: &str = "__adc_tape_push";
/// `__adc_tape_take(ptr slot, i64 bytes) -> ptr`: a tape buffer of at least `bytes`
/// (`tape-reuse`).
pub const TAPE_TAKE: &str = "__adc_tape_take";
/// `__adc_tape_give(ptr slot, ptr data)`: hands a buffer from `TAPE_TAKE` back.
pub const TAPE_GIVE: &str = "__adc_tape_give";
/// Prefix of the slot globals that keep tape buffers across calls (`tape-reuse`).
pub const TAPE_SLOT_PREFIX: &str = "__adc_tape_cache_";

/// Library functions that only print or inspect and never carry derivatives.
const INACTIVE_LIBRARY: &[&str] =
    &["printf", "fprintf", "puts", "putchar", "fputs", "fflush", "abort", "exit"];

/// Whether calls to `name` never carry derivatives whatever their operands: the output-only
/// library functions above and the heap releases (`free`, `operator delete`), whose
/// blocks' shadows are released where the reverse pass undoes the allocation.
pub(crate) fn is_inactive_library(name: &str) -> bool {
    INACTIVE_LIBRARY.contains(&name) || HeapFunction::is_release(name)
}

/// The prefix of the Enzyme API functions: passing a function to one of them as the
/// function to differentiate does not make it a target of indirect calls.
const ENZYME_API_PREFIX: &str = "__enzyme_";

/// Whether a function of signature `function` may be called through a pointer of type
/// `call` (same parameter and result types).
pub(crate) fn same_type(function: &Signature, call: &Signature) -> bool {
    function.params == call.params && function.ret == call.ret && !function.varargs
}

/// The defined functions of type `sig` whose address the module takes (in a primal
/// function's code or in a global's initializer), in id order. Synthesized functions
/// (`__adc_*`) and the function argument of the Enzyme API calls do not count.
pub(crate) fn indirect_call_candidates(module: &Module, sig: &Signature) -> Vec<FuncId> {
    let mut taken = std::collections::BTreeSet::new();
    for function in module.functions.values() {
        if function.name.starts_with("__adc_") {
            continue;
        }
        for (_, inst) in function.layout.insts() {
            let InstructionData::Const {
                value: Constant::Address { symbol: Symbol::Func(f), offset: 0 },
                ..
            } = &function.dfg.insts[inst]
            else {
                continue;
            };
            let Some(value) = function.dfg.inst_result(inst) else { continue };
            if !only_differentiated_by_api(module, function, value) {
                taken.insert(*f);
            }
        }
    }
    for global in module.globals.values() {
        if let Some(init) = &global.init {
            if !global.name.starts_with(INACTIVE_FN) {
                collect_function_addresses(init, &mut taken);
            }
        }
    }
    taken
        .into_iter()
        .filter(|f| {
            let function = &module.functions[*f];
            !function.is_declaration()
                && !function.name.starts_with("__adc_")
                && same_type(&function.signature, sig)
        })
        .collect()
}

fn collect_function_addresses(c: &Constant, out: &mut std::collections::BTreeSet<FuncId>) {
    match c {
        Constant::Address { symbol: Symbol::Func(f), .. } => {
            out.insert(*f);
        }
        Constant::Elements(items) => items.iter().for_each(|i| collect_function_addresses(i, out)),
        _ => {}
    }
}

/// Whether `value` is used, and only as the function to differentiate (the first
/// argument) of Enzyme API calls.
fn only_differentiated_by_api(module: &Module, function: &adc_ir::Function, value: Value) -> bool {
    let mut uses = function
        .layout
        .insts()
        .map(|(_, inst)| &function.dfg.insts[inst])
        .filter(|data| data.args().contains(&value))
        .peekable();
    uses.peek().is_some()
        && uses.all(|data| match data {
            InstructionData::Call { callee, args, .. } => {
                module.functions[*callee].name.starts_with(ENZYME_API_PREFIX)
                    && args.first() == Some(&value)
                    && !args[1..].contains(&value)
            }
            _ => false,
        })
}

/// The module as the analyses of a request on `root` should see it: synthesized functions
/// (`__adc_*`: earlier derivatives, split functions, the tape helper) that `root` cannot
/// reach become declarations, so that the module-wide type analysis neither pays for nor
/// learns from unrelated synthesized code. Those `root` reaches stay: after an inner
/// request is lowered (reverse over forward), the primal calls its derivative, whose
/// slots and arguments need their trees like any other callee's. Function ids are
/// unchanged.
pub(crate) fn analysis_view(module: &Module, root: FuncId) -> Module {
    let reachable = reachable_functions(module, root);
    let mut view = module.clone();
    for (id, function) in view.functions.iter_mut() {
        if function.name.starts_with("__adc_")
            && !function.is_declaration()
            && !reachable.contains(&id)
        {
            *function = Function::new(&function.name, function.signature.clone());
        }
    }
    view
}

/// The functions `root` may run: itself, its direct callees and the functions whose
/// address it takes (indirect-call candidates), transitively.
fn reachable_functions(module: &Module, root: FuncId) -> HashSet<FuncId> {
    let mut reachable = HashSet::from([root]);
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let function = &module.functions[id];
        for (_, inst) in function.layout.insts() {
            let callee = match function.inst(inst) {
                InstructionData::Call { callee, .. } => *callee,
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Func(callee), .. },
                    ..
                } => *callee,
                _ => continue,
            };
            if reachable.insert(callee) {
                stack.push(callee);
            }
        }
    }
    reachable
}

/// `base`, or `base.N` for the first N that no function of the module uses.
pub(crate) fn fresh_name(module: &Module, base: &str) -> String {
    if module.function_by_name(base).is_none() {
        return base.to_string();
    }
    (1..)
        .map(|n| format!("{base}.{n}"))
        .find(|n| module.function_by_name(n).is_none())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use adc_ir::text::parse_module;
    use adc_ir::Type;

    use super::*;

    const MODULE: &str = "
declare @__enzyme_autodiff(ptr, ...) -> f64
declare @sin(f64) -> f64
global internal const @table: [2 x ptr], align 8 = [@in_table, @other_type]
global @__enzyme_inactivefn: [1 x ptr], align 8 = [@inactive]

func @in_code(%x: f64) -> f64 {
^entry:
  ret %x
}
func @in_table(%x: f64) -> f64 {
^entry:
  ret %x
}
func @other_type(%x: f64, %y: f64) -> f64 {
^entry:
  ret %x
}
func @differentiated(%x: f64) -> f64 {
^entry:
  ret %x
}
func @inactive(%x: f64) -> f64 {
^entry:
  ret %x
}
func @never_taken(%x: f64) -> f64 {
^entry:
  ret %x
}
func @main(%x: f64) -> f64 {
^entry:
  %a = const ptr @in_code
  %s = const ptr @sin
  %d = const ptr @differentiated
  %g = call @__enzyme_autodiff(%d, %x)
  ret %g
}
";

    fn names(module: &Module, ids: &[FuncId]) -> Vec<String> {
        ids.iter().map(|f| module.functions[*f].name.clone()).collect()
    }

    #[test]
    fn candidates_are_defined_address_taken_functions_of_the_call_type() {
        let module = parse_module(MODULE).unwrap();
        let unary = Signature::new(vec![Type::F64], Some(Type::F64));
        let found = indirect_call_candidates(&module, &unary);
        // Not: @sin (no body), @other_type (another type), @differentiated (only handed
        // to the Enzyme API), @inactive (only listed as inactive), @never_taken.
        assert_eq!(names(&module, &found), ["in_code", "in_table"]);
        let binary = Signature::new(vec![Type::F64, Type::F64], Some(Type::F64));
        assert_eq!(names(&module, &indirect_call_candidates(&module, &binary)), ["other_type"]);
        let void = Signature::new(vec![Type::PTR], None);
        assert!(indirect_call_candidates(&module, &void).is_empty());
    }

    #[test]
    fn a_function_also_called_through_a_pointer_stays_a_candidate() {
        let text = MODULE.replace(
            "%g = call @__enzyme_autodiff(%d, %x)",
            "%g = call @__enzyme_autodiff(%d, %x)\n  %h = call_indirect fn(f64) -> f64 %d(%x)",
        );
        let module = parse_module(&text).unwrap();
        let unary = Signature::new(vec![Type::F64], Some(Type::F64));
        let found = indirect_call_candidates(&module, &unary);
        assert_eq!(names(&module, &found), ["in_code", "in_table", "differentiated"]);
    }
}
