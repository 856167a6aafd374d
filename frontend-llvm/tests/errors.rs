//! Error paths of the importer (each must be a clear error, never a panic) and targeted
//! translations checked on the printed IR. Inputs are LLVM text assembled by `llvm-as-19`
//! or C compiled by `clang-19`; a missing tool skips the test with a notice.

use std::path::{Path, PathBuf};
use std::process::Command;

use adc_frontend_llvm::{import_bitcode_file, ImportError};

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("errors");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir.join(name)
}

fn tool(name: &str) -> bool {
    let ok = Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("notice: {name} not found, test skipped");
    }
    ok
}

/// Assembles LLVM text into bitcode.
fn assemble(name: &str, ll: &str) -> Option<PathBuf> {
    if !tool("llvm-as-19") {
        return None;
    }
    let src = tmp(&format!("{name}.ll"));
    let bc = tmp(&format!("{name}.bc"));
    std::fs::write(&src, ll).expect("write .ll");
    let out = Command::new("llvm-as-19").arg(&src).arg("-o").arg(&bc).output().expect("llvm-as-19");
    assert!(out.status.success(), "llvm-as: {}", String::from_utf8_lossy(&out.stderr));
    Some(bc)
}

/// Compiles C (or C++ with `lang = "c++"`) to bitcode.
fn compile(name: &str, lang: &str, flags: &[&str], code: &str) -> Option<PathBuf> {
    if !tool("clang-19") {
        return None;
    }
    let src = tmp(&format!("{name}.{}", if lang == "c++" { "cpp" } else { "c" }));
    let bc = tmp(&format!("{name}.bc"));
    std::fs::write(&src, code).expect("write source");
    let out = Command::new("clang-19")
        .args(["-x", lang, "-c", "-emit-llvm"])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&bc)
        .output()
        .expect("clang-19");
    assert!(out.status.success(), "clang: {}", String::from_utf8_lossy(&out.stderr));
    Some(bc)
}

fn import_text(bc: &Path) -> String {
    match import_bitcode_file(bc) {
        Ok(m) => adc_ir::text::print_module(&m),
        Err(e) => panic!("import failed: {}", e.to_diagnostic()),
    }
}

fn import_error(bc: &Path) -> ImportError {
    match import_bitcode_file(bc) {
        Ok(m) => panic!("import succeeded:\n{}", adc_ir::text::print_module(&m)),
        Err(e) => e,
    }
}

#[test]
fn missing_file_is_an_error() {
    let e = import_error(Path::new("/nonexistent/x.bc"));
    assert!(matches!(e, ImportError::Unreadable { .. }), "{e}");
    assert_eq!(e.to_string().lines().count(), 1);
}

#[test]
fn text_file_is_not_bitcode() {
    let path = tmp("not_bitcode.bc");
    std::fs::write(&path, "int main(void) { return 0; }\n").unwrap();
    let e = import_error(&path);
    assert!(matches!(e, ImportError::NotBitcode { .. }), "{e}");
    assert!(e.to_string().ends_with("is not an LLVM bitcode file"), "{e}");
    let empty = tmp("empty.bc");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(import_error(&empty), ImportError::NotBitcode { .. }));
}

