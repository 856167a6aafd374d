//! `test tangent` filetests: forward-mode derivatives checked against central finite
//! differences of the primal, both run by the reference interpreter.
//!
//! ```text
//! ; test tangent
//! ; tangent: @f(dup, const, dup) -> active        <- the request: one activity per parameter
//! ;                                                   (const | dup | dupnoneed), and the
//! ;                                                   return's (const | active | dup)
//! ; tangentcheck: @f(1.5, 3, [f64 1.0, 2.0]) along (0.5, _, [f64 1.0, 0.0])
//! ; tolerance: 1e-6                               <- optional relative tolerance
//! ; width: 4                                      <- optional: vector forward mode
//! ; error: cannot differentiate                    <- synthesis must fail with this text
//! ```
//!
//! The derivative is synthesized as `@<name>.fwd`; `; check:` lines see the printed module
//! with it, and `; run:` lines may call it. Each `tangentcheck` line gives the inputs
//! (buffers `[T ...]` for pointers) and a direction: `_` for a `const` argument, a value
//! (or buffer of the same length) for a `dup` one. The check runs the derivative with the
//! direction as the shadows, and the primal at `x ± h·v`; the tangents of the return value
//! (`active`/`dup`) and of the final contents of every `dup` buffer must match
//! `(f(x + h·v) - f(x - h·v)) / 2h` within the tolerance, relative to `max(1, |fd|)`. The
//! derivative's primal results (the returned primal of `dup`, the final contents of every
//! buffer but `dupnoneed` ones) must equal the primal's bit for bit.
//!
//! With `; width: N` the derivative is vector forward mode: lane k runs along the
//! direction times k+1, and its tangents must match (k+1) times the finite differences.
//! The same derivative is also synthesized with lane packing off (`-lane-packing`):
//! both must give the same results, since packing is an exact rewrite.

use std::collections::HashMap;

use adc_ad::forward::{synthesize_forward, synthesize_forward_with, ForwardOptions};
use adc_ad::{ArgActivity, DiffMode, DiffRequest, RetActivity};
use adc_ir::interp::{Interpreter, Val};
use adc_ir::verify::verify_module;
use adc_ir::{Module, Type};

use crate::invocation::{literal_to_val, Invocation, Literal};

/// What the header of a `test tangent` file asks for.
#[derive(Debug)]
struct TangentSpec {
    function: String,
    args: Vec<ArgActivity>,
    ret: RetActivity,
    /// (line number, text after `tangentcheck:`)
    checks: Vec<(usize, String)>,
    tolerance: Option<f64>,
    /// Lanes of vector forward mode (1: plain forward mode).
    width: u32,
}

/// Synthesizes the derivative the header asks for, runs every `tangentcheck` line, and
/// returns the module with the derivative added (for `; check:` and `; run:` lines).
/// `expected_errors` non-empty means synthesis must fail with messages containing them.
pub fn check(module: &Module, source: &str, expected_errors: &[String]) -> Result<Module, String> {
    let spec = parse_spec(source)?;
    let function = module
        .function_by_name(&spec.function)
        .ok_or_else(|| format!("no function @{} in the module", spec.function))?;
    let request = DiffRequest {
        function,
        mode: DiffMode::Forward,
        args: spec.args.clone(),
        ret: spec.ret,
        width: spec.width,
    };
    let name = derivative_name(&spec.function);
    let mut derived = module.clone();
    match (synthesize_forward(&mut derived, &request, &name), expected_errors.is_empty()) {
        (Ok(_), true) => {}
        (Ok(_), false) => {
            return Err(format!(
                "expected synthesis to fail with {expected_errors:?}, but it succeeded"
            ))
        }
        (Err(e), true) => return Err(format!("forward synthesis failed: {e}")),
        (Err(e), false) => {
            let message = e.to_string();
            let missing: Vec<_> =
                expected_errors.iter().filter(|x| !message.contains(x.as_str())).collect();
            if missing.is_empty() {
                return Ok(module.clone());
            }
            return Err(format!("expected an error containing {missing:?}, got: {message}"));
        }
    }
    verify_module(&derived).map_err(|d| format!("the derivative does not verify: {d}"))?;
    let unpacked = if spec.width > 1 {
        let mut unpacked = module.clone();
        let options = ForwardOptions { lane_packing: false };
        synthesize_forward_with(
            &mut unpacked,
            &request,
            &name,
            &mut HashMap::new(),
            &mut Default::default(),
            options,
        )
        .map_err(|e| format!("forward synthesis without lane packing failed: {e}"))?;
        Some(unpacked)
    } else {
        None
    };
    if spec.checks.is_empty() {
        return Err("a `test tangent` file needs at least one `; tangentcheck:` line".into());
    }
    for (line, text) in &spec.checks {
        check_line(&derived, unpacked.as_ref(), &spec, &name, text)
            .map_err(|e| format!("line {line}: {e}"))?;
    }
    Ok(derived)
}

