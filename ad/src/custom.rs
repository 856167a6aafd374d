//! Custom derivatives registered the way Enzyme's users do, as global arrays (facts about
//! callees, read off the module; the wrappers built from them at the top level of an API
//! call are the differentiator's `custom_wrapper`):
//!
//! - `void* __enzyme_register_gradient_NAME[3] = {f, f_aug, f_rev};` (reverse mode).
//!   `f_aug` takes `f`'s arguments, each pointer followed by its shadow, and returns the
//!   primal result alone (no tape), or `{tape, primal result}`, or for a `void` `f` the
//!   tape alone (or nothing). `f_rev` takes the same arguments, then the differential of
//!   the result when `f` returns a float, then the tape when there is one, and returns the
//!   adjoints of `f`'s float arguments in order (nothing, one float, or a struct of them),
//!   accumulating into the shadows for pointers.
//! - `void* __enzyme_register_derivative_NAME[2] = {f, f_fwd};` (forward mode). `f_fwd`
//!   takes `f`'s arguments, each pointer or float followed by its shadow or tangent, and
//!   returns `{primal result, tangent of the result}` (nothing for a `void` `f`, the
//!   primal alone for an integer result).
//! - `void* __enzyme_function_like[2] = {f, "log1p"};`: calls to `f` are differentiated
//!   with the library function's rule (f computes the primal).
//!
//! A registration replaces synthesis for `f` wherever `f` is differentiated (at the top
//! level of an API call and at every call inside differentiated code), so `f` needs no
//! body in the module. Shapes and signatures are checked when the module's registrations
//! are read; a mismatch is a `BadApiCall` naming the global and the signature expected.
//! Arguments a call site does not differentiate still get what the signature asks for: a
//! null shadow for a pointer without shadow memory, a zero tangent or differential.

use std::collections::HashSet;

use adc_ir::{Constant, FuncId, Module, Signature, Symbol, Type};

use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{carries_derivative, is_float_like, DiffMode};

/// Prefixes of the registration globals (clang may append a suffix to a global's name).
pub const REGISTER_GRADIENT: &str = "__enzyme_register_gradient";
pub const REGISTER_DERIVATIVE: &str = "__enzyme_register_derivative";
pub const FUNCTION_LIKE: &str = "__enzyme_function_like";
/// Prefix of the globals whose initializer lists functions to treat as inactive.
pub const INACTIVE_FN: &str = "__enzyme_inactivefn";

/// A registered reverse-mode pair for `primal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomGradient {
    pub primal: FuncId,
    pub augmented: FuncId,
    pub reverse: FuncId,
    /// The type of the tape `augmented` returns, `None` when it returns none.
    pub tape: Option<Type>,
    /// Whether `augmented` returns the primal result; when it does not (Enzyme's
    /// convention for a result that is not a pointer), the primal function computes it.
    pub augmented_returns_primal: bool,
    /// The registering global, for messages.
    pub global: String,
}

impl CustomGradient {
    /// Whether `augmented` returns `{tape, primal}` (rather than one of them alone).
    pub fn returns_pair(&self, module: &Module) -> bool {
        self.returns_pair_of(&module.functions[self.primal].signature)
    }
}

/// A registered forward-mode derivative for `primal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomDerivative {
    pub primal: FuncId,
    pub forward: FuncId,
    pub global: String,
}

/// Every registration of the module, checked.
#[derive(Clone, Debug, Default)]
pub struct Registrations {
    pub gradients: Vec<CustomGradient>,
    pub derivatives: Vec<CustomDerivative>,
    /// `(f, library function name)`.
    pub function_like: Vec<(FuncId, String)>,
    /// The functions listed in `__enzyme_inactivefn` globals: calls to them carry no
    /// derivative.
    pub inactive: HashSet<FuncId>,
}

