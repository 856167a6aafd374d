//! Checks every rule against central finite differences of its primal.
//!
//! For each rule and float type, a module holds `@primal(args) -> T`, one
//! `@adjoint_i(args, d) -> T` per operand with a contribution (built with
//! [`emit_adjoints`]) and `@tangent(args, seeds) -> T` (built with [`emit_tangent`]). The
//! module is verified, run in the interpreter at several points of the rule's domain
//! (away from singularities and kinks), and compared with central differences of
//! `@primal` in f64, step `h = 1e-6·max(1, |x|)`:
//!
//! - f64: `|derivative - fd| <= 1e-7 · max(|fd|, 1)`;
//! - f32: the same differences of the f64 primal at the f32-rounded point (differences
//!   of the f32 primal are dominated by its rounding), `|derivative - fd| <= 2e-5 ·
//!   max(|fd|, 1)`.
//!
//! Operands without a contribution (`None`) must be integer operands or have a zero
//! finite difference at every point.

use std::collections::HashMap;

use adc_ir::builder::FunctionBuilder;
use adc_ir::interp::{Interpreter, Val};
use adc_ir::{FuncId, Function, InstFlags, InstructionData, Module, Signature, Type, Value};

use super::*;

const F64_TOL: f64 = 1e-7;
const F32_TOL: f64 = 2e-5;