/// `@f` is differentiated into `@f.fwd`.
pub fn derivative_name(function: &str) -> String {
    format!("{function}.fwd")
}

fn parse_spec(source: &str) -> Result<TangentSpec, String> {
    let mut header = None;
    let mut checks = Vec::new();
    let mut tolerance = None;
    let mut width = 1;
    for (index, line) in source.lines().enumerate() {
        let Some(comment) = line.trim_start().strip_prefix(';') else { continue };
        let comment = comment.trim();
        if let Some(rest) = comment.strip_prefix("tangent:") {
            header =
                Some(parse_header(rest.trim()).map_err(|e| format!("line {}: {e}", index + 1))?);
        } else if let Some(rest) = comment.strip_prefix("tangentcheck:") {
            checks.push((index + 1, rest.trim().to_string()));
        } else if let Some(rest) = comment.strip_prefix("tolerance:") {
            let value = rest
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("line {}: `{}` is not a tolerance", index + 1, rest.trim()))?;
            tolerance = Some(value);
        } else if let Some(rest) = comment.strip_prefix("width:") {
            width =
                rest.trim().parse::<u32>().ok().filter(|w| *w >= 1).ok_or_else(|| {
                    format!("line {}: `{}` is not a width", index + 1, rest.trim())
                })?;
        }
    }
    let (function, args, ret) =
        header.ok_or("no `; tangent: @f(dup, ...) -> active` line in the header")?;
    Ok(TangentSpec { function, args, ret, checks, tolerance, width })
}

/// `@f(dup, const) -> active`
fn parse_header(text: &str) -> Result<(String, Vec<ArgActivity>, RetActivity), String> {
    let bad = || format!("expected `@f(dup, const, ...) -> active|dup|const`, got `{text}`");
    let rest = text.strip_prefix('@').ok_or_else(bad)?;
    let (function, rest) = rest.split_once('(').ok_or_else(bad)?;
    let (args, ret) = rest.split_once(')').ok_or_else(bad)?;
    let ret = ret.trim().strip_prefix("->").ok_or_else(bad)?.trim();
    let mut activities = Vec::new();
    for word in args.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        activities.push(match word {
            "const" => ArgActivity::Const,
            "dup" => ArgActivity::Dup,
            "dupnoneed" => ArgActivity::DupNoNeed,
            "active" => ArgActivity::Active,
            other => return Err(format!("unknown argument activity `{other}`")),
        });
    }
    let ret = match ret {
        "const" => RetActivity::Const,
        "active" => RetActivity::Active,
        "dup" => RetActivity::Dup,
        other => return Err(format!("unknown return activity `{other}`")),
    };
    Ok((function.trim().to_string(), activities, ret))
}

/// One argument of a check: its primal value and, for `dup` ones, the direction.
struct CheckArg {
    ty: Type,
    activity: ArgActivity,
    primal: Input,
    direction: Option<Input>,
}

/// A scalar argument, or the elements of a buffer behind a pointer argument.
#[derive(Clone)]
enum Input {
    Scalar(Val),
    Buffer { elem: Type, items: Vec<Val> },
}

