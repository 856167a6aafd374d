//! `Differentiator`: the entry point of derivative synthesis. It implements
//! [`Synthesize`] for the Enzyme API lowering, memoises derivatives per request, declares
//! the runtime functions the derivative calls (`malloc`, `realloc`, `free`, the tape
//! helper), runs reverse-mode synthesis (`crate::reverse`) and verifies the result before
//! adding it to the module. Forward requests go to `crate::forward::synthesize_forward`.
//!
//! Derivatives are named `__adc_reverse_<function>` (`__adc_forward_<function>`), with `.1`, `.2`, ... appended for
//! further distinct requests on the same function, and have internal linkage.

use std::collections::HashMap;

use adc_ir::{FuncAttrs, FuncId, Function, Module, Signature, Type};

use crate::cache::{define_tape_push, CacheStats};
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{DiffMode, DiffRequest, Synthesize};
use crate::reverse::{synthesize, Runtime};
use crate::rules::{self, Differentiable};

/// Choices that change what synthesis produces.
#[derive(Clone, Debug)]
pub struct DifferentiatorOptions {
    /// Verify every synthesized function (`adc_ir::verify_function`); a failure is an
    /// internal error reported as `AdErrorKind::Unsupported` with the verifier's message.
    pub verify: bool,
}

impl Default for DifferentiatorOptions {
    fn default() -> Self {
        DifferentiatorOptions { verify: true }
    }
}

/// Synthesizes derivatives on request, once per distinct request.
#[derive(Debug, Default)]
pub struct Differentiator {
    pub options: DifferentiatorOptions,
    memo: HashMap<DiffRequest, FuncId>,
    /// Cache statistics of every derivative synthesized so far, by its name.
    pub stats: Vec<(String, CacheStats)>,
}

impl Differentiator {
    pub fn new(options: DifferentiatorOptions) -> Differentiator {
        Differentiator { options, memo: HashMap::new(), stats: Vec::new() }
    }
}

impl Synthesize for Differentiator {
    fn derivative(
        &mut self,
        module: &mut Module,
        request: &DiffRequest,
    ) -> Result<FuncId, AdError> {
        if let Some(id) = self.memo.get(request) {
            return Ok(*id);
        }
        let Some(primal) = module.functions.get(request.function) else {
            return Err(AdError::new(
                Site::function("?"),
                AdErrorKind::Unsupported {
                    what: format!("a request for unknown function {}", request.function),
                },
            ));
        };
        let primal_name = primal.name.clone();
        if request.mode == DiffMode::Forward {
            // Forward synthesis declares its own libm callees and verifies its result.
            let name = fresh_name(module, &format!("__adc_forward_{primal_name}"));
            let id = crate::forward::synthesize_forward(module, request, &name)?;
            self.memo.insert(request.clone(), id);
            return Ok(id);
        }
        let runtime = declare_runtime(module, &primal_name)?;
        declare_rule_externs(module, request.function, &primal_name)?;
        let signatures: HashMap<FuncId, Signature> =
            module.functions.iter().map(|(id, f)| (id, f.signature.clone())).collect();
        let name = fresh_name(module, &format!("__adc_reverse_{primal_name}"));
        let (function, stats) = synthesize(module, request, &name, runtime, &signatures)?;
        if self.options.verify {
            if let Err(diagnostics) = adc_ir::verify::verify_function(module, &function) {
                let text = adc_ir::text::print_function(module, &function);
                return Err(AdError::new(
                    Site::function(&primal_name),
                    AdErrorKind::Unsupported {
                        what: format!(
                            "{request}: internal error, the synthesized derivative does not verify: {diagnostics}\n{text}"
                        ),
                    },
                ));
            }
        }
        let id = module.add_function(function);
        self.memo.insert(request.clone(), id);
        self.stats.push((name, stats));
        Ok(id)
    }
}

/// `base`, or `base.N` for the first N that no function of the module uses.
fn fresh_name(module: &Module, base: &str) -> String {
    if module.function_by_name(base).is_none() {
        return base.to_string();
    }
    (1..)
        .map(|n| format!("{base}.{n}"))
        .find(|n| module.function_by_name(n).is_none())
        .unwrap_or_default()
}

/// Finds or declares a library function with the expected signature.
fn declare(
    module: &mut Module,
    name: &str,
    sig: Signature,
    for_function: &str,
) -> Result<FuncId, AdError> {
    if let Some(id) = module.function_by_name(name) {
        let existing = &module.functions[id].signature;
        if existing.params != sig.params || existing.ret != sig.ret {
            return Err(AdError::new(
                Site::function(for_function),
                AdErrorKind::Unsupported {
                    what: format!("a module whose @{name} does not have the C library's signature"),
                },
            ));
        }
        return Ok(id);
    }
    let mut f = Function::new(name, sig);
    f.attrs = FuncAttrs::NOUNWIND;
    Ok(module.add_function(f))
}

fn declare_runtime(module: &mut Module, for_function: &str) -> Result<Runtime, AdError> {
    let malloc =
        declare(module, "malloc", Signature::new(vec![Type::I64], Some(Type::PTR)), for_function)?;
    let realloc = declare(
        module,
        "realloc",
        Signature::new(vec![Type::PTR, Type::I64], Some(Type::PTR)),
        for_function,
    )?;
    let free = declare(module, "free", Signature::new(vec![Type::PTR], None), for_function)?;
    let tape_push = define_tape_push(module, realloc);
    Ok(Runtime { malloc, free, tape_push })
}

