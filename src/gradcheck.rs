//! `test gradient` filetests: synthesize a reverse-mode derivative and check it against
//! central finite differences of the primal, in the reference interpreter.
//!
//! ```text
//! ; test gradient
//! ; function: @f(active, dup, const) -> active     <- the request (activities in order)
//! ; tolerance: 1e-6                                 <- optional (default 1e-5 for f64 data,
//! ;                                                    2e-2 when any checked value is f32)
//! ; gradcheck: @f(1.5, [f64 1.0, 2.0], 3)           <- inputs; `[T ...]` for pointers
//! ; error: call to @g                               <- instead of gradchecks: synthesis
//! ;                                                    must fail with this text
//! ; check: __adc_tape_push                          <- filecheck on the printed module
//! ; cache: +tape-reuse                              <- optional cache-planner words applied
//!                                                      after `ADC_CACHE` (pins a setting)
//! ```
//!
//! The scalar checked is `J = sum of the float leaves of the result (when active) +
//! Σ w_k · (final value of float leaf k of each dup buffer)`, with fixed weights `w_k`.
//! The derivative is called with each dup buffer's shadow holding `w` in its float leaves
//! (integer leaves copy the primal) and must return `∂J/∂x` for active arguments and leave
//! `∂J/∂(initial buffer)` in the shadows. Each is compared with `(J(x+h) - J(x-h)) / 2h`,
//! `h = step · max(1, |x|)` (step 1e-6 for f64, 1e-3 for f32), as
//! `|ad - fd| <= tolerance · max(1, |fd|)`. The derivative's final primal buffers must
//! equal the primal's bit for bit: the forward pass has the primal's effects.

use std::path::Path;

use adc_ad::{ArgActivity, DiffRequest, Differentiator, RetActivity, Synthesize};
use adc_ir::interp::{Interpreter, Val};
use adc_ir::text::{parse_module, print_module};
use adc_ir::verify::verify_module;
use adc_ir::{FuncId, Module, Type};

use crate::invocation::{literal_to_val, Invocation, Literal};

/// The directives of a gradient filetest.
#[derive(Debug)]
pub struct GradientTest {
    pub function: String,
    pub args: Vec<ArgActivity>,
    pub ret: RetActivity,
    pub tolerance: Option<f64>,
    /// (line, invocation)
    pub checks: Vec<(usize, String)>,
    /// `; cache:` words, applied after `ADC_CACHE`.
    pub cache: Vec<String>,
}

fn parse_activity(word: &str) -> Result<ArgActivity, String> {
    Ok(match word {
        "const" => ArgActivity::Const,
        "active" => ArgActivity::Active,
        "dup" => ArgActivity::Dup,
        "dupnoneed" => ArgActivity::DupNoNeed,
        other => return Err(format!("unknown activity `{other}` (const, active, dup, dupnoneed)")),
    })
}

/// Reads `@f(active, dup) -> active`.
fn parse_function_line(text: &str) -> Result<(String, Vec<ArgActivity>, RetActivity), String> {
    let bad = || format!("expected `; function: @f(activity, ...) -> active|const`, got `{text}`");
    let text = text.trim();
    let rest = text.strip_prefix('@').ok_or_else(bad)?;
    let (name, rest) = rest.split_once('(').ok_or_else(bad)?;
    let (args, rest) = rest.split_once(')').ok_or_else(bad)?;
    let args = args
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(parse_activity)
        .collect::<Result<Vec<_>, _>>()?;
    let ret = match rest.trim() {
        "" | "-> const" => RetActivity::Const,
        "-> active" => RetActivity::Active,
        _ => return Err(bad()),
    };
    Ok((name.trim().to_string(), args, ret))
}