/// What one run produced: the return value and the final contents of every buffer
/// argument (in argument order; `None` for scalar arguments).
#[derive(PartialEq, Debug)]
struct Observed {
    result: Option<Val>,
    buffers: Vec<Option<Vec<Val>>>,
    /// Final contents of the shadow buffers, per lane then per argument (derivative
    /// runs only).
    shadows: Vec<Vec<Option<Vec<Val>>>>,
}

fn check_line(
    module: &Module,
    unpacked: Option<&Module>,
    spec: &TangentSpec,
    derivative: &str,
    text: &str,
) -> Result<(), String> {
    let (inputs, directions) =
        text.split_once(" along ").ok_or("expected `@f(inputs) along (directions)`")?;
    let inputs = Invocation::parse(inputs)?;
    if inputs.function != spec.function {
        return Err(format!(
            "the check calls @{}, the header names @{}",
            inputs.function, spec.function
        ));
    }
    let directions = Invocation::parse(&format!("@{}{}", spec.function, directions.trim()))?;
    let primal_id = module.function_by_name(&spec.function).ok_or("primal vanished")?;
    let params = module.functions[primal_id].signature.params.clone();
    if inputs.args.len() != params.len() || directions.args.len() != params.len() {
        return Err(format!(
            "@{} takes {} arguments; the check gives {} inputs and {} directions",
            spec.function,
            params.len(),
            inputs.args.len(),
            directions.args.len()
        ));
    }
    let mut args = Vec::new();
    for (i, ty) in params.iter().enumerate() {
        let activity = spec.args[i];
        let primal = input(&inputs.args[i].literal, ty)?;
        let direction = match (&directions.args[i].literal, activity.has_shadow()) {
            (Literal::Atom(a), false) if a == "_" => None,
            (_, false) => return Err(format!("argument {i} is const: its direction must be `_`")),
            (literal, true) => {
                let d = input(literal, ty)?;
                if let (
                    Input::Buffer { items: a, elem: ea },
                    Input::Buffer { items: b, elem: eb },
                ) = (&primal, &d)
                {
                    if a.len() != b.len() || ea != eb {
                        return Err(format!("argument {i}: the direction buffer must match the input's type and length"));
                    }
                }
                Some(d)
            }
        };
        args.push(CheckArg { ty: ty.clone(), activity, primal, direction });
    }

    let f32_present = args.iter().any(mentions_f32)
        || module.functions[primal_id].signature.ret.as_ref().is_some_and(type_mentions_f32);
    let (h, default_tol) = if f32_present { (1e-2, 2e-2) } else { (1e-6, 1e-6) };
    let tolerance = spec.tolerance.unwrap_or(default_tol);

    let at_x = run_primal(module, &spec.function, &args, 0.0, h)?;
    let plus = run_primal(module, &spec.function, &args, 1.0, h)?;
    let minus = run_primal(module, &spec.function, &args, -1.0, h)?;
    let width = spec.width as usize;
    let ad = run_derivative(module, derivative, &args, width)?;
    if let Some(unpacked) = unpacked {
        let reference = run_derivative(unpacked, derivative, &args, width)?;
        if ad != reference {
            return Err(format!(
                "lane packing changed the results: {ad:?} packed, {reference:?} unpacked"
            ));
        }
    }

    // The derivative computes the primal too; then come the tangents of every lane.
    let (ad_primal, ad_tangents) = match (spec.ret, &ad.result) {
        (RetActivity::Const, result) => (result.clone(), Vec::new()),
        (RetActivity::Active, Some(t)) if width == 1 => (None, vec![t.clone()]),
        (RetActivity::Active, Some(Val::Aggregate(lanes))) if lanes.len() == width => {
            (None, lanes.clone())
        }
        (RetActivity::Dup, Some(Val::Aggregate(fields))) if fields.len() == width + 1 => {
            (Some(fields[0].clone()), fields[1..].to_vec())
        }
        (_, other) => {
            return Err(format!(
                "the derivative should return the primal and/or {width} tangent(s), got \
                 {other:?}"
            ))
        }
    };
    if spec.ret != RetActivity::Active && ad_primal != at_x.result {
        return Err(format!(
            "the derivative's primal result {:?} differs from the primal's {:?}",
            ad_primal, at_x.result
        ));
    }
    for (i, arg) in args.iter().enumerate() {
        if arg.activity != ArgActivity::DupNoNeed && ad.buffers[i] != at_x.buffers[i] {
            return Err(format!(
                "argument {i}: the derivative leaves the buffer as {:?}, the primal as {:?}",
                ad.buffers[i], at_x.buffers[i]
            ));
        }
    }

    let mut compared = 0;
    for (lane, tangent) in ad_tangents.iter().enumerate() {
        let (p, m) =
            (plus.result.clone().ok_or("no result")?, minus.result.clone().ok_or("no result")?);
        let what = lane_name("the returned tangent", lane, width);
        let tangent = scale(tangent, 1.0 / (lane + 1) as f64);
        compared += compare(&what, &tangent, &p, &m, h, tolerance)?;
    }
    for (lane, shadows) in ad.shadows.iter().enumerate() {
        for (i, arg) in args.iter().enumerate() {
            let (Some(shadow), Some(p), Some(m)) =
                (&shadows[i], &plus.buffers[i], &minus.buffers[i])
            else {
                continue;
            };
            if !arg.activity.has_shadow() {
                continue;
            }
            let what = lane_name(&format!("the shadow of buffer argument {i}"), lane, width);
            compared += compare(
                &what,
                &scale(&Val::Aggregate(shadow.clone()), 1.0 / (lane + 1) as f64),
                &Val::Aggregate(p.clone()),
                &Val::Aggregate(m.clone()),
                h,
                tolerance,
            )?;
        }
    }
    if compared == 0 {
        return Err("the check compares no float: give the return or a dup buffer a tangent".into());
    }
    Ok(())
}

