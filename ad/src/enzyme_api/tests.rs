//! Unit tests of the Enzyme API lowering, against a stand-in synthesizer whose results are recognisable.

use adc_ir::builder::FunctionBuilder;
use adc_ir::interp::{Interpreter, Val};
use adc_ir::text::{parse_module, print_module};
use adc_ir::{BinaryOp, Linkage};

use super::*;

/// A stand-in for synthesis with a recognisable result: the adjoint of the k-th active
/// argument is `(k + 1) * value`, and the first shadow gets 7.0 stored into it. It
/// follows the derivative signature of `crate::request` exactly.
#[derive(Default)]
struct ScaledAdjoints {
    requests: Vec<DiffRequest>,
}

impl Synthesize for ScaledAdjoints {
    fn derivative(
        &mut self,
        module: &mut Module,
        request: &DiffRequest,
    ) -> Result<FuncId, AdError> {
        self.requests.push(request.clone());
        let primal = module.functions[request.function].signature.clone();
        let mut params = Vec::new();
        let mut active_types = Vec::new();
        for (ty, activity) in primal.params.iter().zip(&request.args) {
            params.push(ty.clone());
            if activity.has_shadow() {
                params.push(ty.clone());
            }
            if *activity == ArgActivity::Active {
                active_types.push(ty.clone());
            }
        }
        let ret = match active_types.len() {
            0 => None,
            1 => Some(active_types[0].clone()),
            _ => Some(Type::structure(active_types.clone(), false)),
        };
        let name = format!("d_{}_{}", module.functions[request.function].name, self.requests.len());
        let mut func = Function::new(name, Signature::new(params, ret.clone()));
        func.linkage = Linkage::Internal;
        let signatures: Vec<Signature> =
            module.functions.values().map(|f| f.signature.clone()).collect();
        let sigs = |f: FuncId| signatures.get(f.as_u32() as usize).cloned();
        let mut b = FunctionBuilder::new(&mut func, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let values = b.func.dfg.block_params(entry).to_vec();
        let mut next = values.iter().copied();
        let mut adjoints = Vec::new();
        let mut stored = false;
        for activity in &request.args {
            let value = next.next().expect("primal parameter");
            if activity.has_shadow() {
                let shadow = next.next().expect("shadow parameter");
                if !stored {
                    let seven = b.f64const(7.0);
                    b.store(seven, shadow, 8);
                    stored = true;
                }
            }
            if *activity == ArgActivity::Active {
                let ty = b.func.dfg.value_type(value).clone();
                let k = (adjoints.len() + 1) as f64;
                let scale = if ty == Type::F32 {
                    b.constant(Type::F32, Constant::f32(k as f32))
                } else {
                    b.f64const(k)
                };
                adjoints.push(b.binary(BinaryOp::Fmul, value, scale));
            }
        }
        let result = match (adjoints.len(), ret) {
            (0, _) => None,
            (1, _) => Some(adjoints[0]),
            (_, Some(ty)) => {
                let mut agg = b.constant(ty, Constant::Undef);
                for (i, a) in adjoints.iter().enumerate() {
                    let (_, v) = b.ins(InstructionData::InsertValue {
                        aggregate: agg,
                        value: *a,
                        indices: vec![i as u32],
                    });
                    agg = v.expect("insertvalue result");
                }
                Some(agg)
            }
            _ => unreachable!("several adjoints always have a struct type"),
        };
        b.ret(result);
        Ok(module.add_function(func))
    }
}

const PRELUDE: &str = "
global @enzyme_dup: i32, align 4 = 0
global @enzyme_dupnoneed: i32, align 4 = 0
global @enzyme_const: i32, align 4 = 0
global @enzyme_out: i32, align 4 = 0
global @enzyme_width: i32, align 4 = 0
declare @__enzyme_autodiff(ptr, ...) -> f64
declare @__enzyme_autodiff_pair(ptr, ...) -> {f64, f64}
declare @__enzyme_autodiff_fpair(ptr, ...) -> <2 x f32>
declare @__enzyme_autodiff_triple(ptr sret, ptr, ...)
declare @__enzyme_fwddiff(ptr, ...) -> f64
declare @__enzyme_fwddiff_pair(ptr, ...) -> {f64, f64}
declare @__enzyme_fwddiff_f(ptr, ...) -> f32
declare @external(f64) -> f64
func @square(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  ret %y
}
func @scale(%p: ptr, %n: i32) -> f64 {
^entry:
  %x = load f64, %p, align 8
  ret %x
}
func @mul(%a: f64, %b: f64) -> f64 {
^entry:
  %y = fmul f64 %a, %b
  ret %y
}
func @fmul(%a: f32, %b: f32) -> f32 {
^entry:
  %y = fmul f32 %a, %b
  ret %y
}
func @mul3(%a: f64, %b: f64, %c: f64) -> f64 {
^entry:
  %y = fmul f64 %a, %b
  %z = fmul f64 %y, %c
  ret %z
}
";

fn lower(caller: &str) -> (Module, Result<LoweringReport, AdError>, ScaledAdjoints) {
    let text = format!("{PRELUDE}{caller}");
    let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let mut synth = ScaledAdjoints::default();
    let result = lower_enzyme_calls(&mut module, &mut synth);
    if result.is_ok() {
        adc_ir::verify::verify_module(&module)
            .unwrap_or_else(|d| panic!("{d}\n{}", print_module(&module)));
    }
    (module, result, synth)
}

fn run(module: &Module, name: &str, args: &[Val]) -> Option<Val> {
    let mut interp = Interpreter::new(module).expect("interpreter");
    let func = module.function_by_name(name).expect("function");
    interp.call(func, args).unwrap_or_else(|e| panic!("{}", e.message()))
}

fn error_of(caller: &str) -> String {
    let (_, result, _) = lower(caller);
    let err = result.expect_err("the call is malformed");
    assert!(matches!(err.kind, AdErrorKind::BadApiCall { .. }), "{err}");
    assert!(err.site.inst.as_deref().is_some_and(|i| i.contains("__enzyme_autodiff")), "{err}");
    err.to_string()
}

#[test]
fn a_float_argument_is_active_by_default() {
    let (module, result, synth) = lower(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
    );
    assert_eq!(result.expect("lowered").calls_lowered, 1);
    assert_eq!(synth.requests[0].args, [ArgActivity::Active]);
    assert_eq!(synth.requests[0].ret, RetActivity::Active);
    assert_eq!(run(&module, "g", &[Val::F64(3.0)]), Some(Val::F64(3.0)));
    let text = print_module(&module);
    assert!(!text.contains("call @__enzyme_autodiff("), "{text}");
}

#[test]
fn markers_pick_activities_and_shadows_are_passed() {
    let (module, result, synth) = lower(
        "func @g(%x: ptr, %dx: ptr, %n: i32) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup, %x, %dx, %const, %n)
  ret %r
}",
    );
    result.expect("lowered");
    assert_eq!(synth.requests[0].args, [ArgActivity::Dup, ArgActivity::Const]);
    let text = print_module(&module);
    assert!(!text.contains("@enzyme_dup\n"), "dead marker loads are removed:\n{text}");
    let mut interp = Interpreter::new(&module).expect("interpreter");
    let x = interp.alloc(&Type::F64, &[Val::F64(1.0)]).expect("alloc");
    let dx = interp.alloc(&Type::F64, &[Val::F64(0.0)]).expect("alloc");
    let g = module.function_by_name("g").expect("g");
    let r = interp.call(g, &[x, dx.clone(), Val::Int(4)]).expect("runs");
    // No active argument: the declared double result is defined as zero.
    assert_eq!(r, Some(Val::F64(0.0)));
    assert_eq!(interp.read(&dx, &Type::F64, 1).expect("read"), [Val::F64(7.0)]);
}