#[test]
fn truncated_bitcode_is_a_one_line_error_at_every_length() {
    let Some(bc) = compile("truncate_me", "c", &["-O2"], "int f(int x) { return x * 3; }\n") else {
        return;
    };
    let bytes = std::fs::read(&bc).unwrap();
    for cut in [4, 8, 20, 64, bytes.len() / 3, bytes.len() / 2, bytes.len() - 8] {
        let path = tmp(&format!("truncated_{cut}.bc"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let e = import_error(&path);
        assert!(matches!(e, ImportError::BadBitcode { .. }), "cut {cut}: {e}");
        let text = e.to_string();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("truncated, or written by an LLVM newer than 19"), "{text}");
    }
}

#[test]
fn try_catch_is_an_error() {
    let code = "void g();\nint f() { try { g(); } catch (...) { return 1; } return 0; }\n";
    let Some(bc) = compile("invoke", "c++", &["-O1"], code) else {
        return;
    };
    let e = import_error(&bc);
    let ImportError::Unsupported { function, inst, reason } = &e else { panic!("{e}") };
    assert_eq!(function, "_Z1fv");
    assert!(inst.contains("invoke"), "{inst}");
    assert!(reason.contains("exception handler that catches"), "{reason}");
    let d = e.to_diagnostic();
    assert!(d.message.contains("@_Z1fv"), "{d}");
    assert!(d.label.as_deref().is_some_and(|l| l.starts_with("LLVM: ")), "{d}");
}

/// Destructors run while unwinding (a cleanup landing pad) and the terminate handler of a
/// `noexcept` function are dropped with the unwind edge: the invoke becomes a call and a
/// jump, and no landing pad is left.
#[test]
fn cleanups_and_noexcept_handlers_import_without_unwind_edges() {
    let code = "void g(); struct Guard { ~Guard(); };\n\
                int cleanup(int x) { Guard guard; g(); return x + 1; }\n\
                int no_throw(int x) noexcept { g(); return x * 2; }\n";
    for level in ["-O0", "-O2"] {
        let Some(bc) = compile(&format!("cleanup{level}"), "c++", &[level], code) else {
            return;
        };
        let text = import_text(&bc);
        for function in ["@_Z7cleanupi", "@_Z8no_throwi"] {
            let body = text.split(&format!("func {function}(")).nth(1).expect(function);
            let body = &body[..body.find("\n}\n").expect("end of the function")];
            assert!(body.contains("call @_Z1gv("), "{level} {function}:\n{body}");
            assert!(!body.contains("__clang_call_terminate"), "{level} {function}:\n{body}");
        }
    }
}

#[test]
fn inline_asm_is_an_error() {
    let Some(bc) =
        compile("asm", "c", &["-O1"], "int f(int x) { __asm__ volatile(\"nop\"); return x; }\n")
    else {
        return;
    };
    let e = import_error(&bc);
    assert!(e.to_string().contains("in function @f"), "{e}");
    assert!(e.to_string().contains("inline assembly `nop` is not supported"), "{e}");
}

#[test]
fn computed_goto_is_an_error() {
    let code = "int f(int i) { static void *t[] = { &&a, &&b }; goto *t[i & 1]; a: return 1; b: return 2; }\n";
    let Some(bc) = compile("indirectbr", "c", &["-O0"], code) else {
        return;
    };
    let e = import_error(&bc).to_string();
    assert!(e.contains("blockaddress") || e.contains("indirectbr"), "{e}");
}

#[test]
fn varargs_definitions_import_as_va_intrinsic_calls() {
    let code =
        "#include <stdarg.h>\nint sum(int n, ...) { va_list ap, aq; va_start(ap, n); int s = 0;\n\
                va_copy(aq, ap); for (int i = 0; i < n; i++) s += va_arg(ap, int);\n\
                va_end(aq); va_end(ap); return s; }\n";
    for level in ["-O0", "-O1", "-O2"] {
        let Some(bc) = compile("varargs", "c", &[level], code) else {
            return;
        };
        let text = import_text(&bc);
        for intrinsic in ["llvm.va_start", "llvm.va_copy", "llvm.va_end"] {
            assert!(text.contains(&format!("call @{intrinsic}(")), "{level}: {text}");
            assert!(text.contains(&format!("declare @{intrinsic}(ptr")), "{level}: {text}");
        }
        assert!(text.contains("func @sum(") && text.contains(", ...) -> i32"), "{level}: {text}");
    }
}

#[test]
fn the_va_arg_instruction_is_an_error() {
    let ll = "define i32 @first(ptr %ap) {\n  %v = va_arg ptr %ap, i32\n  ret i32 %v\n}\n";
    let Some(bc) = assemble("va_arg", ll) else {
        return;
    };
    let e = import_error(&bc).to_string();
    assert!(e.contains("@first") && e.contains("va_arg"), "{e}");
}

#[test]
fn long_double_and_integers_wider_than_128_bits_are_errors() {
    let Some(bc) =
        compile("fp80", "c", &["-O1"], "long double f(long double x) { return x * 2; }\n")
    else {
        return;
    };
    let e = import_error(&bc).to_string();
    assert!(e.contains("X86_FP80") || e.contains("not supported"), "{e}");
    let Some(bc) = compile(
        "bitint",
        "c",
        &["-O0", "-std=c2x"],
        "_BitInt(200) f(_BitInt(200) x) { return x + 1; }\n",
    ) else {
        return;
    };
    let e = import_error(&bc).to_string();
    assert!(e.contains("i256") && e.contains("no adc counterpart"), "{e}");
}

#[test]
fn odd_integer_widths_import() {
    let Some(bc) = compile(
        "bitint37",
        "c",
        &["-O0", "-std=c2x"],
        "_BitInt(37) f(_BitInt(37) x) { return x * 3 + 1; }\n",
    ) else {
        return;
    };
    let text = import_text(&bc);
    // The 37-bit product and sum wrap: masked to 37 bits in their i64 container.
    assert!(text.contains("and i64") && text.contains("137438953471"), "{text}");
}

#[test]
fn extractvalue_from_named_structs_imports() {
    // libdevice's shape: fields read out of a named struct by value, one of them i37 (which
    // the odd-width translation masks, so it must find the field type through the name).
    let ll = "%struct.uint2 = type { i32, i32 }\n\
              %struct.odd = type { i37, double }\n\
              define i32 @hi(%struct.uint2 %v) {\n  %h = extractvalue %struct.uint2 %v, 1\n  ret i32 %h\n}\n\
              define i37 @low(%struct.odd %v) {\n  %l = extractvalue %struct.odd %v, 0\n  ret i37 %l\n}\n";
    let Some(bc) = assemble("named_extract", ll) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("extractvalue"), "{text}");
    // i37 lives in an i64 and is masked to its 37 bits.
    assert!(text.contains("137438953471"), "{text}");
}