impl GradientTest {
    pub fn from_source(source: &str) -> Result<GradientTest, String> {
        let mut function = None;
        let mut tolerance = None;
        let mut checks = Vec::new();
        let mut cache = Vec::new();
        for (index, line) in source.lines().enumerate() {
            let Some(comment) = line.trim_start().strip_prefix(';') else { continue };
            let comment = comment.trim();
            if let Some(rest) = comment.strip_prefix("function:") {
                function = Some(
                    parse_function_line(rest).map_err(|e| format!("line {}: {e}", index + 1))?,
                );
            } else if let Some(rest) = comment.strip_prefix("tolerance:") {
                let t = rest.trim().parse::<f64>();
                tolerance =
                    Some(t.map_err(|_| {
                        format!("line {}: bad tolerance `{}`", index + 1, rest.trim())
                    })?);
            } else if let Some(rest) = comment.strip_prefix("gradcheck:") {
                checks.push((index + 1, rest.trim().to_string()));
            } else if let Some(rest) = comment.strip_prefix("cache:") {
                cache.extend(rest.split(',').map(|w| w.trim().to_string()));
            }
        }
        let (function, args, ret) = function.ok_or("a gradient test needs a `; function:` line")?;
        Ok(GradientTest { function, args, ret, tolerance, checks, cache })
    }
}

/// Runs a gradient filetest; `errors` are the `; error:` lines, `check` applies the
/// filecheck directives to the printed module.
pub fn run(
    path: &Path,
    source: &str,
    errors: &[String],
    check: &dyn Fn(&str) -> Result<(), String>,
) -> Result<(), String> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let test = GradientTest::from_source(source)?;
    let mut module = parse_module(source).map_err(|d| d.render(&file_name, source))?;
    verify_module(&module).map_err(|d| d.render(&file_name, source))?;
    let primal = module
        .function_by_name(&test.function)
        .ok_or_else(|| format!("no function @{} in the module", test.function))?;
    let request = DiffRequest::reverse(primal, test.args.clone(), test.ret);
    // `ADC_CACHE` runs the suite under another cache-planner setting.
    let mut cache = adc_ad::cache::CacheOptions::from_env()?;
    for word in &test.cache {
        cache.apply(word)?;
    }
    let mut differentiator =
        Differentiator::new(adc_ad::DifferentiatorOptions { cache, ..Default::default() });
    let derivative = match differentiator.derivative(&mut module, &request) {
        Ok(id) if errors.is_empty() => id,
        Ok(_) => {
            return Err(format!("expected an error containing {errors:?}, but synthesis succeeded"))
        }
        Err(e) => {
            let message = e.to_string();
            if errors.is_empty() {
                return Err(format!("synthesis failed: {message}"));
            }
            let missing: Vec<_> = errors.iter().filter(|t| !message.contains(t.as_str())).collect();
            if missing.is_empty() {
                return Ok(());
            }
            return Err(format!("expected an error containing {missing:?}, got: {message}"));
        }
    };
    let printed = print_module(&module);
    verify_module(&module)
        .map_err(|d| format!("{}\n{printed}", d.render("derivative", &printed)))?;
    let reparsed = parse_module(&printed).map_err(|d| {
        format!("the printed derivative does not parse:\n{}", d.render("derivative", &printed))
    })?;
    if print_module(&reparsed) != printed {
        return Err("printing the module with the derivative is not a fixed point".into());
    }
    check(&printed)?;
    if test.checks.is_empty() {
        return Err("a gradient test needs `; gradcheck:` lines (or `; error:` lines)".into());
    }
    for (line, text) in &test.checks {
        gradcheck(&module, primal, derivative, &test, text)
            .map_err(|e| format!("line {line}: `{text}`: {e}\n{printed}"))?;
    }
    Ok(())
}

/// One argument as the harness materializes it.
#[derive(Clone, Debug)]
enum Input {
    Scalar(Val),
    Buffer { elem: Type, values: Vec<Val> },
}

/// Results of one primal run: the return value and the final contents of every buffer.
struct Run {
    ret: Option<Val>,
    buffers: Vec<Vec<Val>>,
}

