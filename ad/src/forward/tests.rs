//! Unit tests of forward-mode synthesis on small functions built from text: the derivative
//! verifies and the interpreter's tangent matches the analytic one.

use adc_ir::interp::{Interpreter, Val};
use adc_ir::text::parse_module;
use adc_ir::Module;

use super::synthesize_forward;
use crate::{AdErrorKind, ArgActivity, DiffMode, DiffRequest, RetActivity};

fn request(module: &Module, name: &str, args: Vec<ArgActivity>, ret: RetActivity) -> DiffRequest {
    let function = module.function_by_name(name).expect("function in module");
    DiffRequest { function, mode: DiffMode::Forward, args, ret, width: 1 }
}

fn call(module: &Module, name: &str, args: &[Val]) -> Option<Val> {
    let mut interp = Interpreter::new(module).expect("interpreter");
    let f = module.function_by_name(name).expect("derivative");
    interp.call(f, args).expect("call succeeds")
}

#[test]
fn square_times_sin() {
    let mut m = parse_module(
        "declare @sin(f64) -> f64\n\
         func @f(%x: f64) -> f64 {\n^e:\n  %s = call @sin(%x)\n  %y = fmul f64 %x, %s\n  ret %y\n}\n",
    )
    .unwrap();
    let req = request(&m, "f", vec![ArgActivity::Dup], RetActivity::Active);
    synthesize_forward(&mut m, &req, "f.fwd").expect("synthesis");
    adc_ir::verify::verify_module(&m).expect("verifies");
    let x: f64 = 0.7;
    let Some(Val::F64(t)) = call(&m, "f.fwd", &[Val::F64(x), Val::F64(2.0)]) else { panic!() };
    let expected = 2.0 * (x.sin() + x * x.cos());
    assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
}

#[test]
fn dup_return_gives_primal_and_tangent() {
    let mut m = parse_module(
        "func @f(%x: f64, %k: f64) -> f64 {\n^e:\n  %y = fmul f64 %x, %k\n  ret %y\n}\n",
    )
    .unwrap();
    let req = request(&m, "f", vec![ArgActivity::Dup, ArgActivity::Const], RetActivity::Dup);
    synthesize_forward(&mut m, &req, "f.fwd").expect("synthesis");
    let out = call(&m, "f.fwd", &[Val::F64(3.0), Val::F64(1.0), Val::F64(5.0)]);
    assert_eq!(out, Some(Val::Aggregate(vec![Val::F64(15.0), Val::F64(5.0)])));
}

#[test]
fn active_argument_is_rejected() {
    let mut m = parse_module("func @f(%x: f64) -> f64 {\n^e:\n  ret %x\n}\n").unwrap();
    let req = request(&m, "f", vec![ArgActivity::Active], RetActivity::Active);
    let err = synthesize_forward(&mut m, &req, "f.fwd").unwrap_err();
    assert!(matches!(err.kind, AdErrorKind::BadApiCall { .. }), "{err}");
    assert!(m.function_by_name("f.fwd").is_none());
}

#[test]
fn store_to_a_global_is_rejected() {
    let mut m = parse_module(
        "global internal @g: f64, align 8 = 0.0\n\
         func @f(%x: f64) {\n^e:\n  %p = const ptr @g\n  store %x, %p, align 8\n  ret\n}\n",
    )
    .unwrap();
    let req = request(&m, "f", vec![ArgActivity::Dup], RetActivity::Const);
    let err = synthesize_forward(&mut m, &req, "f.fwd").unwrap_err();
    assert!(err.to_string().contains("the global @g as memory that carries derivatives"), "{err}");
}

#[test]
fn vector_width_gives_one_tangent_per_lane() {
    let mut m = parse_module(
        "declare @sin(f64) -> f64\n\
         func @f(%x: f64, %y: f64) -> f64 {\n^e:\n  %s = call @sin(%x)\n  %p = fmul f64 %s, %y\n  ret %p\n}\n",
    )
    .unwrap();
    let mut req = request(&m, "f", vec![ArgActivity::Dup, ArgActivity::Dup], RetActivity::Active);
    req.width = 2;
    synthesize_forward(&mut m, &req, "f.fwd").expect("synthesis");
    let (x, y) = (0.3f64, 1.7f64);
    let args =
        [Val::F64(x), Val::F64(1.0), Val::F64(0.0), Val::F64(y), Val::F64(0.0), Val::F64(1.0)];
    let out = call(&m, "f.fwd", &args);
    assert_eq!(out, Some(Val::Aggregate(vec![Val::F64(x.cos() * y), Val::F64(x.sin())])));
}