/// The operand types of `op` when its float type is `ty`.
fn operand_types(op: Differentiable<'_>, ty: &Type) -> Vec<Type> {
    match op {
        Differentiable::Call(name) => {
            let rule = lookup_call(name).expect("a rule");
            rule.function.params.iter().map(|p| p.ir_type(ty)).collect()
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
    let signatures = module.signatures();
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
    // Integer outputs (`frexp`'s exponent) point to a local of each test function, which
    // takes the other operands as parameters.
    let param_types: Vec<Type> = types.iter().filter(|t| !t.is_ptr()).cloned().collect();
    let new_func = |name: &str, extra: usize| {
        let mut params = param_types.clone();
        params.extend(std::iter::repeat_n(ty.clone(), extra));
        Function::new(name, Signature::new(params, Some(ty.clone())))
    };
    let operands = |b: &mut FunctionBuilder<'_>, params: &[Value]| -> Vec<Value> {
        let mut params = params.iter();
        let mut out = Vec::with_capacity(n);
        for t in &types {
            out.push(if t.is_ptr() {
                b.alloca(Type::I32, None, 4)
            } else {
                *params.next().expect("a parameter per operand")
            });
        }
        out
    };
    let m = param_types.len();

    let mut primal = new_func("primal", 0);
    {
        let mut b = FunctionBuilder::new(&mut primal, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let params = b.func.params().to_vec();
        let args = operands(&mut b, &params);
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
        let args = operands(&mut b, &params[..m]);
        let r = primal_op(&mut b, &args);
        let site = PrimalSite { op, operands: &args, result: r };
        let adjoints = emit_adjoints(&mut b, &site, params[m], &resolve).expect("adjoints");
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
        let args = operands(&mut b, &params[..m]);
        let r = primal_op(&mut b, &args);
        let site = PrimalSite { op, operands: &args, result: r };
        let mut seeds = vec![None; n];
        for (k, i) in float_operands.iter().enumerate() {
            seeds[*i] = Some(params[m + k]);
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
        // Pointer operands are locals of the test functions, not parameters.
        let mut args: Vec<Val> = self
            .operand_types
            .iter()
            .zip(point)
            .filter(|(t, _)| !t.is_ptr())
            .map(|(t, x)| to_val(t, *x))
            .collect();
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
                Some(t) => {
                    close(harness.run(t, &at, &seeds[..seed_k]), expected_tangent, tol, &context)
                }
                None => assert!(
                    expected_tangent.abs() < 1e-9,
                    "{context}: none, expected {expected_tangent}"
                ),
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

use adc_ir::{BinaryOp, CastOp, UnaryOp};

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
        // The second operand is the integer output (a local of the test functions).
        "frexp" => &[&[0.9, 0.0], &[1.2, 0.0], &[33.0, 0.0], &[-0.26, 0.0], &[-1e5, 0.0]],
        "lgamma_r" => &[&[0.3, 0.0], &[2.5, 0.0], &[-2.5, 0.0], &[10.3, 0.0]],
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

/// ψ through lgamma's adjoint against known values: ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2,
/// ψ(10) = H_9 - γ, ψ(-1/2) = ψ(3/2) = ψ(1/2) + 2 (reflection), in f64 to 4e-15.
#[test]
fn digamma_is_accurate() {
    let h = build(Differentiable::Call("lgamma"), &Type::F64);
    let adjoint = h.adjoints[0].expect("lgamma has an adjoint");
    let gamma = 0.577_215_664_901_532_9_f64;
    let h9: f64 = (1..10).map(|k| 1.0 / f64::from(k)).sum();
    let psi_half = -gamma - 2.0 * std::f64::consts::LN_2;
    for (x, psi) in [(1.0, -gamma), (0.5, psi_half), (10.0, h9 - gamma), (-0.5, psi_half + 2.0)] {
        let got = h.run(adjoint, &[x], &[1.0]);
        assert!((got - psi).abs() <= 4e-15 * psi.abs().max(1.0), "ψ({x}) = {got}, expected {psi}");
    }
}

#[test]
fn float_conversions_convert_the_differential() {
    for (cast, from, to) in
        [(CastOp::Fpext, Type::F32, Type::F64), (CastOp::Fptrunc, Type::F64, Type::F32)]
    {
        let mut module = Module::new();
        let sigs = |_: FuncId| None;
        let resolve = |_: &str| None;
        let op = Differentiable::Cast(cast);
        let mut reverse = Function::new(
            "reverse",
            Signature::new(vec![from.clone(), to.clone()], Some(from.clone())),
        );
        {
            let mut b = FunctionBuilder::new(&mut reverse, &sigs);
            let entry = b.create_entry_block();
            b.switch_to_block(entry);
            let p = b.func.params().to_vec();
            let r = b.cast(cast, p[0], to.clone());
            let site = PrimalSite { op, operands: &p[..1], result: r };
            let adj = emit_adjoints(&mut b, &site, p[1], &resolve).unwrap();
            b.ret(adj[0]);
        }
        let mut forward = Function::new(
            "forward",
            Signature::new(vec![from.clone(), from.clone()], Some(to.clone())),
        );
        {
            let mut b = FunctionBuilder::new(&mut forward, &sigs);
            let entry = b.create_entry_block();
            b.switch_to_block(entry);
            let p = b.func.params().to_vec();
            let r = b.cast(cast, p[0], to.clone());
            let site = PrimalSite { op, operands: &p[..1], result: r };
            let t = emit_tangent(&mut b, &site, &[Some(p[1])], &resolve).unwrap();
            b.ret(t);
        }
        let reverse = module.add_function(reverse);
        let forward = module.add_function(forward);
        adc_ir::verify::verify_module(&module)
            .unwrap_or_else(|e| panic!("{e}\n{}", print(&module)));
        let mut interp = Interpreter::new(&module).unwrap();
        let d = interp.call(reverse, &[to_val(&from, 1.5), to_val(&to, 0.25)]).unwrap();
        assert_eq!(from_val(d), 0.25, "{cast} adjoint");
        let t = interp.call(forward, &[to_val(&from, 1.5), to_val(&from, -0.5)]).unwrap();
        assert_eq!(from_val(t), -0.5, "{cast} tangent");
    }
}

#[test]
fn integer_conversions_carry_no_derivative() {
    let sigs = |_: FuncId| None;
    let resolve = |_: &str| None;
    for (cast, from, to) in [
        (CastOp::Sitofp, Type::I32, Type::F64),
        (CastOp::Uitofp, Type::I64, Type::F32),
        (CastOp::Fptosi, Type::F64, Type::I32),
        (CastOp::Fptoui, Type::F32, Type::I64),
    ] {
        let mut f = Function::new("f", Signature::new(vec![from.clone(), to.clone()], None));
        let mut b = FunctionBuilder::new(&mut f, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let p = b.func.params().to_vec();
        let r = b.cast(cast, p[0], to.clone());
        let site = PrimalSite { op: Differentiable::Cast(cast), operands: &p[..1], result: r };
        assert_eq!(emit_adjoints(&mut b, &site, p[1], &resolve).unwrap(), vec![None], "{cast}");
        assert_eq!(emit_tangent(&mut b, &site, &[Some(p[0])], &resolve).unwrap(), None, "{cast}");
    }
}

/// Vector operands: arithmetic applies to whole vectors, calls are scalarized per lane;
/// each lane must equal the scalar rule.
#[test]
fn vector_rules_work_lane_wise() {
    let lanes = [0.3, -1.2];
    for op in [
        Differentiable::Binary(BinaryOp::Fdiv),
        Differentiable::Call("sin"),
        Differentiable::Call("atan2"),
    ] {
        let scalar = build(op, &Type::F64);
        let vty = Type::vector(Type::F64, 2);
        let n = scalar.operand_types.len();
        let mut module = Module::new();
        for (name, sig) in externs_needed(op, &vty).unwrap() {
            declare(&mut module, name, sig);
        }
        let signatures = module.signatures();
        let by_name: HashMap<String, FuncId> =
            module.functions.iter().map(|(id, f)| (f.name.clone(), id)).collect();
        let sigs = |id: FuncId| signatures.get(&id).cloned();
        let resolve = |name: &str| by_name.get(name).copied();
        // The primal result is computed lane-wise by the scalar primal and passed in.
        let mut params = vec![vty.clone(); n];
        params.extend([vty.clone(), vty.clone()]);
        let mut f = Function::new("vector_adjoint", Signature::new(params, Some(vty.clone())));
        {
            let mut b = FunctionBuilder::new(&mut f, &sigs);
            let entry = b.create_entry_block();
            b.switch_to_block(entry);
            let p = b.func.params().to_vec();
            let site = PrimalSite { op, operands: &p[..n], result: p[n] };
            let adj = emit_adjoints(&mut b, &site, p[n + 1], &resolve).unwrap();
            b.ret(adj[0]);
        }
        let vf = module.add_function(f);
        adc_ir::verify::verify_module(&module)
            .unwrap_or_else(|e| panic!("{e}\n{}", print(&module)));
        let other = [1.7, 0.9];
        let point = |k: usize| -> Vec<f64> {
            if n == 1 {
                vec![lanes[k]]
            } else {
                vec![lanes[k], other[k]]
            }
        };
        let primal: Vec<f64> = (0..2).map(|k| scalar.run(scalar.primal, &point(k), &[])).collect();
        let vec_of = |xs: [f64; 2]| Val::Vector(xs.iter().map(|x| Val::F64(*x)).collect());
        let mut args = vec![vec_of(lanes)];
        if n == 2 {
            args.push(vec_of(other));
        }
        args.push(vec_of([primal[0], primal[1]]));
        args.push(vec_of([1.0, 1.0]));
        let mut interp = Interpreter::new(&module).unwrap();
        let got = match interp.call(vf, &args).unwrap() {
            Some(Val::Vector(v)) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(got.len(), 2);
        for (k, lane) in got.iter().enumerate() {
            let expected = scalar.run(scalar.adjoints[0].unwrap(), &point(k), &[1.0]);
            assert_eq!(*lane, Val::F64(expected), "{op}, lane {k}");
        }
    }
}

#[test]
fn bad_requests_are_errors() {
    assert!(matches!(
        rule_for(Differentiable::Binary(BinaryOp::Add)),
        Err(RuleError::NotDifferentiable { .. })
    ));
    assert!(matches!(
        rule_for(Differentiable::Call("my_func")),
        Err(RuleError::UnknownFunction { .. })
    ));
    let kind: AdErrorKind = rule_for(Differentiable::Call("my_func")).unwrap_err().into();
    assert_eq!(kind, AdErrorKind::UnknownExternal { callee: "my_func".to_string() });
    let err = rule_for(Differentiable::Call("lroundf")).unwrap_err();
    assert!(err.to_string().contains("integer"), "{err}");
    let mut g = Function::new("g", Signature::new(vec![Type::I32, Type::I32], None));
    let mut b = FunctionBuilder::new(&mut g, &|_| None);
    let entry = b.create_entry_block();
    b.switch_to_block(entry);
    let p = b.func.params().to_vec();
    let site =
        PrimalSite { op: Differentiable::Unary(UnaryOp::Freeze), operands: &p[..1], result: p[1] };
    assert!(matches!(
        emit_adjoints(&mut b, &site, p[1], &|_| None),
        Err(RuleError::UnsupportedType { .. })
    ));
    assert!(matches!(
        externs_needed(Differentiable::Call("sin"), &Type::I32),
        Err(RuleError::UnsupportedType { .. })
    ));

    // A callee that was not declared, and a wrong operand count, are errors, not panics.
    let sigs = |_: FuncId| None;
    let mut f = Function::new("f", Signature::new(vec![Type::F64, Type::F64], None));
    let mut b = FunctionBuilder::new(&mut f, &sigs);
    let entry = b.create_entry_block();
    b.switch_to_block(entry);
    let p = b.func.params().to_vec();
    let site = PrimalSite { op: Differentiable::Call("sin"), operands: &p[..1], result: p[1] };
    assert_eq!(
        emit_adjoints(&mut b, &site, p[1], &|_| None),
        Err(RuleError::MissingCallee { what: "call @sin".to_string(), callee: "cos".to_string() })
    );
    let site = PrimalSite { op: Differentiable::Call("sin"), operands: &p, result: p[1] };
    assert!(matches!(emit_adjoints(&mut b, &site, p[1], &|_| None), Err(RuleError::Arity { .. })));
    let narrow = b.cast(CastOp::Fptrunc, p[0], Type::F32);
    let site = PrimalSite { op: Differentiable::Call("sin"), operands: &[narrow], result: p[1] };
    assert!(matches!(
        emit_adjoints(&mut b, &site, p[1], &|_| None),
        Err(RuleError::OperandType { index: 0, .. })
    ));
    let site = PrimalSite { op: Differentiable::Fma, operands: &p, result: p[1] };
    assert!(matches!(
        emit_tangent(&mut b, &site, &[None, None], &|_| None),
        Err(RuleError::Arity { .. })
    ));
}

#[test]
fn names_resolve_in_every_spelling() {
    for (name, expected) in [
        ("sinf", "sin"),
        ("llvm.sin.f64", "sin"),
        ("llvm.cos.f32", "cos"),
        ("llvm.minnum.f64", "fmin"),
        ("llvm.powi.f32.i32", "__adc_powi_f64"),
        ("__adc_powi_f32", "__adc_powi_f64"),
        ("__powidf2", "__adc_powi_f64"),
        ("__exp10", "exp10"),
    ] {
        assert_eq!(lookup_call(name).map(|r| r.function.f64), Some(expected), "{name}");
    }
    assert!(lookup_call("sinl").is_none());
}

/// The quoted names on the `=>` lines between `start` and `end` in `source`.
fn quoted_names(source: &str, start: &str, end: &str) -> Vec<String> {
    let from = source.find(start).unwrap_or_else(|| panic!("`{start}` not found"));
    let to = from + source[from..].find(end).unwrap_or_else(|| panic!("`{end}` not found"));
    let mut names = Vec::new();
    for line in source[from..to].lines().filter(|l| l.contains("=>")) {
        let head = &line[..line.find("=>").unwrap()];
        names.extend(head.split('"').skip(1).step_by(2).map(str::to_string));
    }
    names
}

/// Every libm function the interpreter runs, and every libm call the LLVM importer
/// produces for an intrinsic (in both precisions), has a rule or a listed reason.
#[test]
fn every_known_libm_name_has_a_rule_or_a_reason() {
    let interp = include_str!("../../../ir/src/interp/libm.rs");
    let interp_names = quoted_names(interp, "fn lookup(name: &str)", "_ => return None");
    assert!(interp_names.len() > 80, "the interpreter's libm table moved: {interp_names:?}");
    let importer = include_str!("../../../frontend-llvm/src/intrinsics.rs");
    let intrinsic_names = quoted_names(importer, "let libm_arity", "_ => return None");
    assert!(intrinsic_names.contains(&"exp10".to_string()), "{intrinsic_names:?}");
    let mut missing = Vec::new();
    let all = interp_names
        .iter()
        .cloned()
        .chain(intrinsic_names.iter().flat_map(|n| [n.clone(), format!("{n}f")]));
    for name in all {
        if lookup_call(&name).is_none() && non_differentiable_call(&name).is_none() {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "libm functions with neither a rule nor a reason: {missing:?}");
}

/// `docs/src/ad.md` shows the table generated from the rules; regenerate it with
/// `markdown_table()` (printed by this test when it fails) after changing a rule.
#[test]
fn documentation_table_matches_the_rules() {
    let page = include_str!("../../../docs/src/ad.md");
    let table = markdown_table();
    assert!(page.contains(&table), "docs/src/ad.md is out of date; the table is now:\n{table}");
}

#[test]
fn rules_say_which_primal_values_they_read() {
    let needs = |op| rule_for(op).unwrap().needs();
    let fmul = needs(Differentiable::Binary(BinaryOp::Fmul));
    assert_eq!(fmul, PrimalNeeds { operands: vec![true, true], result: false });
    let exp = needs(Differentiable::Call("exp"));
    assert_eq!(exp, PrimalNeeds { operands: vec![false], result: true });
    let fadd = needs(Differentiable::Binary(BinaryOp::Fadd));
    assert_eq!(fadd, PrimalNeeds { operands: vec![false, false], result: false });
    let powi = needs(Differentiable::Call("__adc_powi_f64"));
    assert_eq!(powi, PrimalNeeds { operands: vec![true, true], result: false });
}

/// Only the wanted partials are emitted: `pow` with a constant exponent needs no `log`.
#[test]
fn inactive_operands_cost_no_code() {
    let mut module = Module::new();
    let op = Differentiable::Call("pow");
    for (name, sig) in externs_needed(op, &Type::F64).unwrap() {
        declare(&mut module, name, sig);
    }
    let by_name: HashMap<String, FuncId> =
        module.functions.iter().map(|(id, f)| (f.name.clone(), id)).collect();
    let signatures = module.signatures();
    let sigs = |id: FuncId| signatures.get(&id).cloned();
    let resolve = |name: &str| by_name.get(name).copied();
    let log = by_name["log"];
    let calls_log = |f: &Function| {
        f.dfg
            .insts
            .values()
            .any(|d| matches!(d, InstructionData::Call { callee, .. } if *callee == log))
    };
    let params = vec![Type::F64; 4];
    let mut f = Function::new("f", Signature::new(params, None));
    let mut b = FunctionBuilder::new(&mut f, &sigs);
    let entry = b.create_entry_block();
    b.switch_to_block(entry);
    let p = b.func.params().to_vec();
    let site = PrimalSite { op, operands: &p[..2], result: p[2] };
    let adjoints = emit_active_adjoints(&mut b, &site, p[3], &[true, false], &resolve).unwrap();
    assert!(adjoints[0].is_some() && adjoints[1].is_none());
    let tangent = emit_tangent(&mut b, &site, &[Some(p[3]), None], &resolve).unwrap();
    assert!(tangent.is_some());
    assert!(!calls_log(b.func), "no partial with respect to the exponent was asked for");
    emit_active_adjoints(&mut b, &site, p[3], &[false, true], &resolve).unwrap();
    assert!(calls_log(b.func));
    assert!(matches!(
        emit_active_adjoints(&mut b, &site, p[3], &[true], &resolve),
        Err(RuleError::Arity { .. })
    ));
}