#[test]
fn unknown_intrinsics_are_errors_naming_the_call() {
    let ll = "declare ptr @llvm.frameaddress.p0(i32)\n\
              define ptr @f() {\n  %p = call ptr @llvm.frameaddress.p0(i32 0)\n  ret ptr %p\n}\n";
    let Some(bc) = assemble("frameaddress", ll) else {
        return;
    };
    let e = import_error(&bc);
    let text = e.to_string();
    assert!(
        text.contains("@llvm.frameaddress.p0 is not supported") && text.contains("in function @f"),
        "{text}"
    );
}

#[test]
fn phis_become_block_arguments_and_critical_edges_are_split() {
    let ll = r#"
define i32 @f(i32 %x, i1 %c) {
entry:
  br i1 %c, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add nsw i32 %i, 1
  %done = icmp sge i32 %next, %x
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i32 [ -1, %entry ], [ %next, %loop ]
  switch i32 %r, label %other [ i32 1, label %one
                                i32 2, label %one ]
one:
  %v = phi i32 [ 10, %exit ], [ 10, %exit ]
  ret i32 %v
other:
  ret i32 %r
}
"#;
    let Some(bc) = assemble("phis", ll) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("^loop(%i: i32):"), "{text}");
    assert!(text.contains("^exit(%r: i32):"), "{text}");
    // Every edge with arguments out of a two-way branch goes through its own block.
    assert!(text.contains("brif %c, ^entry.to.loop, ^entry.to.exit"), "{text}");
    assert!(text.contains("^entry.to.loop:\n  %v"), "{text}");
    assert!(text.contains("brif %done, ^loop.to.exit, ^loop.to.loop"), "{text}");
    // Both switch cases reach ^one over the same edge: one split block serves them.
    assert!(text.contains("switch %r, ^other [1: ^exit.to.one, 2: ^exit.to.one]"), "{text}");
}