#[test]
fn markers_through_a_local_slot_and_casts_are_found() {
    // What clang -O0 leaves when the marker and the function go through locals.
    let (_, result, synth) = lower(
        "func @g(%x: ptr, %dx: ptr, %n: i32) -> f64 {
^entry:
  %slot = alloca i32, align 4
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  store %dup, %slot, align 4
  %dup2 = load i32, %slot, align 4
  %fslot = alloca ptr, align 8
  %fp = const ptr @scale
  %fi = ptrtoint %fp to i64
  %fp2 = inttoptr %fi to ptr
  store %fp2, %fslot, align 8
  %fp3 = load ptr, %fslot, align 8
  %r = call @__enzyme_autodiff(%fp3, %dup2, %x, %dx, %n)
  ret %r
}",
    );
    result.expect("lowered");
    assert_eq!(synth.requests[0].args, [ArgActivity::Dup, ArgActivity::Const]);
}

#[test]
fn a_pair_of_adjoints_is_returned_as_declared() {
    let (module, result, synth) = lower(
        "func @g(%a: f64, %b: f64) -> {f64, f64} {
^entry:
  %fp = const ptr @mul
  %out_addr = const ptr @enzyme_out
  %out = load i32, %out_addr, align 4
  %r = call @__enzyme_autodiff_pair(%fp, %out, %a, %b)
  ret %r
}",
    );
    result.expect("lowered");
    assert_eq!(synth.requests[0].args, [ArgActivity::Active, ArgActivity::Active]);
    assert_eq!(
        run(&module, "g", &[Val::F64(2.0), Val::F64(5.0)]),
        Some(Val::Aggregate(vec![Val::F64(2.0), Val::F64(10.0)]))
    );
}