impl Registrations {
    /// Reads and checks every registration global of `module`.
    pub fn read(module: &Module) -> Result<Registrations, AdError> {
        let mut found = Registrations::default();
        for global in module.globals.values() {
            let name = global.name.as_str();
            if name.starts_with(INACTIVE_FN) {
                if let Some(init) = &global.init {
                    collect_functions(init, &mut found.inactive);
                }
                continue;
            }
            let kind = if name.starts_with(REGISTER_GRADIENT) {
                REGISTER_GRADIENT
            } else if name.starts_with(REGISTER_DERIVATIVE) {
                REGISTER_DERIVATIVE
            } else if name.starts_with(FUNCTION_LIKE) {
                FUNCTION_LIKE
            } else {
                continue;
            };
            let bad = |reason: String| {
                AdError::new(
                    Site::function(name),
                    AdErrorKind::BadApiCall { api: kind.to_string(), reason },
                )
            };
            let entries = match &global.init {
                Some(Constant::Elements(items)) => items.clone(),
                _ => return Err(bad(format!("@{name} must be initialized with an array"))),
            };
            let function_at = |index: usize| -> Option<FuncId> {
                match entries.get(index) {
                    Some(Constant::Address { symbol: Symbol::Func(f), offset: 0 }) => Some(*f),
                    _ => None,
                }
            };
            let (want, shape) = match kind {
                REGISTER_GRADIENT => (3, "{(void*)f, (void*)augmented_forward, (void*)reverse}"),
                REGISTER_DERIVATIVE => (2, "{(void*)f, (void*)forward_derivative}"),
                _ => (2, "{(void*)f, \"library function name\"}"),
            };
            let functions = if kind == FUNCTION_LIKE { 1 } else { want };
            if entries.len() != want || (0..functions).any(|i| function_at(i).is_none()) {
                return Err(bad(format!(
                    "@{name} has {} entries where {want} functions are expected: {shape}",
                    entries.len()
                )));
            }
            let f = function_at(0).expect("checked above");
            match kind {
                REGISTER_GRADIENT => {
                    let (augmented, reverse) =
                        (function_at(1).expect("checked"), function_at(2).expect("checked"));
                    let (tape, augmented_returns_primal) =
                        check_gradient(module, f, augmented, reverse).map_err(bad)?;
                    found.gradients.push(CustomGradient {
                        primal: f,
                        augmented,
                        reverse,
                        tape,
                        augmented_returns_primal,
                        global: name.to_string(),
                    });
                }
                REGISTER_DERIVATIVE => {
                    let forward = function_at(1).expect("checked");
                    check_forward(module, f, forward).map_err(bad)?;
                    found.derivatives.push(CustomDerivative {
                        primal: f,
                        forward,
                        global: name.to_string(),
                    });
                }
                _ => {
                    let library = string_at(module, &entries[1]).ok_or_else(|| {
                        bad(format!("the second entry of @{name} must be a string: {shape}"))
                    })?;
                    if crate::rules::lookup_call(&library).is_none() {
                        return Err(bad(format!(
                            "@{name} names \"{library}\", which has no derivative rule"
                        )));
                    }
                    found.function_like.push((f, library));
                }
            }
        }
        Ok(found)
    }

    pub fn gradient(&self, f: FuncId) -> Option<&CustomGradient> {
        self.gradients.iter().find(|g| g.primal == f)
    }

    pub fn derivative(&self, f: FuncId) -> Option<&CustomDerivative> {
        self.derivatives.iter().find(|d| d.primal == f)
    }

    pub fn like(&self, f: FuncId) -> Option<&str> {
        self.function_like.iter().find(|(g, _)| *g == f).map(|(_, name)| name.as_str())
    }

    /// Whether `f` is the primal of any registration (gradient, derivative, function-like).
    pub fn is_registered(&self, f: FuncId) -> bool {
        self.gradient(f).is_some() || self.derivative(f).is_some() || self.like(f).is_some()
    }