#[test]
fn gep_becomes_ptradd_with_layout_offsets() {
    let ll = r#"
%struct.S = type { i8, double, [4 x i32] }
@g = global [3 x %struct.S] zeroinitializer
@p = global ptr getelementptr inbounds ([3 x %struct.S], ptr @g, i64 0, i64 2, i32 2, i64 3)

define ptr @f(ptr %s, i32 %i, i64 %j) {
  %a = getelementptr inbounds %struct.S, ptr %s, i32 %i, i32 2, i64 %j
  ret ptr %a
}

define i32 @h() {
  %v = load i32, ptr getelementptr inbounds ([3 x %struct.S], ptr @g, i64 0, i64 1, i32 2, i64 1), align 4
  ret i32 %v
}
"#;
    let Some(bc) = assemble("gep", ll) else {
        return;
    };
    let text = import_text(&bc);
    // struct.S: i8 @0, double @8, [4 x i32] @16, size 32.
    assert!(text.contains("global @p: ptr, align 8 = @g + 92"), "{text}");
    assert!(text.contains("global @g: [3 x {i8, f64, [4 x i32]}], align 8"), "{text}");
    assert!(
        text.contains("%v3 = sext %i to i64\n  %v4 = const i64 32\n  %v5 = mul nsw i64 %v3, %v4"),
        "{text}"
    );
    assert!(text.contains("%v7 = mul nsw i64 %j, %v6"), "{text}");
    assert!(
        text.contains(
            "%v9 = const i64 16\n  %v10 = add i64 %v8, %v9\n  %a = ptradd inbounds ptr %s, %v10"
        ),
        "{text}"
    );
    assert!(text.contains("const ptr @g + 52"), "{text}");
}

#[test]
fn intrinsics_expand_as_documented() {
    let ll = r#"
declare double @llvm.fmuladd.f64(double, double, double)
declare double @llvm.minimum.f64(double, double)
declare { i32, i1 } @llvm.sadd.with.overflow.i32(i32, i32)
declare i32 @llvm.fshl.i32(i32, i32, i32)
declare double @llvm.sin.f64(double)
declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>)
declare void @llvm.lifetime.start.p0(i64, ptr)
declare i64 @llvm.expect.i64(i64, i64)

define double @f(double %a, double %b, double %c, <4 x float> %v, i32 %x, i64 %e) {
  %m = call double @llvm.fmuladd.f64(double %a, double %b, double %c)
  %n = call double @llvm.minimum.f64(double %m, double %a)
  %s = call double @llvm.sin.f64(double %n)
  %o = call { i32, i1 } @llvm.sadd.with.overflow.i32(i32 %x, i32 7)
  %r = call i32 @llvm.fshl.i32(i32 %x, i32 %x, i32 3)
  %t = call reassoc float @llvm.vector.reduce.fadd.v4f32(float 0.0, <4 x float> %v)
  call void @llvm.lifetime.start.p0(i64 8, ptr null)
  %k = call i64 @llvm.expect.i64(i64 %e, i64 1)
  ret double %s
}
"#;
    let Some(bc) = assemble("intrinsics", ll) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("fmul contract f64 %a, %b"), "{text}");
    assert!(text.contains("fadd contract f64"), "{text}");
    assert!(!text.contains("fma "), "{text}");
    assert!(text.contains("%s = call @sin("), "{text}");
    assert!(text.contains("declare @sin(f64) -> f64"), "{text}");
    assert!(text.contains("insertvalue {i32, i1}"), "{text}");
    assert!(text.contains("reduce.fadd reassoc <4 x f32> %v"), "{text}");
    assert!(!text.contains("lifetime"), "{text}");
    assert!(!text.contains("llvm."), "{text}");
}

#[test]
fn tbaa_fast_math_and_debug_locations_are_kept() {
    let code = "double f(double *x, int *n) { double s = 0; for (int i = 0; i < *n; i++) s += x[i]; return s; }\n";
    let Some(bc) = compile("tbaa", "c", &["-O1", "-g", "-ffast-math"], code) else {
        return;
    };
    let module = import_bitcode_file(&bc).unwrap_or_else(|e| panic!("{e}"));
    let f = &module.functions[module.function_by_name("f").expect("@f")];
    let mut tags: Vec<&str> =
        f.layout.insts().filter_map(|(_, i)| f.dfg.tbaa[i].as_deref()).collect();
    tags.sort();
    tags.dedup();
    assert_eq!(tags, ["double", "int"]);
    let text = adc_ir::text::print_module(&module);
    assert!(text.contains("fadd fast f64"), "{text}");
    assert!(text.contains("tbaa.c\":1:"), "{text}");
}