#[test]
fn promoted_floats_are_narrowed_and_repacked_into_a_vector() {
    let (module, result, _) = lower(
        "func @g(%a: f64, %b: f64) -> <2 x f32> {
^entry:
  %fp = const ptr @fmul
  %r = call @__enzyme_autodiff_fpair(%fp, %a, %b)
  ret %r
}",
    );
    result.expect("lowered");
    assert_eq!(
        run(&module, "g", &[Val::F64(1.5), Val::F64(3.0)]),
        Some(Val::Vector(vec![Val::F32(1.5), Val::F32(6.0)]))
    );
}

#[test]
fn three_adjoints_are_stored_through_the_sret_pointer() {
    let (module, result, _) = lower(
        "func @g(%a: f64, %b: f64, %c: f64) -> f64 {
^entry:
  %out = alloca {f64, f64, f64}, align 8
  %fp = const ptr @mul3
  call @__enzyme_autodiff_triple(%out, %fp, %a, %b, %c)
  %eight = const i64 16
  %p = ptradd ptr %out, %eight
  %z = load f64, %p, align 8
  %x = load f64, %out, align 8
  %s = fadd f64 %x, %z
  ret %s
}",
    );
    result.expect("lowered");
    // a * 1 + c * 3
    assert_eq!(
        run(&module, "g", &[Val::F64(2.0), Val::F64(5.0), Val::F64(7.0)]),
        Some(Val::F64(23.0))
    );
}

#[test]
fn a_marker_at_the_end_is_an_error() {
    let err = error_of(
        "func @g(%x: ptr) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup)
  ret %r
}",
    );
    assert!(err.contains("enzyme_dup at the end of the argument list"), "{err}");
}

#[test]
fn dup_without_a_shadow_is_an_error() {
    let err = error_of(
        "func @g(%x: ptr) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup, %x)
  ret %r
}",
    );
    assert!(err.contains("ends before its shadow"), "{err}");
}

#[test]
fn a_shadow_that_is_not_a_pointer_is_an_error() {
    let err = error_of(
        "func @g(%x: ptr, %n: i32) -> f64 {
^entry:
  %fp = const ptr @scale
  %r = call @__enzyme_autodiff(%fp, %x, %n, %n)
  ret %r
}",
    );
    assert!(err.contains("its shadow has type i32, not a pointer"), "{err}");
}

#[test]
fn argument_counts_are_checked() {
    let too_many = error_of(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %x, %x)
  ret %r
}",
    );
    assert!(too_many.contains("too many arguments"), "{too_many}");
    let too_few = error_of(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
    );
    assert!(too_few.contains("too few arguments"), "{too_few}");
}

#[test]
fn argument_types_are_checked() {
    let err = error_of(
        "func @g(%n: i64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %n)
  ret %r
}",
    );
    assert!(err.contains("passes a value of type i64"), "{err}");
}

#[test]
fn the_function_must_be_known_and_defined() {
    let unknown = error_of(
        "func @g(%f: ptr, %x: f64) -> f64 {
^entry:
  %r = call @__enzyme_autodiff(%f, %x)
  ret %r
}",
    );
    assert!(unknown.contains("is not a known function"), "{unknown}");
    let declared = error_of(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @external
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
    );
    assert!(declared.contains("@external is only declared here"), "{declared}");
}

#[test]
fn two_markers_in_a_row_and_unknown_markers_are_errors() {
    let err = error_of(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %a = const ptr @enzyme_const
  %m1 = load i32, %a, align 4
  %b = const ptr @enzyme_out
  %m2 = load i32, %b, align 4
  %r = call @__enzyme_autodiff(%fp, %m1, %m2, %x)
  ret %r
}",
    );
    assert!(err.contains("marker enzyme_out follows enzyme_const"), "{err}");
    let err = error_of(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %a = const ptr @enzyme_width
  %w = load i32, %a, align 4
  %r = call @__enzyme_autodiff(%fp, %w, %x)
  ret %r
}",
    );
    // Vector mode is forward mode only (see `width.rs`).
    assert!(err.contains("enzyme_width (vector mode) is supported in forward mode only"), "{err}");
}