    /// Whether `f` is listed in an `__enzyme_inactivefn` global.
    pub fn is_inactive(&self, f: FuncId) -> bool {
        self.inactive.contains(&f)
    }
}

/// The functions whose address a constant holds, at any depth of an array.
fn collect_functions(constant: &Constant, into: &mut HashSet<FuncId>) {
    match constant {
        Constant::Address { symbol: Symbol::Func(f), .. } => {
            into.insert(*f);
        }
        Constant::Elements(items) => items.iter().for_each(|c| collect_functions(c, into)),
        _ => {}
    }
}

/// Whether a registered rule stands in for synthesizing `function` in `mode`, so that it
/// needs no body in the module. Malformed registrations count as none here; they are
/// reported when the registrations are read.
pub fn replaces_synthesis(module: &Module, function: FuncId, mode: DiffMode) -> bool {
    let Ok(found) = Registrations::read(module) else { return false };
    match mode {
        DiffMode::Reverse => found.gradient(function).is_some(),
        DiffMode::Forward => found.derivative(function).is_some(),
    }
}

/// The C string a constant points to (a global holding `"log1p\0"`).
fn string_at(module: &Module, entry: &Constant) -> Option<String> {
    let Constant::Address { symbol: Symbol::Global(g), offset: 0 } = entry else { return None };
    let bytes: Vec<u8> = match module.globals[*g].init.as_ref()? {
        Constant::Bytes(bytes) => bytes.clone(),
        Constant::Elements(items) => items
            .iter()
            .map(|c| match c {
                Constant::Int(v) => u8::try_from(*v).ok(),
                Constant::Zero => Some(0),
                _ => None,
            })
            .collect::<Option<Vec<u8>>>()?,
        _ => return None,
    };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    String::from_utf8(bytes[..end].to_vec()).ok()
}

/// `f`'s arguments with a shadow after each pointer (reverse mode) or after each pointer
/// and float (forward mode, `with_tangents`).
pub(crate) fn shadowed_params(primal: &Signature, with_tangents: bool) -> Vec<Type> {
    let mut params = Vec::new();
    for ty in &primal.params {
        params.push(ty.clone());
        if ty.is_ptr() || (with_tangents && is_float_like(ty)) {
            params.push(ty.clone());
        }
    }
    params
}

/// The adjoints a custom reverse function returns: one per float argument of `f`.
pub(crate) fn adjoint_types(primal: &Signature) -> Vec<Type> {
    primal.params.iter().filter(|t| is_float_like(t)).cloned().collect()
}

pub(crate) fn pack(types: &[Type]) -> Option<Type> {
    match types.len() {
        0 => None,
        1 => Some(types[0].clone()),
        _ => Some(Type::structure(types.to_vec(), false)),
    }
}

fn render(params: &[Type], ret: Option<&Type>) -> String {
    let params: Vec<String> = params.iter().map(|t| t.to_string()).collect();
    match ret {
        Some(ret) => format!("({}) -> {ret}", params.join(", ")),
        None => format!("({})", params.join(", ")),
    }
}

fn render_sig(sig: &Signature) -> String {
    render(&sig.params, sig.ret.as_ref())
}