#[test]
fn clang14_typed_pointer_bitcode_loads() {
    if !tool("clang-14") {
        return;
    }
    let src = tmp("old.c");
    std::fs::write(
        &src,
        "struct P { int a; double b; } ps[2] = {{1, 2.0}};\ndouble g(int i) { return ps[i].b; }\n",
    )
    .unwrap();
    let bc = tmp("old.bc");
    let out = Command::new("clang-14")
        .args(["-c", "-emit-llvm", "-O0"])
        .arg(&src)
        .arg("-o")
        .arg(&bc)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = import_text(&bc);
    assert!(text.contains("func @g("), "{text}");
}

#[test]
fn nvptx_kernels_keep_nvvm_calls_and_address_spaces() {
    let ll = r#"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@shared = internal addrspace(3) global [32 x float] undef, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

define void @k(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %t to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %in, i64 %i
  %x = load float, ptr addrspace(1) %src, align 4
  %s = getelementptr inbounds [32 x float], ptr addrspace(3) @shared, i64 0, i64 %i
  store float %x, ptr addrspace(3) %s, align 4
  call void @llvm.nvvm.barrier0()
  %old = atomicrmw fadd ptr addrspace(1) %out, float %x monotonic
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
"#;
    let Some(bc) = assemble("nvptx", ll) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("target \"nvptx64-nvidia-cuda\""), "{text}");
    assert!(
        text.contains("func @k(%out: ptr addrspace(1), %in: ptr addrspace(1)) kernel"),
        "{text}"
    );
    assert!(text.contains("call @llvm.nvvm.read.ptx.sreg.tid.x()"), "{text}");
    assert!(text.contains("call @llvm.nvvm.barrier0()"), "{text}");
    assert!(text.contains("declare @llvm.nvvm.barrier0()"), "{text}");
    assert!(text.contains("const ptr addrspace(3) @shared"), "{text}");
    assert!(text.contains("atomicrmw fadd f32"), "{text}");
}

#[test]
fn aliases_resolve_to_their_aliasee() {
    let ll = r#"
@g = global [4 x i32] [i32 1, i32 2, i32 3, i32 4]
@third = alias i32, getelementptr inbounds ([4 x i32], ptr @g, i64 0, i64 2)
@p = global ptr @third

define i32 @f() {
  %v = load i32, ptr @third
  ret i32 %v
}
@f_alias = alias i32 (), ptr @f

define i32 @main() {
  %r = call i32 @f_alias()
  ret i32 %r
}
"#;
    let Some(bc) = assemble("aliases", ll) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("global @p: ptr, align 8 = @g + 8"), "{text}");
    assert!(text.contains("const ptr @g + 8"), "{text}");
    assert!(text.contains("call @f()"), "{text}");
}

#[test]
fn atomics_and_fences_import() {
    let code = "int counter;\nint f(int x) { __atomic_fetch_add(&counter, x, __ATOMIC_SEQ_CST);\n\
                int e = 0; __atomic_compare_exchange_n(&counter, &e, 5, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);\n\
                __atomic_thread_fence(__ATOMIC_RELEASE); return __atomic_load_n(&counter, __ATOMIC_ACQUIRE); }\n";
    let Some(bc) = compile("atomics", "c", &["-O1"], code) else {
        return;
    };
    let text = import_text(&bc);
    assert!(text.contains("atomicrmw add i32"), "{text}");
    assert!(text.contains("cmpxchg i32"), "{text}");
    assert!(text.contains("fence release"), "{text}");
    // An acquire load is a load followed by an acquire fence.
    assert!(text.contains("fence acquire"), "{text}");
}

#[test]
fn import_module_without_extras_handles_zero_index_constant_geps_only() {
    let ll = "@g = global [4 x i32] zeroinitializer\n\
              define ptr @a() { ret ptr getelementptr ([4 x i32], ptr @g, i64 0, i64 0) }\n\
              define ptr @b() { ret ptr getelementptr ([4 x i32], ptr @g, i64 0, i64 1) }\n";
    let llvm = llvm_ir::Module::from_ir_str(ll).expect("valid IR");
    let e = adc_frontend_llvm::import_module(&llvm).expect_err("offset of @b's GEP is unknown");
    assert!(e.to_string().contains("byte offset of constant GEP"), "{e}");
    let llvm = llvm_ir::Module::from_ir_str(&ll.replace("i64 1)", "i64 0)")).expect("valid IR");
    let m = adc_frontend_llvm::import_module(&llvm).unwrap_or_else(|e| panic!("{e}"));
    assert!(adc_ir::text::print_module(&m).contains("const ptr @g\n"));
}