fn mentions_f32(arg: &CheckArg) -> bool {
    type_mentions_f32(&arg.ty)
        || matches!(&arg.primal, Input::Buffer { elem, .. } if type_mentions_f32(elem))
}

fn type_mentions_f32(ty: &Type) -> bool {
    match ty {
        Type::F32 => true,
        Type::Vector(e, _) | Type::Array(e, _) => type_mentions_f32(e),
        Type::Struct(s) => s.fields.iter().any(type_mentions_f32),
        _ => false,
    }
}

fn input(literal: &Literal, ty: &Type) -> Result<Input, String> {
    match (literal, ty) {
        (Literal::List { elem, items }, Type::Ptr(_)) => {
            let elem = elem.clone().ok_or("a buffer needs an element type: [f64 1.0, 2.0]")?;
            let items = items.iter().map(|l| literal_to_val(l, &elem)).collect::<Result<_, _>>()?;
            Ok(Input::Buffer { elem, items })
        }
        (literal, ty) => Ok(Input::Scalar(literal_to_val(literal, ty)?)),
    }
}

/// Runs the primal at `x + step·h·v` (`step` is -1, 0 or 1).
fn run_primal(
    module: &Module,
    function: &str,
    args: &[CheckArg],
    step: f64,
    h: f64,
) -> Result<Observed, String> {
    let func = module.function_by_name(function).ok_or("no primal")?;
    let mut interp = Interpreter::new(module).map_err(|e| e.to_string())?;
    let mut values = Vec::new();
    let mut buffers = Vec::new();
    for arg in args {
        let moved = match &arg.direction {
            Some(direction) if step != 0.0 => shift(&arg.primal, direction, step * h)?,
            _ => arg.primal.clone(),
        };
        let (value, buffer) = materialize(&mut interp, &moved)?;
        values.push(value);
        buffers.push(buffer);
    }
    let result = interp.call(func, &values).map_err(|e| e.to_diagnostic().to_string())?;
    let buffers = read_buffers(&interp, &buffers)?;
    Ok(Observed { result, shadows: Vec::new(), buffers })
}