/// Checks a gradient registration against `f`'s signature; returns the tape type and
/// whether the augmented forward function returns the primal result.
fn check_gradient(
    module: &Module,
    f: FuncId,
    augmented: FuncId,
    reverse: FuncId,
) -> Result<(Option<Type>, bool), String> {
    let primal = &module.functions[f].signature;
    let (aug_fn, rev_fn) = (&module.functions[augmented], &module.functions[reverse]);
    let f_name = &module.functions[f].name;
    let params = shadowed_params(primal, false);
    if aug_fn.signature.params != params {
        return Err(format!(
            "the augmented forward function @{} has the signature {}; for @{f_name}{} its \
             parameters must be ({}) (each pointer followed by its shadow)",
            aug_fn.name,
            render_sig(&aug_fn.signature),
            render_sig(primal),
            render(&params, None).trim_start_matches('(').trim_end_matches(')')
        ));
    }
    let aug_ret = aug_fn.signature.ret.as_ref();
    let (tape, returns_primal) = match (&primal.ret, aug_ret) {
        (None, ret) => (ret.cloned(), false),
        (Some(r), Some(a)) if a == r => (None, true),
        (Some(r), Some(Type::Struct(s))) if s.fields.len() == 2 && s.fields[1] == *r => {
            (Some(s.fields[0].clone()), true)
        }
        // Enzyme's convention: the augmented function returns the primal result only when
        // it is a pointer; otherwise `f` itself computes it.
        (Some(r), None) if !r.is_ptr() => (None, false),
        (Some(r), _) => {
            return Err(format!(
                "the augmented forward function @{} returns {}; for @{f_name}, which returns \
                 {r}, it must return {r} (no tape), {{tape, {r}}} or nothing",
                aug_fn.name,
                aug_ret.map_or("void".to_string(), |t| t.to_string())
            ))
        }
    };
    let mut rev_params = params.clone();
    if let Some(r) = primal.ret.as_ref().filter(|r| is_float_like(r)) {
        rev_params.push(r.clone());
    }
    rev_params.extend(tape.clone());
    let adjoints = pack(&adjoint_types(primal));
    if rev_fn.signature.params != rev_params || rev_fn.signature.ret != adjoints {
        return Err(format!(
            "the reverse function @{} has the signature {}; for @{f_name}{} it must be {} \
             (the arguments with shadows, the differential of a float result, the tape; it \
             returns the adjoints of the float arguments)",
            rev_fn.name,
            render_sig(&rev_fn.signature),
            render_sig(primal),
            render(&rev_params, adjoints.as_ref())
        ));
    }
    Ok((tape, returns_primal))
}

/// The result a custom forward derivative returns for `f`'s result type.
pub(crate) fn forward_result(primal: &Signature) -> Option<Type> {
    match &primal.ret {
        None => None,
        Some(r) if r.is_ptr() || carries_derivative(r) => {
            Some(Type::structure(vec![r.clone(), r.clone()], false))
        }
        Some(r) => Some(r.clone()),
    }
}

fn check_forward(module: &Module, f: FuncId, forward: FuncId) -> Result<(), String> {
    let primal = &module.functions[f].signature;
    let fwd = &module.functions[forward];
    let params = shadowed_params(primal, true);
    let ret = forward_result(primal);
    if fwd.signature.params != params || fwd.signature.ret != ret {
        return Err(format!(
            "the forward derivative @{} has the signature {}; for @{}{} it must be {} (each \
             pointer or float followed by its shadow or tangent; it returns {{primal, \
             tangent}} of the result)",
            fwd.name,
            render_sig(&fwd.signature),
            module.functions[f].name,
            render_sig(primal),
            render(&params, ret.as_ref())
        ));
    }
    Ok(())
}

