//! Unit tests of the activity analysis.

use super::*;
use adc_ir::text::parse_module;

fn activity_of(text: &str, args: Vec<ArgActivity>, ret: RetActivity) -> String {
    let module = parse_module(text).expect("parses");
    let id = module.function_by_name("f").expect("@f");
    print_activity(&module, &DiffRequest::reverse(id, args, ret)).expect("analyzes")
}

#[test]
fn dead_float_is_inactive() {
    let printed = activity_of(
        "func @f(%x: f64) -> f64 {\n^e:\n  %y = fmul f64 %x, %x\n  %z = fadd f64 %x, %x\n  ret %y\n}\n",
        vec![ArgActivity::Active],
        RetActivity::Active,
    );
    assert!(printed.contains("%y: active"), "{printed}");
    assert!(printed.contains("%z: inactive"), "{printed}");
}

#[test]
fn mismatched_request_is_an_error() {
    // An i1 holds no float bits (wider integers may: a double passed as its bits).
    let module = parse_module("func @f(%x: i1) {\n^e:\n  ret\n}\n").unwrap();
    let id = module.function_by_name("f").unwrap();
    let request = DiffRequest::reverse(id, vec![ArgActivity::Active], RetActivity::Const);
    let err = print_activity(&module, &request).unwrap_err();
    assert!(err.to_string().contains("argument 0 of type i1 as Active"), "{err}");
    let request = DiffRequest::reverse(id, vec![], RetActivity::Const);
    assert!(print_activity(&module, &request).is_err());
}

#[test]
fn call_to_defined_function_is_conservative() {
    let printed = activity_of(
        "func @g(%p: ptr, %x: f64) {\n^e:\n  store %x, %p, align 8\n  ret\n}\nfunc @f(%x: f64) -> f64 {\n^e:\n  %slot = alloca f64, align 8\n  call @g(%slot, %x)\n  %y = load f64, %slot, align 8\n  ret %y\n}\n",
        vec![ArgActivity::Active],
        RetActivity::Active,
    );
    assert!(printed.contains("%slot: active shadow"), "{printed}");
    assert!(printed.contains("call @g(%slot, %x): active"), "{printed}");
    assert!(printed.contains("%y: active"), "{printed}");
}

#[test]
fn argument_behind_follows_pointers_loaded_from_argument_memory() {
    let module = parse_module(
        "func @f(%m: ptr, %k: ptr) {
^e:
  %slot = alloca ptr, align 8
  store %m, %slot, align 8
  %reloaded = load ptr, %slot, align 8
  %eight = const i64 8
  %field = ptradd ptr %reloaded, %eight
  %coef = load ptr, %field, align 8
  %row = load ptr, %coef, align 8
  %local = alloca f64, align 8
  %other = alloca ptr, align 8
  store %m, %other, align 8
  store %k, %other, align 8
  %either = load ptr, %other, align 8
  ret
}
",
    )
    .unwrap();
    let func = &module.functions[module.function_by_name("f").unwrap()];
    let value = |name: &str| {
        func.dfg.values.keys().find(|v| func.dfg.value_name(*v) == Some(name)).unwrap()
    };
    for name in ["m", "reloaded", "field", "coef", "row"] {
        assert_eq!(argument_behind(func, value(name)), Some(0), "%{name}");
    }
    assert_eq!(argument_behind(func, value("k")), Some(1));
    // A local, and a slot that holds either argument, point to neither.
    assert_eq!(argument_behind(func, value("local")), None);
    assert_eq!(argument_behind(func, value("either")), None);
}

const GLOBALS: &str = "global const @table: f64, align 8 = 2.0
global @scale: f64, align 8 = 3.0
global @acc: f64, align 8 = 0.0
global @seed: i64, align 8 = 1
func @f(%x: f64) -> f64 {
^e:
  %t = const ptr @table
  %c = load f64, %t, align 8
  %s = const ptr @scale
  %k = load f64, %s, align 8
  %n = const ptr @seed
  %i = load i64, %n, align 8
  %one = const i64 1
  %i1 = add i64 %i, %one
  store %i1, %n, align 8
  %a = const ptr @acc
  %x2 = fmul f64 %x, %c
  %x3 = fmul f64 %x2, %k
  store %x3, %a, align 8
  %y = load f64, %a, align 8
  ret %y
}
";

#[test]
fn written_float_globals_are_shadowed_others_inactive() {
    let printed = activity_of(GLOBALS, vec![ArgActivity::Active], RetActivity::Active);
    assert!(printed.contains("%a: active shadow"), "{printed}");
    assert!(printed.contains("global @acc: active shadow"), "{printed}");
    assert!(printed.contains("global @table: inactive"), "{printed}");
    assert!(printed.contains("global @seed: inactive"), "{printed}");
    assert!(printed.contains("%y: active"), "{printed}");
    // Constant, never-written and integer-only globals carry nothing.
    assert!(printed.contains("%t: inactive"), "{printed}");
    assert!(printed.contains("%c: inactive"), "{printed}");
    assert!(printed.contains("%s: inactive"), "{printed}");
    assert!(printed.contains("%n: inactive"), "{printed}");
    assert!(printed.contains("%i1: inactive"), "{printed}");
    let module = parse_module(GLOBALS).unwrap();
    let names: Vec<&str> =
        shadowed_globals(&module).iter().map(|g| module.globals[*g].name.as_str()).collect();
    assert_eq!(names, vec!["acc"]);
}

#[test]
fn a_global_written_by_another_function_is_shadowed_where_it_is_only_read() {
    let text = "global @w: f64, align 8 = 0.0
func @set(%v: f64) {
^e:
  %p = const ptr @w
  store %v, %p, align 8
  ret
}
func @f(%x: f64) -> f64 {
^e:
  %p = const ptr @w
  %w = load f64, %p, align 8
  %y = fmul f64 %x, %w
  ret %y
}
";
    let printed = activity_of(text, vec![ArgActivity::Active], RetActivity::Active);
    assert!(printed.contains("%p: active shadow"), "{printed}");
    assert!(printed.contains("%y: active"), "{printed}");
}

#[test]
fn printf_of_an_active_value_is_inactive() {
    let text = "global private const @fmt: [4 x i8], align 1 = c\"%g\\0A\\00\"
declare @printf(ptr, ...) -> i32
func @f(%x: f64) -> f64 {
^e:
  %y = fmul f64 %x, %x
  %s = const ptr @fmt
  %r = call @printf(%s, %y)
  ret %y
}
";
    let printed = activity_of(text, vec![ArgActivity::Active], RetActivity::Active);
    assert!(printed.contains("%s: inactive"), "{printed}");
    assert!(printed.contains("%r: inactive"), "{printed}");
}

#[test]
fn integer_return_path_is_inactive() {
    let printed = activity_of(
        "func @f(%x: f64, %n: i64) -> f64 {\n^e:\n  %two = const i64 2\n  %m = mul i64 %n, %two\n  %mf = sitofp %m to f64\n  %r = fmul f64 %x, %mf\n  ret %r\n}\n",
        vec![ArgActivity::Active, ArgActivity::Const],
        RetActivity::Active,
    );
    assert!(printed.contains("%m: inactive"), "{printed}");
    assert!(printed.contains("%mf: inactive"), "{printed}");
    assert!(printed.contains("%r: active"), "{printed}");
}