/// A variable index into a fixed array of two or more elements records the array's bytes
/// relative to the base (`dfg.index_bounds`); a variable first index (pointer arithmetic
/// over the object), a one-element trailing array (the C struct hack) or a GEP without
/// `inbounds` records nothing.
#[test]
fn array_index_bounds_are_recorded() {
    let ll = r#"
%struct.P = type { i32, [3 x double], i32, [1 x double] }

define void @f(ptr %p, i64 %i, i64 %k) {
  %in_array = getelementptr inbounds %struct.P, ptr %p, i64 0, i32 1, i64 %k
  %in_object = getelementptr inbounds %struct.P, ptr %p, i64 %i, i32 1, i64 1
  %struct_hack = getelementptr inbounds %struct.P, ptr %p, i64 0, i32 3, i64 %k
  %not_inbounds = getelementptr %struct.P, ptr %p, i64 0, i32 1, i64 %k
  store double 0.0, ptr %in_array
  store double 0.0, ptr %in_object
  store double 0.0, ptr %struct_hack
  store double 0.0, ptr %not_inbounds
  ret void
}
"#;
    let Some(bc) = assemble("index_bounds", ll) else { return };
    let module = import_bitcode_file(&bc).expect("imports");
    let f = &module.functions[module.function_by_name("f").unwrap()];
    let bounds: Vec<Option<(u64, u64)>> = f
        .layout
        .insts()
        .filter(|(_, i)| matches!(f.dfg.insts[*i], adc_ir::InstructionData::PtrAdd { .. }))
        .map(|(_, i)| f.dfg.index_bounds[i])
        .collect();
    assert_eq!(bounds, vec![Some((8, 32)), None, None, None]);
}

/// `llvm.global_ctors` / `llvm.global_dtors` become the module's startup functions with
/// their priorities (C's constructor attribute, a C++ global with a constructor).
#[test]
fn constructors_and_destructors_are_startup_functions() {
    let code = "struct Counter { int n; Counter(); };\nCounter::Counter() : n(1) {}\n\
                static Counter counter;\n\
                __attribute__((constructor(300))) static void early() {}\n\
                __attribute__((destructor)) static void late() {}\n\
                int get() { return counter.n; }\n";
    let Some(bc) = compile("startup", "c++", &["-O0"], code) else { return };
    let module = import_bitcode_file(&bc).expect("imports");
    let mut startup: Vec<String> = module
        .startup
        .iter()
        .map(|s| {
            let name = &module.functions[s.function].name;
            format!("{} {} {}", s.kind.keyword(), s.priority, name)
        })
        .collect();
    startup.sort();
    assert_eq!(
        startup,
        vec![
            "constructor 300 _ZL5earlyv".to_string(),
            "constructor 65535 _GLOBAL__sub_I_startup.cpp".to_string(),
            "destructor 65535 _ZL4latev".to_string(),
        ]
    );
    let text = import_text(&bc);
    assert!(text.contains("constructor 300 @_ZL5earlyv"), "{text}");
}

/// A handler that only cleans up and rethrows (`catch (...) { undo; throw; }`, as
/// libstdc++'s containers do) imports like a cleanup: the exception never returns to the
/// function's normal flow.
#[test]
fn catch_and_rethrow_imports_like_a_cleanup() {
    let code = "void g(); void undo();\n\
                int f(int x) { try { g(); } catch (...) { undo(); throw; } return x + 1; }\n";
    for level in ["-O0", "-O2"] {
        let Some(bc) = compile(&format!("rethrow{level}"), "c++", &[level], code) else {
            return;
        };
        let text = import_text(&bc);
        let body = text.split("func @_Z1fi(").nth(1).expect("@f");
        let body = &body[..body.find("\n}\n").expect("the end of @f")];
        assert!(body.contains("call @_Z1gv("), "{level}:\n{body}");
        assert!(!body.contains("__cxa_rethrow"), "{level}: the handler is dropped:\n{body}");
    }
}