impl CustomGradient {
    pub(crate) fn returns_pair_of(&self, primal: &Signature) -> bool {
        self.tape.is_some() && primal.ret.is_some()
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;

    use super::*;
    use crate::request::{RetActivity, Synthesize};
    use crate::Differentiator;

    /// `sq(x) = x²` with a registered pair whose reverse reports 3·2x (so its use is
    /// visible), and `f(x) = sq(x) + x` calling it.
    const REGISTERED: &str = "
func @sq(%x: f64) -> f64 noinline {
^entry:
  %y = fmul f64 %x, %x
  ret %y
}
func @sq_aug(%x: f64) -> {ptr, f64} {
^entry:
  %y = fmul f64 %x, %x
  %u = const {ptr, f64} undef
  %n = const ptr null
  %a = insertvalue {ptr, f64} %u, %n, 0
  %b = insertvalue {ptr, f64} %a, %y, 1
  ret %b
}
func @sq_rev(%x: f64, %d: f64, %tape: ptr) -> f64 {
^entry:
  %six = const f64 6.0
  %s = fmul f64 %six, %x
  %r = fmul f64 %s, %d
  ret %r
}
global @__enzyme_register_gradient_sq: [3 x ptr], align 8 = [@sq, @sq_aug, @sq_rev]
func @f(%x: f64) -> f64 {
^entry:
  %y = call @sq(%x)
  %z = fadd f64 %y, %x
  ret %z
}
";

    #[test]
    fn registrations_are_read_with_their_tape() {
        let module = parse_module(REGISTERED).unwrap();
        let found = Registrations::read(&module).unwrap();
        let sq = module.function_by_name("sq").unwrap();
        let gradient = found.gradient(sq).expect("registered");
        assert_eq!(gradient.tape, Some(Type::PTR));
        assert!(gradient.returns_pair(&module));
        assert!(found.is_registered(sq));
        assert!(replaces_synthesis(&module, sq, DiffMode::Reverse));
        assert!(!replaces_synthesis(&module, sq, DiffMode::Forward));
    }

    #[test]
    fn a_registered_gradient_replaces_synthesis_at_calls_and_at_the_top() {
        let mut module = parse_module(REGISTERED).unwrap();
        let mut d = Differentiator::default();
        let f = module.function_by_name("f").unwrap();
        let sq = module.function_by_name("sq").unwrap();
        let active = vec![crate::ArgActivity::Active];
        let in_call = crate::DiffRequest::reverse(f, active.clone(), RetActivity::Active);
        let top = crate::DiffRequest::reverse(sq, active, RetActivity::Active);
        let df = d.derivative(&mut module, &in_call).unwrap();
        let dsq = d.derivative(&mut module, &top).unwrap();
        adc_ir::verify::verify_module(&module).unwrap();
        let mut interp = Interpreter::new(&module).unwrap();
        assert_eq!(interp.call(df, &[Val::F64(2.0)]).unwrap(), Some(Val::F64(6.0 * 2.0 + 1.0)));
        assert_eq!(interp.call(dsq, &[Val::F64(2.0)]).unwrap(), Some(Val::F64(12.0)));
    }

    #[test]
    fn malformed_registrations_are_errors_naming_the_global() {
        let wrong_shape = REGISTERED.replace(
            "[3 x ptr], align 8 = [@sq, @sq_aug, @sq_rev]",
            "[2 x ptr], align 8 = [@sq, @sq_rev]",
        );
        let err = Registrations::read(&parse_module(&wrong_shape).unwrap()).unwrap_err();
        assert!(err.to_string().contains("has 2 entries where 3 functions"), "{err}");
        let wrong_reverse = REGISTERED.replace(
            "func @sq_rev(%x: f64, %d: f64, %tape: ptr)",
            "func @sq_rev(%x: f64, %d: f64)",
        );
        let err = Registrations::read(&parse_module(&wrong_reverse).unwrap()).unwrap_err();
        assert!(err.to_string().contains("it must be (f64, f64, ptr) -> f64"), "{err}");
    }

    #[test]
    fn function_like_names_a_library_rule() {
        let text = "
global internal const @name: [6 x i8], align 1 = c\"log1p\\00\"
global @__enzyme_function_like: [2 x ptr], align 8 = [@g, @name]
func @g(%x: f64) -> f64 noinline {
^entry:
  ret %x
}
";
        let module = parse_module(text).unwrap();
        let g = module.function_by_name("g").unwrap();
        assert_eq!(Registrations::read(&module).unwrap().like(g), Some("log1p"));
        let unknown = text.replace("c\"log1p\\00\"", "c\"nolib\\00\"");
        let err = Registrations::read(&parse_module(&unknown).unwrap()).unwrap_err();
        assert!(err.to_string().contains("no derivative rule"), "{err}");
    }
}