/// Runs the derivative with `width` lanes; lane k's shadows are the direction times k+1.
fn run_derivative(
    module: &Module,
    derivative: &str,
    args: &[CheckArg],
    width: usize,
) -> Result<Observed, String> {
    let func = module.function_by_name(derivative).ok_or("no derivative")?;
    let mut interp = Interpreter::new(module).map_err(|e| e.to_string())?;
    let mut values = Vec::new();
    let mut buffers = Vec::new();
    let mut shadows = vec![Vec::new(); width];
    for arg in args {
        let (value, buffer) = materialize(&mut interp, &arg.primal)?;
        values.push(value);
        buffers.push(buffer);
        for (lane, lane_shadows) in shadows.iter_mut().enumerate() {
            match &arg.direction {
                Some(direction) => {
                    let direction = scale_input(direction, (lane + 1) as f64);
                    let (shadow, shadow_buffer) = materialize(&mut interp, &direction)?;
                    values.push(shadow);
                    lane_shadows.push(shadow_buffer);
                }
                None => lane_shadows.push(None),
            }
        }
    }
    let result = interp.call(func, &values).map_err(|e| e.to_diagnostic().to_string())?;
    let buffers = read_buffers(&interp, &buffers)?;
    let shadows = shadows.iter().map(|s| read_buffers(&interp, s)).collect::<Result<_, _>>()?;
    Ok(Observed { result, buffers, shadows })
}

fn lane_name(what: &str, lane: usize, width: usize) -> String {
    if width == 1 {
        what.to_string()
    } else {
        format!("{what} (lane {lane})")
    }
}

fn scale_input(input: &Input, factor: f64) -> Input {
    match input {
        Input::Scalar(v) => Input::Scalar(scale(v, factor)),
        Input::Buffer { elem, items } => Input::Buffer {
            elem: elem.clone(),
            items: items.iter().map(|v| scale(v, factor)).collect(),
        },
    }
}

/// Every float leaf times `factor` (exactly the value itself for a factor of 1).
fn scale(v: &Val, factor: f64) -> Val {
    match v {
        Val::F64(x) => Val::F64(x * factor),
        Val::F32(x) => Val::F32(x * factor as f32),
        Val::Vector(items) => Val::Vector(items.iter().map(|i| scale(i, factor)).collect()),
        Val::Aggregate(items) => Val::Aggregate(items.iter().map(|i| scale(i, factor)).collect()),
        Val::Int(_) | Val::Ptr(_) => v.clone(),
    }
}

type Allocated = Option<(Val, Type, usize)>;

fn materialize(interp: &mut Interpreter<'_>, input: &Input) -> Result<(Val, Allocated), String> {
    match input {
        Input::Scalar(v) => Ok((v.clone(), None)),
        Input::Buffer { elem, items } => {
            let ptr = interp.alloc(elem, items).map_err(|e| e.to_string())?;
            Ok((ptr.clone(), Some((ptr, elem.clone(), items.len()))))
        }
    }
}

fn read_buffers(
    interp: &Interpreter<'_>,
    buffers: &[Allocated],
) -> Result<Vec<Option<Vec<Val>>>, String> {
    buffers
        .iter()
        .map(|b| match b {
            Some((ptr, elem, len)) => {
                interp.read(ptr, elem, *len).map(Some).map_err(|e| e.to_string())
            }
            None => Ok(None),
        })
        .collect()
}

/// `x + t·d` on every float leaf; integers and pointers stay.
fn shift(x: &Input, d: &Input, t: f64) -> Result<Input, String> {
    Ok(match (x, d) {
        (Input::Scalar(x), Input::Scalar(d)) => Input::Scalar(axpy(x, d, t)?),
        (Input::Buffer { elem, items }, Input::Buffer { items: dir, .. }) => Input::Buffer {
            elem: elem.clone(),
            items: items.iter().zip(dir).map(|(x, d)| axpy(x, d, t)).collect::<Result<_, _>>()?,
        },
        _ => return Err("an input and its direction differ in shape".into()),
    })
}