/// Declares the libm functions the derivative rules of the primal's operations call.
fn declare_rule_externs(
    module: &mut Module,
    function: FuncId,
    for_function: &str,
) -> Result<(), AdError> {
    use adc_ir::InstructionData as I;
    let primal = &module.functions[function];
    let mut needed = Vec::new();
    for (_, inst) in primal.layout.insts() {
        let Some(result) = primal.dfg.inst_result(inst) else { continue };
        let ty = primal.dfg.value_type(result).clone();
        if !crate::reverse::has_float(&ty) {
            continue;
        }
        let op = match &primal.dfg.insts[inst] {
            I::Unary { op, .. } => Differentiable::Unary(*op),
            I::Binary { op, .. } => Differentiable::Binary(*op),
            I::Fma { .. } => Differentiable::Fma,
            I::Cast { op, .. } => Differentiable::Cast(*op),
            I::Call { callee, .. } if module.functions[*callee].is_declaration() => {
                Differentiable::Call(&module.functions[*callee].name)
            }
            _ => continue,
        };
        // An operation without a rule is reported by synthesis, at its instruction.
        if let Ok(externs) = rules::externs_needed(op, &ty) {
            needed.extend(externs);
        }
    }
    for (name, sig) in needed {
        declare(module, name, sig, for_function)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;
    use adc_ir::Linkage;

    use super::*;
    use crate::request::{ArgActivity, RetActivity};

    const SQUARE_LOOP: &str = "
func @f(%x: f64, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %one = const f64 1.0
  %four = const i64 4
  jump ^loop(%zero, %one)
^loop(%i: i64, %acc: f64):
  %more = icmp slt i64 %i, %four
  brif %more, ^body, ^done
^body:
  %acc1 = fmul f64 %acc, %x
  %inc = const i64 1
  %i1 = add nsw i64 %i, %inc
  jump ^loop(%i1, %acc1)
^done:
  ret %acc
}
";

    fn request(module: &Module, args: Vec<ArgActivity>) -> DiffRequest {
        DiffRequest::reverse(module.function_by_name("f").unwrap(), args, RetActivity::Active)
    }

    #[test]
    fn derivative_is_memoised_named_and_internal() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active, ArgActivity::Const]);
        let first = d.derivative(&mut module, &req).unwrap();
        let again = d.derivative(&mut module, &req).unwrap();
        assert_eq!(first, again);
        assert_eq!(module.functions[first].name, "__adc_reverse_f");
        assert_eq!(module.functions[first].linkage, Linkage::Internal);
        let other = DiffRequest::reverse(req.function, req.args.clone(), RetActivity::Const);
        let second = d.derivative(&mut module, &other).unwrap();
        assert_ne!(first, second);
        assert_eq!(module.functions[second].name, "__adc_reverse_f.1");
        adc_ir::verify::verify_module(&module).unwrap();
    }

    #[test]
    fn derivative_of_x_to_the_fourth() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active, ArgActivity::Const]);
        let id = d.derivative(&mut module, &req).unwrap();
        // The loop has a constant trip count: its tape is allocated once, up front.
        let stats = &d.stats[0].1;
        assert!(stats.tapes >= 1 && stats.presized_tapes == stats.tapes, "{stats:?}");
        let mut interp = Interpreter::new(&module).unwrap();
        let result = interp.call(id, &[Val::F64(1.5), Val::Int(0)]).unwrap();
        assert_eq!(result, Some(Val::F64(4.0 * 1.5 * 1.5 * 1.5)));
    }

    #[test]
    fn unwritten_loads_are_recomputed_not_taped() {
        let text = "
func @f(%x: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %more = icmp slt i64 %i, %n
  brif %more, ^body, ^done
^body:
  %eight = const i64 8
  %off = mul i64 %i, %eight
  %p = ptradd ptr %x, %off
  %xi = load f64, %p, align 8
  %sq = fmul f64 %xi, %xi
  %acc1 = fadd f64 %acc, %sq
  %inc = const i64 1
  %i1 = add i64 %i, %inc
  jump ^loop(%i1, %acc1)
^done:
  ret %acc
}
";
        let mut module = parse_module(text).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Dup, ArgActivity::Const]);
        d.derivative(&mut module, &req).unwrap();
        // Only the induction variable is taped; `%xi` is loaded again from `%x`. The trip
        // count `max(0, %n)` is known on entry, so the tape is allocated once up front.
        let stats = &d.stats[0].1;
        assert_eq!(stats.tapes, 1, "{stats:?}");
        assert_eq!(stats.presized_tapes, 1, "{stats:?}");
    }

    #[test]
    fn a_function_that_never_returns_still_synthesizes() {
        let text = "
declare @abort()
func @f(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  call @abort()
  unreachable
}
";
        let mut module = parse_module(text).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active]);
        d.derivative(&mut module, &req).unwrap();
        adc_ir::verify::verify_module(&module).unwrap();
    }

    #[test]
    fn bad_requests_are_errors() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let wrong_arity = request(&module, vec![ArgActivity::Active]);
        let err = d.derivative(&mut module, &wrong_arity).unwrap_err();
        assert!(err.to_string().contains("argument activities"), "{err}");
        let active_int = request(&module, vec![ArgActivity::Active, ArgActivity::Active]);
        assert!(d.derivative(&mut module, &active_int).is_err());
        let mut forward = request(&module, vec![ArgActivity::Dup, ArgActivity::Const]);
        forward.mode = DiffMode::Forward;
        let id = d.derivative(&mut module, &forward).unwrap();
        assert_eq!(module.functions[id].name, "__adc_forward_f");
        assert_eq!(d.derivative(&mut module, &forward).unwrap(), id);
    }
}