fn gradcheck(
    module: &Module,
    primal: FuncId,
    derivative: FuncId,
    test: &GradientTest,
    text: &str,
) -> Result<(), String> {
    let invocation = Invocation::parse(text)?;
    if invocation.function != test.function {
        return Err(format!(
            "the gradcheck calls @{}, the test differentiates @{}",
            invocation.function, test.function
        ));
    }
    let params = module.functions[primal].signature.params.clone();
    if invocation.args.len() != params.len() {
        return Err(format!("@{} takes {} arguments", test.function, params.len()));
    }
    let mut inputs = Vec::new();
    let mut has_f32 = false;
    for (arg, ty) in invocation.args.iter().zip(&params) {
        let input = match (&arg.literal, ty) {
            (Literal::List { elem: Some(elem), items }, Type::Ptr(_)) => {
                has_f32 |= elem.lane_type() == &Type::F32 || contains_f32(elem);
                let values =
                    items.iter().map(|l| literal_to_val(l, elem)).collect::<Result<_, _>>()?;
                Input::Buffer { elem: elem.clone(), values }
            }
            (Literal::List { elem: None, .. }, Type::Ptr(_)) => {
                return Err("a buffer argument needs an element type: [f64 1.0, 2.0]".into())
            }
            (literal, ty) => {
                has_f32 |= contains_f32(ty);
                Input::Scalar(literal_to_val(literal, ty)?)
            }
        };
        inputs.push(input);
    }
    if let Some(ret) = &module.functions[primal].signature.ret {
        has_f32 |= test.ret == RetActivity::Active && contains_f32(ret);
    }
    let tolerance = test.tolerance.unwrap_or(if has_f32 { 2e-2 } else { 1e-5 });
    let base = run_primal(module, primal, &inputs)?;
    let weights = |buffer: usize, leaf: usize| 0.5 + 0.125 * ((leaf * 7 + buffer * 3) % 8) as f64;
    let objective = |run: &Run| -> f64 {
        let mut j = 0.0;
        if test.ret == RetActivity::Active {
            if let Some(ret) = &run.ret {
                j += leaves(ret).iter().sum::<f64>();
            }
        }
        let mut buffer = 0;
        for (input, activity) in inputs.iter().zip(&test.args) {
            if let Input::Buffer { .. } = input {
                if activity.has_shadow() {
                    let flat: Vec<f64> = run.buffers[buffer].iter().flat_map(leaves).collect();
                    j += flat.iter().enumerate().map(|(k, x)| weights(buffer, k) * x).sum::<f64>();
                }
                buffer += 1;
            }
        }
        j
    };

    // The derivative: primal arguments, shadows seeded with the weights.
    let mut interp = Interpreter::new(module).map_err(|e| e.to_string())?;
    let mut args = Vec::new();
    let mut primal_buffers = Vec::new();
    let mut shadow_buffers = Vec::new();
    let mut buffer = 0;
    for (input, activity) in inputs.iter().zip(&test.args) {
        match input {
            Input::Scalar(v) => args.push(v.clone()),
            Input::Buffer { elem, values } => {
                let ptr = interp.alloc(elem, values).map_err(|e| e.to_string())?;
                args.push(ptr.clone());
                primal_buffers.push((ptr, elem.clone(), values.len()));
                if activity.has_shadow() {
                    let mut leaf = 0;
                    let seeded: Vec<Val> = values
                        .iter()
                        .map(|v| {
                            seed_leaves(v, &mut |_| {
                                leaf += 1;
                                weights(buffer, leaf - 1)
                            })
                        })
                        .collect();
                    let shadow = interp.alloc(elem, &seeded).map_err(|e| e.to_string())?;
                    args.push(shadow.clone());
                    shadow_buffers.push((buffer, shadow, elem.clone(), values.len()));
                }
                buffer += 1;
            }
        }
    }
    let result = interp
        .call(derivative, &args)
        .map_err(|e| format!("the derivative failed: {}", e.to_diagnostic()))?;
    for (index, (ptr, elem, len)) in primal_buffers.iter().enumerate() {
        let got = interp.read(ptr, elem, *len).map_err(|e| e.to_string())?;
        if !same_values(&got, &base.buffers[index]) {
            return Err(format!(
                "the derivative's primal effects differ: buffer {index} holds {got:?}, the primal leaves {:?}",
                base.buffers[index]
            ));
        }
    }

    // Adjoints computed by the derivative, in the order finite differences visit them.
    let mut failures = Vec::new();
    let mut returned: Vec<Val> =
        match (&result, test.args.iter().filter(|a| **a == ArgActivity::Active).count()) {
            (_, 0) => Vec::new(),
            (Some(v), 1) => vec![v.clone()],
            (Some(Val::Aggregate(fields)), _) => fields.clone(),
            (other, _) => {
                return Err(format!("the derivative returned {other:?}, expected the adjoints"))
            }
        };
    returned.reverse();
    let mut buffer = 0;
    let mut checked = 0;
    for (index, (input, activity)) in inputs.iter().zip(&test.args).enumerate() {
        match (input, activity) {
            (Input::Scalar(value), ArgActivity::Active) => {
                let adjoint = returned.pop().ok_or("missing adjoint")?;
                let ad = leaves(&adjoint);
                for (leaf, ad) in ad.iter().enumerate() {
                    let fd = central_difference(
                        module, primal, &inputs, &objective, index, None, leaf, value,
                    )?;
                    checked += 1;
                    if !close(*ad, fd, tolerance) {
                        failures.push(format!(
                            "d/d arg{index} leaf {leaf}: derivative {ad}, finite differences {fd}"
                        ));
                    }
                }
            }
            (Input::Buffer { values, .. }, a) if a.has_shadow() => {
                let (_, shadow, elem, len) =
                    shadow_buffers.iter().find(|(b, ..)| *b == buffer).ok_or("no shadow")?;
                let got = interp.read(shadow, elem, *len).map_err(|e| e.to_string())?;
                let ad: Vec<f64> = got.iter().flat_map(leaves).collect();
                let mut leaf = 0;
                for (element, value) in values.iter().enumerate() {
                    for inner in 0..leaves(value).len() {
                        let fd = central_difference(
                            module,
                            primal,
                            &inputs,
                            &objective,
                            index,
                            Some(element),
                            inner,
                            value,
                        )?;
                        checked += 1;
                        if !close(ad[leaf], fd, tolerance) {
                            failures.push(format!(
                                "d/d arg{index}[{element}] leaf {inner}: derivative {}, finite differences {fd}",
                                ad[leaf]
                            ));
                        }
                        leaf += 1;
                    }
                }
                buffer += 1;
            }
            (Input::Buffer { .. }, _) => buffer += 1,
            _ => {}
        }
    }
    if checked == 0 {
        return Err(
            "nothing to check: no active argument and no float data behind a dup pointer".into()
        );
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("gradients differ (tolerance {tolerance}):\n  {}", failures.join("\n  ")))
    }
}