fn axpy(x: &Val, d: &Val, t: f64) -> Result<Val, String> {
    let zip = |x: &[Val], d: &[Val]| -> Result<Vec<Val>, String> {
        if x.len() != d.len() {
            return Err("an input and its direction differ in length".into());
        }
        x.iter().zip(d).map(|(x, d)| axpy(x, d, t)).collect()
    };
    Ok(match (x, d) {
        (Val::F64(x), Val::F64(d)) => Val::F64(x + t * d),
        (Val::F32(x), Val::F32(d)) => Val::F32(x + (t as f32) * d),
        (Val::Vector(x), Val::Vector(d)) => Val::Vector(zip(x, d)?),
        (Val::Aggregate(x), Val::Aggregate(d)) => Val::Aggregate(zip(x, d)?),
        (Val::Int(_) | Val::Ptr(_), _) => x.clone(),
        _ => return Err(format!("an input {x:?} and its direction {d:?} differ in shape")),
    })
}

/// Compares every float leaf of the tangent with the central difference of the leaves
/// of `plus` and `minus`; returns how many leaves were compared.
fn compare(
    what: &str,
    tangent: &Val,
    plus: &Val,
    minus: &Val,
    h: f64,
    tol: f64,
) -> Result<usize, String> {
    let (mut t, mut p, mut m) = (Vec::new(), Vec::new(), Vec::new());
    float_leaves(tangent, &mut t);
    float_leaves(plus, &mut p);
    float_leaves(minus, &mut m);
    if t.len() != p.len() || p.len() != m.len() {
        return Err(format!(
            "{what}: the tangent has {} floats, the primal result {}",
            t.len(),
            p.len()
        ));
    }
    for (i, ((t, p), m)) in t.iter().zip(&p).zip(&m).enumerate() {
        let fd = (p - m) / (2.0 * h);
        // Written so that a NaN on either side fails the check.
        let close = (t - fd).abs() <= tol * fd.abs().max(1.0);
        if !close {
            return Err(format!(
                "{what}, float {i}: forward mode gives {t:e}, finite differences {fd:e} \
                 (tolerance {tol:e}, relative to max(1, |fd|))"
            ));
        }
    }
    Ok(t.len())
}

fn float_leaves(v: &Val, out: &mut Vec<f64>) {
    match v {
        Val::F64(x) => out.push(*x),
        Val::F32(x) => out.push(f64::from(*x)),
        Val::Vector(items) | Val::Aggregate(items) => {
            items.iter().for_each(|i| float_leaves(i, out))
        }
        Val::Int(_) | Val::Ptr(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_parsed() {
        let (f, args, ret) = parse_header("@f(dup, const, dupnoneed) -> dup").unwrap();
        assert_eq!(f, "f");
        assert_eq!(args, vec![ArgActivity::Dup, ArgActivity::Const, ArgActivity::DupNoNeed]);
        assert_eq!(ret, RetActivity::Dup);
        assert!(parse_header("@f(dup) -> sideways").unwrap_err().contains("sideways"));
        assert!(parse_header("f(dup) -> active").is_err());
    }

    #[test]
    fn a_file_without_checks_is_an_error() {
        let source = "; test tangent\n; tangent: @f(dup) -> active\nfunc @f(%x: f64) -> f64 {\n^e:\n  ret %x\n}\n";
        let module = adc_ir::text::parse_module(source).unwrap();
        let err = check(&module, source, &[]).unwrap_err();
        assert!(err.contains("at least one"), "{err}");
    }

    #[test]
    fn a_const_argument_needs_no_direction() {
        let source = "; tangent: @f(dup, const) -> active\n; tangentcheck: @f(1.0, 2.0) along (1.0, 3.0)\n\
                      func @f(%x: f64, %k: f64) -> f64 {\n^e:\n  %y = fmul f64 %x, %k\n  ret %y\n}\n";
        let module = adc_ir::text::parse_module(source).unwrap();
        let err = check(&module, source, &[]).unwrap_err();
        assert!(err.contains("must be `_`"), "{err}");
        let ok = source.replace("along (1.0, 3.0)", "along (1.0, _)");
        check(&module, &ok, &[]).expect("passes");
    }
}