#[test]
fn too_many_adjoints_for_the_declared_result_is_an_error() {
    let err = error_of(
        "func @g(%a: f64, %b: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %r = call @__enzyme_autodiff(%fp, %a, %b)
  ret %r
}",
    );
    assert!(err.contains("declared to return f64"), "{err}");
}

/// Lowers `caller` with the real synthesizer, as `adc build` does.
fn lower_forward(caller: &str) -> (Module, Result<LoweringReport, AdError>) {
    let text = format!("{PRELUDE}{caller}");
    let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let mut synth = crate::Differentiator::default();
    let result = lower_enzyme_calls(&mut module, &mut synth);
    if result.is_ok() {
        adc_ir::verify::verify_module(&module)
            .unwrap_or_else(|d| panic!("{d}\n{}", print_module(&module)));
    }
    (module, result)
}

#[test]
fn fwddiff_passes_tangents_and_returns_the_tangent_of_the_result() {
    // d(a * b) with a unmarked (duplicated: value then tangent) and b constant.
    let (module, result) = lower_forward(
        "func @g(%a: f64, %da: f64, %b: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %r = call @__enzyme_fwddiff(%fp, %a, %da, %const, %b)
  ret %r
}",
    );
    let report = result.expect("lowered");
    assert_eq!(report.requests[0].mode, DiffMode::Forward);
    assert_eq!(report.requests[0].args, [ArgActivity::Dup, ArgActivity::Const]);
    assert!(module.function_by_name("__adc_forward_mul").is_some());
    let args = [Val::F64(3.0), Val::F64(0.5), Val::F64(4.0)];
    assert_eq!(run(&module, "g", &args), Some(Val::F64(0.5 * 4.0)));
}

#[test]
fn fwddiff_narrows_promoted_float_tangents() {
    // A variadic call promotes the f32 values and their tangents to f64; all are narrowed.
    let (module, result) = lower_forward(
        "func @g(%a: f64, %da: f64, %b: f64, %db: f64) -> f32 {
^entry:
  %fp = const ptr @fmul
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %r = call @__enzyme_fwddiff_f(%fp, %dup, %a, %da, %dup, %b, %db)
  ret %r
}",
    );
    result.expect("lowered");
    let args = [Val::F64(2.0), Val::F64(1.0), Val::F64(3.0), Val::F64(0.25)];
    assert_eq!(run(&module, "g", &args), Some(Val::F32(3.0 + 2.0 * 0.25)));
}

#[test]
fn fwddiff_with_enzyme_out_is_an_error_naming_the_call() {
    let (_, result) = lower_forward(
        "func @g(%a: f64, %b: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %out_addr = const ptr @enzyme_out
  %out = load i32, %out_addr, align 4
  %r = call @__enzyme_fwddiff(%fp, %out, %a, %b, %b)
  ret %r
}",
    );
    let err = result.expect_err("enzyme_out is rejected");
    assert!(
        matches!(&err.kind, AdErrorKind::BadApiCall { api, .. } if api == FWDDIFF_API),
        "{err}"
    );
    assert!(err.site.inst.as_deref().is_some_and(|i| i.contains("__enzyme_fwddiff")), "{err}");
    assert!(err.to_string().contains("enzyme_out is a reverse-mode marker"), "{err}");
}

#[test]
fn fwddiff_without_a_tangent_is_an_error() {
    let (_, result) = lower_forward(
        "func @g(%a: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_fwddiff(%fp, %a)
  ret %r
}",
    );
    let err = result.expect_err("the tangent is missing").to_string();
    assert!(err.contains("ends before its tangent"), "{err}");
}

#[test]
fn fwddiff_of_a_pair_result_returns_both_tangents() {
    let (module, result) = lower_forward(
        "func @both(%x: f64) -> {f64, f64} {
^entry:
  %sq = fmul f64 %x, %x
  %cube = fmul f64 %sq, %x
  %u = const {f64, f64} undef
  %p = insertvalue {f64, f64} %u, %sq, 0
  %q = insertvalue {f64, f64} %p, %cube, 1
  ret %q
}
func @g(%x: f64) -> {f64, f64} {
^entry:
  %fp = const ptr @both
  %one = const f64 1.0
  %r = call @__enzyme_fwddiff_pair(%fp, %x, %one)
  ret %r
}",
    );
    result.expect("lowered");
    let got = run(&module, "g", &[Val::F64(2.0)]);
    assert_eq!(got, Some(Val::Aggregate(vec![Val::F64(4.0), Val::F64(12.0)])));
}

