//! Indirect calls in reverse mode: a call through a function pointer with active
//! operands goes through the split function (see `calls`) of whichever function the
//! pointer holds at run time, for the activity of the call site.
//!
//! Function-pointer shadows. The shadow of a function pointer is what the derivative
//! calls instead of the target: the target's split function for the call's activity.
//! adc computes it from the primal pointer, not from shadow memory:
//!
//! - a pointer that is a known function address (`const ptr @f`, after constant
//!   propagation the common case) calls `@f`'s split function directly;
//! - any other pointer (an argument, a load from an array or a struct of function
//!   pointers, a `select`, a block parameter) is compared with the functions whose address
//!   the module takes and that have the call's type (the **candidates**): a `select` chain
//!   picks the split function of the matching candidate. The choice is a pure forward
//!   value, recomputed or cached for the reverse phase like any other.
//!
//! Reading the shadow from shadow memory instead (Enzyme's way) would make the gradient
//! depend on what the caller wrote into its shadow buffers: a struct of parameters passed
//! with `enzyme_dup` holds in its shadow whatever the caller put there (zeros, usually),
//! not a shadow function. Dispatching on the primal pointer needs nothing from the caller.
//! So that stores of function pointers into shadowed memory (a struct with a function
//! pointer and active fields) mirror something, a function address is its own shadow.
//!
//! Every candidate gets a split function for every activity it is called with (they are
//! synthesized whether or not that call happens at run time, so a candidate that cannot be
//! differentiated is an error naming it). An indirect call with active operands and no
//! candidate of its type is an error: its target cannot be known. A target that is not a
//! candidate (a function of another object file) reaches a null split function: the
//! derivative traps instead of returning a wrong gradient.

use adc_ir::{
    Constant, FuncId, Inst, InstFlags, InstructionData, IntCC, Module, Signature, Symbol, Type,
    Value,
};

use super::calls::{SplitLayout, SplitTarget};
use super::Synth;
use crate::error::AdError;
use crate::request::{ArgActivity, DiffRequest};

/// What the forward pass needs to call a split function for one indirect call: the
/// primal arguments, their activity, the split function's layout and the target.
pub(super) type SplitPlan = (Vec<Value>, Vec<ArgActivity>, SplitLayout, SplitTarget);

/// The prefix of the Enzyme API functions: passing a function to one of them as the
/// function to differentiate does not make it a target of indirect calls.
const ENZYME_API_PREFIX: &str = "__enzyme_";

impl<'a> Synth<'a> {
    /// The function whose address a primal value is (`const ptr @f`), if it is one.
    pub(super) fn function_address(&self, value: Value) -> Option<FuncId> {
        self.primal.dfg.function_address(value)
    }

    /// The split call of an indirect call with active operands (`None` when no operand is
    /// active: the call stays primal-only). Emits the choice of the split function at the
    /// current forward position.
    pub(super) fn plan_indirect_call(&mut self, inst: Inst) -> Result<Option<SplitPlan>, AdError> {
        let InstructionData::CallIndirect { sig, callee, args, .. } =
            self.primal.dfg.insts[inst].clone()
        else {
            return Ok(None);
        };
        if !args.iter().any(|a| self.operand_is_active(*a)) {
            return Ok(None);
        }
        if sig.varargs {
            return Err(self.unsupported(inst, "an indirect call of a variadic function type"));
        }
        let (activities, ret) = self.call_activity(inst, &args, "the indirect call")?;
        let layout = SplitLayout::for_activity(&sig, &activities, ret);
        let signature = layout.signature(&sig, &activities);
        let split_of = |synth: &mut Self, f: FuncId| {
            let request = DiffRequest::reverse(f, activities.clone(), ret);
            synth.splits.id_for(&request, signature.clone())
        };
        if let Some(f) = self.function_address(callee) {
            let function = &self.module.functions[f];
            let problem = if function.is_declaration() {
                Some("a function without a body")
            } else if !same_type(&function.signature, &sig) {
                Some("a function of another type")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(self.unsupported(
                    inst,
                    format!("an indirect call of @{} ({problem})", function.name),
                ));
            }
            let split = split_of(self, f);
            return Ok(Some((args, activities, layout, SplitTarget::Direct(split))));
        }
        let candidates = indirect_call_candidates(self.module, &sig);
        if candidates.is_empty() {
            return Err(self.unsupported(
                inst,
                format!(
                    "an indirect call whose target cannot be known: no function of type {} with a body has its address taken in the module",
                    describe(&sig)
                ),
            ));
        }
        if !self.vmap.contains_key(&callee) {
            return Err(self.unsupported(inst, "an operand that does not dominate its use"));
        }
        let target = self.fwd(callee);
        let mut choice = self.constant(Type::PTR, Constant::Int(0));
        for candidate in candidates.into_iter().rev() {
            let split = split_of(self, candidate);
            let address = self.constant(Type::PTR, Constant::function(candidate));
            let is_it =
                self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [target, address] });
            let split = self.constant(Type::PTR, Constant::function(split));
            choice = self.val(InstructionData::Select {
                flags: InstFlags::empty(),
                args: [is_it, split, choice],
            });
        }
        let target = SplitTarget::Indirect { split: choice, signature };
        Ok(Some((args, activities, layout, target)))
    }
}

/// Whether a function of signature `function` may be called through a pointer of type
/// `call` (same parameter and result types).
fn same_type(function: &Signature, call: &Signature) -> bool {
    function.params == call.params && function.ret == call.ret && !function.varargs
}

fn describe(sig: &Signature) -> String {
    let params: Vec<String> = sig.params.iter().map(|t| t.to_string()).collect();
    let ret = sig.ret.as_ref().map_or("void".to_string(), |t| t.to_string());
    format!("({}) -> {ret}", params.join(", "))
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
            if !global.name.starts_with(super::calls::INACTIVE_FN_GLOBAL) {
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

#[cfg(test)]
mod tests {
    use adc_ir::text::parse_module;

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