#[test]
fn zero_width_is_rejected() {
    let mut m = parse_module("func @f(%x: f64) -> f64 {\n^e:\n  ret %x\n}\n").unwrap();
    let mut req = request(&m, "f", vec![ArgActivity::Dup], RetActivity::Active);
    req.width = 0;
    let err = synthesize_forward(&mut m, &req, "f.fwd").unwrap_err();
    assert!(err.to_string().contains("width of 0"), "{err}");
}

#[test]
fn recursive_calls_share_one_callee_derivative() {
    // p(x, n) = x · p(x, n - 1), p(x, 0) = 1: x^n.
    let mut m = parse_module(
        "func @p(%x: f64, %n: i64) -> f64 {\n^e:\n  %z = const i64 0\n  %done = icmp eq i64 %n, %z\n\
         \x20 brif %done, ^base, ^rec\n^base:\n  %one = const f64 1.0\n  ret %one\n\
         ^rec:\n  %k = const i64 1\n  %m = sub i64 %n, %k\n  %r = call @p(%x, %m)\n\
         \x20 %y = fmul f64 %x, %r\n  ret %y\n}\n",
    )
    .unwrap();
    let req = request(&m, "p", vec![ArgActivity::Dup, ArgActivity::Const], RetActivity::Active);
    synthesize_forward(&mut m, &req, "p.fwd").expect("synthesis");
    adc_ir::verify::verify_module(&m).expect("verifies");
    // The top request returns the tangent only; the recursive calls need the primal too,
    // so one more derivative (`{primal, tangent}`) serves all of them.
    let callees: Vec<&str> = m
        .functions
        .values()
        .map(|f| f.name.as_str())
        .filter(|n| n.starts_with("__adc_forward_p"))
        .collect();
    assert_eq!(callees, ["__adc_forward_p"]);
    let Some(Val::F64(t)) = call(&m, "p.fwd", &[Val::F64(1.5), Val::F64(1.0), Val::Int(5)]) else {
        panic!()
    };
    assert!((t - 5.0 * 1.5f64.powi(4)).abs() < 1e-12, "{t}");
}

#[test]
fn loop_carried_tangents_follow_the_primal_parameters() {
    // Two active loop-carried floats and an inactive counter: the shadow parameters come
    // after the primal ones, in the same order as the branch arguments.
    let mut m = parse_module(
        "func @f(%x: f64) -> f64 {\n^e:\n  %z = const i64 0\n  %one = const f64 1.0\n  jump ^l(%z, %one, %x)\n\
         ^l(%i: i64, %a: f64, %b: f64):\n  %a2 = fmul f64 %a, %b\n  %b2 = fadd f64 %b, %x\n\
         \x20 %k = const i64 1\n  %i2 = add i64 %i, %k\n  %n = const i64 3\n  %c = icmp slt i64 %i2, %n\n\
         \x20 brif %c, ^l(%i2, %a2, %b2), ^x\n^x:\n  ret %a2\n}\n",
    )
    .unwrap();
    let req = request(&m, "f", vec![ArgActivity::Dup], RetActivity::Active);
    synthesize_forward(&mut m, &req, "f.fwd").expect("synthesis");
    // f = x · 2x · 3x = 6x³, f' = 18x².
    let Some(Val::F64(t)) = call(&m, "f.fwd", &[Val::F64(0.5), Val::F64(1.0)]) else { panic!() };
    assert!((t - 18.0 * 0.25).abs() < 1e-12, "{t}");
}

#[test]
fn lane_packing_toggle_is_taken_out_of_the_pass_list() {
    let mut options = super::ForwardOptions::default();
    assert!(options.lane_packing);
    assert_eq!(options.split_toggles("-licm,-lane-packing,gvn"), Some("-licm,gvn".into()));
    assert!(!options.lane_packing);
    assert_eq!(options.split_toggles("+lane-packing"), None);
    assert!(options.lane_packing);
}
