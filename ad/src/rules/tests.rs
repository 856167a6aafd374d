//! Checks every rule against central finite differences of its primal.
//!
//! For each rule and float type, a module holds `@primal(args) -> T`, one
//! `@adjoint_i(args, d) -> T` per operand with a contribution (built with
//! [`emit_adjoints`]) and `@tangent(args, seeds) -> T` (built with [`emit_tangent`]). The
//! module is verified, run in the interpreter at several points of the rule's domain
//! (away from singularities and kinks), and compared with central differences of
//! `@primal` in f64, step `h = 1e-6·max(1, |x|)`:
//!
//! - f64: `|derivative - fd| <= 1e-6 · max(|fd|, 1)`;
//! - f32: the same differences of the f64 primal at the f32-rounded point (differences
//!   of the f32 primal are dominated by its rounding), `|derivative - fd| <= 2e-4 ·
//!   max(|fd|, 1)`.
//!
//! Operands without a contribution (`None`) must be integer operands or have a zero
//! finite difference at every point.

use std::collections::HashMap;

use adc_ir::builder::FunctionBuilder;
use adc_ir::interp::{Interpreter, Val};
use adc_ir::{FuncId, Function, InstFlags, InstructionData, Module, Signature, Type, Value};

use super::*;

const F64_TOL: f64 = 1e-6;
const F32_TOL: f64 = 2e-4;

/// The operand types of `op` when its float type is `ty`.
fn operand_types(op: Differentiable<'_>, ty: &Type) -> Vec<Type> {
    match op {
        Differentiable::Call(name) => {
            let rule = lookup_call(name).expect("a rule");
            rule.function
                .params
                .iter()
                .map(|p| match p {
                    Param::Float => ty.clone(),
                    Param::Int => Type::I32,
                })
                .collect()
        }
        Differentiable::Fma => vec![ty.clone(); 3],
        Differentiable::Binary(_) => vec![ty.clone(); 2],
        _ => vec![ty.clone()],
    }
}

/// The name the interpreter can run for a call rule in type `ty`, and how the test
/// module provides it: adc's powi helper is defined by the importer in each module, so
/// the test defines it as a call to the interpreter's compiler-rt `__powidf2`.
fn primal_callee(name: &str, ty: &Type) -> (&'static str, Option<&'static str>) {
    let rule = lookup_call(name).expect("a rule");
    let callee = rule.function.name_for(ty.lane_type()).expect("a float type");
    match callee {
        "__adc_powi_f64" => (callee, Some("__powidf2")),
        "__adc_powi_f32" => (callee, Some("__powisf2")),
        _ => (callee, None),
    }
}

struct Harness {
    module: Module,
    primal: FuncId,
    /// Per operand: the function computing its adjoint, or `None` when the rule gives
    /// it no contribution.
    adjoints: Vec<Option<FuncId>>,
    tangent: Option<FuncId>,
    operand_types: Vec<Type>,
}

/// Declares `name` with `sig` unless present; returns its id.
fn declare(module: &mut Module, name: &str, sig: Signature) -> FuncId {
    module.function_by_name(name).unwrap_or_else(|| module.add_function(Function::new(name, sig)))
}