#[allow(clippy::too_many_arguments)]
fn central_difference(
    module: &Module,
    primal: FuncId,
    inputs: &[Input],
    objective: &dyn Fn(&Run) -> f64,
    arg: usize,
    element: Option<usize>,
    leaf: usize,
    value: &Val,
) -> Result<f64, String> {
    let x = leaves(value)[leaf];
    let step = if leaf_is_f32(value, leaf) { 1e-3 } else { 1e-6 };
    let h = step * x.abs().max(1.0);
    let evaluate = |delta: f64| -> Result<f64, String> {
        let mut shifted = inputs.to_vec();
        let target = match (&mut shifted[arg], element) {
            (Input::Scalar(v), None) => v,
            (Input::Buffer { values, .. }, Some(e)) => &mut values[e],
            _ => return Err("internal: perturbation target mismatch".into()),
        };
        *target = perturb(target, leaf, delta);
        Ok(objective(&run_primal(module, primal, &shifted)?))
    };
    let plus = evaluate(h)?;
    let minus = evaluate(-h)?;
    Ok((plus - minus) / (2.0 * h))
}

fn run_primal(module: &Module, primal: FuncId, inputs: &[Input]) -> Result<Run, String> {
    let mut interp = Interpreter::new(module).map_err(|e| e.to_string())?;
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for input in inputs {
        match input {
            Input::Scalar(v) => args.push(v.clone()),
            Input::Buffer { elem, values } => {
                let ptr = interp.alloc(elem, values).map_err(|e| e.to_string())?;
                args.push(ptr.clone());
                buffers.push((ptr, elem.clone(), values.len()));
            }
        }
    }
    let ret = interp
        .call(primal, &args)
        .map_err(|e| format!("the primal failed: {}", e.to_diagnostic()))?;
    let buffers = buffers
        .iter()
        .map(|(ptr, elem, len)| interp.read(ptr, elem, *len).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Ok(Run { ret, buffers })
}

fn close(ad: f64, fd: f64, tolerance: f64) -> bool {
    (ad - fd).abs() <= tolerance * fd.abs().max(1.0)
}

fn contains_f32(ty: &Type) -> bool {
    match ty {
        Type::F32 => true,
        Type::Vector(e, _) | Type::Array(e, _) => contains_f32(e),
        Type::Struct(s) => s.fields.iter().any(contains_f32),
        _ => false,
    }
}

/// The float leaves of a value, in order, as f64.
fn leaves(value: &Val) -> Vec<f64> {
    match value {
        Val::F64(x) => vec![*x],
        Val::F32(x) => vec![f64::from(*x)],
        Val::Vector(items) | Val::Aggregate(items) => items.iter().flat_map(leaves).collect(),
        _ => Vec::new(),
    }
}

fn leaf_is_f32(value: &Val, leaf: usize) -> bool {
    fn walk(value: &Val, leaf: &mut usize) -> Option<bool> {
        match value {
            Val::F64(_) | Val::F32(_) => {
                if *leaf == 0 {
                    return Some(matches!(value, Val::F32(_)));
                }
                *leaf -= 1;
                None
            }
            Val::Vector(items) | Val::Aggregate(items) => items.iter().find_map(|i| walk(i, leaf)),
            _ => None,
        }
    }
    let mut leaf = leaf;
    walk(value, &mut leaf).unwrap_or(false)
}

/// `value` with float leaf number `leaf` shifted by `delta`.
fn perturb(value: &Val, leaf: usize, delta: f64) -> Val {
    let mut index = 0;
    seed_leaves(value, &mut |x| {
        let shifted = if index == leaf { x + delta } else { x };
        index += 1;
        shifted
    })
}

/// Rebuilds `value` with every float leaf replaced by `f(old leaf)`.
fn seed_leaves(value: &Val, f: &mut dyn FnMut(f64) -> f64) -> Val {
    match value {
        Val::F64(x) => Val::F64(f(*x)),
        Val::F32(x) => Val::F32(f(f64::from(*x)) as f32),
        Val::Vector(items) => Val::Vector(items.iter().map(|i| seed_leaves(i, f)).collect()),
        Val::Aggregate(items) => Val::Aggregate(items.iter().map(|i| seed_leaves(i, f)).collect()),
        other => other.clone(),
    }
}

fn same_values(a: &[Val], b: &[Val]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| crate::invocation::matches_expected(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_line_is_parsed() {
        let (name, args, ret) = parse_function_line(" @f(active, dup, const) -> active").unwrap();
        assert_eq!(name, "f");
        assert_eq!(args, vec![ArgActivity::Active, ArgActivity::Dup, ArgActivity::Const]);
        assert_eq!(ret, RetActivity::Active);
        assert!(parse_function_line("@f(bogus)").is_err());
        assert!(parse_function_line("f(active)").is_err());
    }

    /// The comparison catches a wrong derivative: `2x` is right for `x*x`, `3x` is not.
    #[test]
    fn wrong_derivatives_are_caught() {
        let text = "
func @f(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  ret %y
}
func @right(%x: f64) -> f64 {
^entry:
  %two = const f64 2.0
  %y = fmul f64 %x, %two
  ret %y
}
func @wrong(%x: f64) -> f64 {
^entry:
  %three = const f64 3.0
  %y = fmul f64 %x, %three
  ret %y
}
";
        let module = parse_module(text).unwrap();
        let f = module.function_by_name("f").unwrap();
        let test = GradientTest {
            function: "f".into(),
            args: vec![ArgActivity::Active],
            ret: RetActivity::Active,
            tolerance: None,
            checks: Vec::new(),
            cache: Vec::new(),
        };
        let right = module.function_by_name("right").unwrap();
        let wrong = module.function_by_name("wrong").unwrap();
        gradcheck(&module, f, right, &test, "@f(1.5)").unwrap();
        let err = gradcheck(&module, f, wrong, &test, "@f(1.5)").unwrap_err();
        assert!(err.contains("derivative 4.5"), "{err}");
    }
}