const APPLY: &str = "
func @cube(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  %z = fmul f64 %y, %x
  ret %z
}
func @apply(%g: ptr, %x: f64) -> f64 {
^entry:
  %y = call_indirect fn(f64) -> f64 %g(%x)
  ret %y
}
func @ignores(%g: ptr, %x: f64) -> f64 {
^entry:
  ret %x
}
";

fn specialize(caller: &str) -> (Module, SpecializeReport) {
    let text = format!("{PRELUDE}{APPLY}{caller}");
    let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let report = specialize_function_arguments(&mut module);
    adc_ir::verify::verify_module(&module)
        .unwrap_or_else(|d| panic!("{d}\n{}", print_module(&module)));
    (module, report)
}

#[test]
fn constant_function_arguments_are_bound_in_a_shared_copy() {
    let (mut module, report) = specialize(
        "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @apply
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %sq = const ptr @square
  %cu = const ptr @cube
  %a = call @__enzyme_autodiff(%fp, %const, %sq, %x)
  %b = call @__enzyme_autodiff(%fp, %const, %cu, %x)
  %c = call @__enzyme_autodiff(%fp, %const, %sq, %x)
  %s = fadd f64 %a, %b
  %t = fadd f64 %s, %c
  ret %t
}",
    );
    assert_eq!(report.calls_rewritten, 3);
    let names: Vec<&str> =
        report.copies.iter().map(|f| module.functions[*f].name.as_str()).collect();
    assert_eq!(names, ["apply.for.square", "apply.for.cube"]);
    let square_copy = report.copies[0];
    assert_eq!(module.functions[square_copy].linkage, Linkage::Internal);
    let text = print_module(&module);
    assert!(text.contains("func @apply(%g: ptr"), "the original stays:\n{text}");
    // The copy computes the bound function whatever pointer it is passed.
    let cube = module.function_by_name("cube").expect("cube");
    let mut interp = Interpreter::new(&module).expect("interpreter");
    let unrelated = interp.function_address(cube);
    let r = interp.call(square_copy, &[unrelated, Val::F64(3.0)]).expect("runs");
    assert_eq!(r, Some(Val::F64(9.0)));
    let mut synth = ScaledAdjoints::default();
    lower_enzyme_calls(&mut module, &mut synth).expect("lowered");
    let differentiated: Vec<&str> =
        synth.requests.iter().map(|r| module.functions[r.function].name.as_str()).collect();
    assert_eq!(differentiated, ["apply.for.square", "apply.for.cube", "apply.for.square"]);
}

#[test]
fn run_time_pointers_and_unused_parameters_stay_unbound() {
    let (module, report) = specialize(
        "func @g(%x: f64, %chosen: ptr) -> f64 {
^entry:
  %fp = const ptr @apply
  %ig = const ptr @ignores
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %sq = const ptr @square
  %a = call @__enzyme_autodiff(%fp, %const, %chosen, %x)
  %b = call @__enzyme_autodiff(%ig, %const, %sq, %x)
  %s = fadd f64 %a, %b
  ret %s
}",
    );
    assert_eq!(report, SpecializeReport::default());
    assert!(!print_module(&module).contains(".for."));
}

/// Called through another prototype (a cast, or files that declare the entry point
/// differently), the call is an indirect call of the entry point's address; it is lowered
/// like a direct one.
#[test]
fn an_api_call_through_another_prototype_is_lowered() {
    let (module, result, synth) = lower(
        "func @g(%x: f64) -> {f64, f64} {
^entry:
  %fp = const ptr @mul
  %api = const ptr @__enzyme_autodiff
  %r = call_indirect fn(ptr, ...) -> {f64, f64} %api(%fp, %x, %x)
  ret %r
}",
    );
    assert_eq!(result.expect("lowered").calls_lowered, 1);
    assert_eq!(synth.requests[0].args, [ArgActivity::Active, ArgActivity::Active]);
    let text = print_module(&module);
    assert!(!text.contains("call_indirect"), "{text}");
    let pair = run(&module, "g", &[Val::F64(3.0)]);
    assert_eq!(pair, Some(Val::Aggregate(vec![Val::F64(3.0), Val::F64(6.0)])), "{text}");
}