fn build(op: Differentiable<'static>, ty: &Type) -> Harness {
    let mut module = Module::new();
    let types = operand_types(op, ty);
    let primal_callee_id = if let Differentiable::Call(name) = op {
        let (callee, via) = primal_callee(name, ty);
        let sig = Signature::new(types.clone(), Some(ty.clone()));
        Some(match via {
            None => declare(&mut module, callee, sig),
            Some(runtime) => {
                let runtime = declare(&mut module, runtime, sig.clone());
                let mut f = Function::new(callee, sig.clone());
                let sigs = move |id: FuncId| (id == runtime).then(|| sig.clone());
                let mut b = FunctionBuilder::new(&mut f, &sigs);
                let entry = b.create_entry_block();
                b.switch_to_block(entry);
                let params = b.func.params().to_vec();
                let r = b.call(runtime, params).1;
                b.ret(r);
                module.add_function(f)
            }
        })
    } else {
        None
    };
    for (name, sig) in externs_needed(op, ty).expect("externs") {
        declare(&mut module, name, sig);
    }
    let signatures: HashMap<FuncId, Signature> =
        module.functions.iter().map(|(id, f)| (id, f.signature.clone())).collect();
    let by_name: HashMap<String, FuncId> =
        module.functions.iter().map(|(id, f)| (f.name.clone(), id)).collect();
    let sigs = |id: FuncId| signatures.get(&id).cloned();
    let resolve = |name: &str| by_name.get(name).copied();

    // Emits the primal operation on the first `types.len()` parameters.
    let primal_op = |b: &mut FunctionBuilder<'_>, args: &[Value]| -> Value {
        match op {
            Differentiable::Unary(u) => b.unary(u, args[0]),
            Differentiable::Binary(o) => b.binary(o, args[0], args[1]),
            Differentiable::Fma => b
                .ins(InstructionData::Fma {
                    flags: InstFlags::empty(),
                    args: [args[0], args[1], args[2]],
                })
                .1
                .expect("fma result"),
            Differentiable::Call(_) => {
                b.call(primal_callee_id.expect("callee"), args.to_vec()).1.expect("call result")
            }
            Differentiable::Cast(c) => b.cast(c, args[0], ty.clone()),
        }
    };
    let n = types.len();
    let new_func = |name: &str, extra: usize| {
        let mut params = types.clone();
        params.extend(std::iter::repeat(ty.clone()).take(extra));
        Function::new(name, Signature::new(params, Some(ty.clone())))
    };

    let mut primal = new_func("primal", 0);
    {
        let mut b = FunctionBuilder::new(&mut primal, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let args = b.func.params().to_vec();
        let r = primal_op(&mut b, &args);
        b.ret(Some(r));
    }
    let mut adjoint_funcs = Vec::new();
    for i in 0..n {
        let mut f = new_func(&format!("adjoint_{i}"), 1);
        let mut b = FunctionBuilder::new(&mut f, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let params = b.func.params().to_vec();
        let r = primal_op(&mut b, &params[..n]);
        let site = PrimalSite { op, operands: &params[..n], result: r };
        let adjoints = emit_adjoints(&mut b, &site, params[n], &resolve).expect("adjoints");
        assert_eq!(adjoints.len(), n);
        match adjoints[i] {
            Some(a) => {
                b.ret(Some(a));
                adjoint_funcs.push(Some(f));
            }
            None => adjoint_funcs.push(None),
        }
    }
    let float_operands: Vec<usize> = (0..n).filter(|i| types[*i] == *ty).collect();
    let mut tangent = new_func("tangent", float_operands.len());
    let has_tangent = {
        let mut b = FunctionBuilder::new(&mut tangent, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let params = b.func.params().to_vec();
        let r = primal_op(&mut b, &params[..n]);
        let site = PrimalSite { op, operands: &params[..n], result: r };
        let mut seeds = vec![None; n];
        for (k, i) in float_operands.iter().enumerate() {
            seeds[*i] = Some(params[n + k]);
        }
        let t = emit_tangent(&mut b, &site, &seeds, &resolve).expect("tangent");
        b.ret(t);
        t.is_some()
    };

    let primal = module.add_function(primal);
    let adjoints = adjoint_funcs.into_iter().map(|f| f.map(|f| module.add_function(f))).collect();
    let tangent = has_tangent.then(|| module.add_function(tangent));
    if let Err(e) = adc_ir::verify::verify_module(&module) {
        panic!("{op} on {ty}: derivative code does not verify:\n{e}\n{}", print(&module));
    }
    Harness { module, primal, adjoints, tangent, operand_types: types }
}

fn print(module: &Module) -> String {
    adc_ir::text::print_module(module)
}

fn to_val(ty: &Type, x: f64) -> Val {
    match ty {
        Type::F32 => Val::F32(x as f32),
        Type::F64 => Val::F64(x),
        _ => Val::Int(x as i32 as u32 as u128),
    }
}

fn from_val(v: Option<Val>) -> f64 {
    match v {
        Some(Val::F64(x)) => x,
        Some(Val::F32(x)) => f64::from(x),
        other => panic!("expected a float result, got {other:?}"),
    }
}

impl Harness {
    fn run(&self, func: FuncId, point: &[f64], extra: &[f64]) -> f64 {
        let mut args: Vec<Val> =
            self.operand_types.iter().zip(point).map(|(t, x)| to_val(t, *x)).collect();
        let ty = self.module.functions[func].signature.ret.clone().expect("a result");
        args.extend(extra.iter().map(|x| to_val(&ty, *x)));
        let mut interp = Interpreter::new(&self.module).expect("interpreter");
        from_val(interp.call(func, &args).unwrap_or_else(|e| panic!("{}", e.message())))
    }

    /// Central difference of `@primal` along operand `i` (an f64 harness).
    fn finite_difference(&self, point: &[f64], i: usize) -> f64 {
        let h = 1e-6 * point[i].abs().max(1.0);
        let mut up = point.to_vec();
        let mut down = point.to_vec();
        up[i] += h;
        down[i] -= h;
        (self.run(self.primal, &up, &[]) - self.run(self.primal, &down, &[])) / (up[i] - down[i])
    }
}

/// Checks `op` in f64 and f32 at `points` (integer operands are given as floats).
fn check_rule(op: Differentiable<'static>, points: &[&[f64]]) {
    let h64 = build(op, &Type::F64);
    let h32 = build(op, &Type::F32);
    let n = h64.operand_types.len();
    for point in points {
        assert_eq!(point.len(), n, "{op}: a point needs {n} operands");
        let rounded: Vec<f64> = point.iter().map(|x| f64::from(*x as f32)).collect();
        for (harness, at, tol) in [(&h64, point.to_vec(), F64_TOL), (&h32, rounded, F32_TOL)] {
            let ty = harness.module.functions[harness.primal].signature.ret.clone().unwrap();
            let seeds = [0.3, -0.7, 0.5];
            let mut expected_tangent = 0.0;
            let mut seed_k = 0;
            for i in 0..n {
                let is_float = harness.operand_types[i] == ty;
                let fd = if is_float { h64.finite_difference(&at, i) } else { 0.0 };
                if is_float {
                    expected_tangent += seeds[seed_k] * fd;
                    seed_k += 1;
                }
                let context = || format!("{op} on {ty} at {at:?}, operand {i}");
                match harness.adjoints[i] {
                    Some(f) => {
                        assert!(is_float, "{}: an integer operand got an adjoint", context());
                        // d_result = 1 gives the partial; 0.75 checks the scaling.
                        let ad = harness.run(f, &at, &[1.0]);
                        close(ad, fd, tol, &context());
                        let scaled = harness.run(f, &at, &[0.75]);
                        close(scaled, 0.75 * fd, tol, &format!("{} (d_result 0.75)", context()));
                    }
                    None if is_float => {
                        assert!(fd.abs() < 1e-9, "{}: no adjoint, but fd is {fd}", context())
                    }
                    None => {}
                }
            }
            let context = format!("{op} on {ty} at {at:?}, tangent");
            match harness.tangent {
                Some(t) => close(harness.run(t, &at, &seeds[..seed_k]), expected_tangent, tol, &context),
                None => assert!(expected_tangent.abs() < 1e-9, "{context}: none, expected {expected_tangent}"),
            }
        }
    }
}

fn close(actual: f64, expected: f64, tol: f64, context: &str) {
    let err = (actual - expected).abs();
    assert!(
        err <= tol * expected.abs().max(1.0),
        "{context}: derivative {actual}, finite difference {expected} (error {err:e})"
    );
}

use adc_ir::{BinaryOp, UnaryOp};

#[test]
fn arithmetic_rules_match_finite_differences() {
    use Differentiable::{Binary, Unary};
    let unary_points: &[&[f64]] = &[&[-1.7], &[0.3], &[2.2]];
    for op in [UnaryOp::Fneg, UnaryOp::Fabs, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Ftrunc]
        .into_iter()
        .chain([UnaryOp::Round, UnaryOp::Roundeven, UnaryOp::Freeze])
    {
        check_rule(Unary(op), unary_points);
    }
    check_rule(Unary(UnaryOp::Sqrt), &[&[0.25], &[2.0], &[100.0]]);
    let binary_points: &[&[f64]] = &[&[1.5, 2.0], &[-0.7, 0.3], &[3.0, -1.25]];
    for op in [BinaryOp::Fadd, BinaryOp::Fsub, BinaryOp::Fmul, BinaryOp::Fdiv] {
        check_rule(Binary(op), binary_points);
    }
    check_rule(Binary(BinaryOp::Frem), &[&[7.5, 2.0], &[-5.3, 1.7], &[1.0, 3.0]]);
    for op in [BinaryOp::Fminnum, BinaryOp::Fmaxnum, BinaryOp::Copysign] {
        check_rule(Binary(op), binary_points);
    }
    check_rule(Differentiable::Fma, &[&[1.0, 2.0, 3.0], &[-0.5, 4.0, 1.0]]);
}

/// Points inside each libm function's domain, away from kinks and singularities.
fn libm_points(name: &str) -> &'static [&'static [f64]] {
    match name {
        "sin" | "cos" => &[&[-2.0], &[0.3], &[1.7], &[4.0]],
        "tan" => &[&[-1.0], &[0.3], &[1.2]],
        "asin" | "acos" | "atanh" => &[&[-0.7], &[0.1], &[0.5]],
        "atan" => &[&[-3.0], &[0.5], &[10.0]],
        "atan2" => &[&[1.0, 2.0], &[-0.5, 0.3], &[2.0, -1.0]],
        "sinh" | "cosh" | "tanh" => &[&[-2.0], &[0.4], &[3.0]],
        "asinh" => &[&[-2.0], &[0.4], &[1e3]],
        "acosh" => &[&[1.5], &[3.0], &[20.0]],
        "exp" | "exp2" | "exp10" | "expm1" => &[&[-2.0], &[0.1], &[3.0]],
        "log" | "log2" | "log10" => &[&[0.2], &[1.5], &[30.0]],
        "log1p" => &[&[-0.5], &[0.3], &[10.0]],
        "sqrt" => &[&[0.25], &[2.0], &[100.0]],
        "cbrt" => &[&[-8.0], &[0.3], &[27.0]],
        "pow" => &[&[2.0, 3.0], &[0.5, -1.5], &[3.0, 0.5]],
        // The last point (n == 0) checks the zero branch.
        "__adc_powi_f64" => &[&[2.0, 3.0], &[-1.5, 4.0], &[0.7, -2.0], &[3.0, 0.0]],
        "hypot" => &[&[3.0, 4.0], &[-1.0, 0.5]],
        "fabs" => &[&[-2.0], &[0.5]],
        "fmin" | "fmax" => &[&[1.0, 2.0], &[3.0, -1.0], &[-2.0, -0.5]],
        "fdim" => &[&[3.0, 1.0], &[1.0, 3.0]],
        "fmod" => &[&[7.5, 2.0], &[-5.3, 1.7], &[1.0, 3.0]],
        "remainder" => &[&[7.3, 2.0], &[-5.3, 1.7], &[1.0, 3.0]],
        "copysign" => &[&[1.5, -2.0], &[-1.5, 3.0], &[2.0, 2.0]],
        "nextafter" => &[&[1.5, 3.0], &[-2.0, 0.0]],
        "fma" => &[&[1.0, 2.0, 3.0], &[-0.5, 4.0, 1.0]],
        "ldexp" | "scalbn" => &[&[1.5, 3.0], &[-0.7, -2.0]],
        "erf" | "erfc" => &[&[-1.0], &[0.3], &[2.0]],
        // Both sides of the reflection at 1/2, and negative non-integers.
        "lgamma" => &[&[0.3], &[2.5], &[10.3], &[-2.5], &[-0.3], &[1e4]],
        "tgamma" => &[&[0.3], &[2.5], &[5.2], &[-1.5]],
        "floor" | "ceil" | "trunc" | "round" | "roundeven" | "rint" | "nearbyint" => {
            &[&[0.3], &[-1.7], &[2.2]]
        }
        "logb" => &[&[3.0], &[0.3], &[-5.0]],
        _ => &[],
    }
}

#[test]
fn libm_rules_match_finite_differences() {
    for rule in CALL_RULES {
        let points = libm_points(rule.function.f64);
        assert!(!points.is_empty(), "@{} has a rule but no test points", rule.function.f64);
        check_rule(Differentiable::Call(rule.function.f64), points);
    }
}
