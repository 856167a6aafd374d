//! Emitter unit tests on textual IR: each case parses an `.adir` module, emits PTX and
//! checks the instructions that matter (rounding modifiers, state spaces, edge moves,
//! switch lowering), and that ptxas accepts the text when it is installed. Errors name
//! the instruction that cannot be emitted.

use adc_ptx::{emit_module, Arch, PtxError, PtxOptions};

mod common;

fn emit(source: &str) -> Result<String, PtxError> {
    let module = adc_ir::text::parse_module(source).expect("test IR parses");
    adc_ir::verify::verify_module(&module).expect("test IR verifies");
    emit_module(&module, &PtxOptions::default())
}

/// Emits `source`, checks that each of `expected` occurs in order, and assembles the PTX
/// for both targets when ptxas is available.
fn check(name: &str, source: &str, expected: &[&str]) -> String {
    let text = emit(source).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rest = text.as_str();
    for needle in expected {
        match rest.find(needle) {
            Some(at) => rest = &rest[at + needle.len()..],
            None => panic!("{name}: `{needle}` not found (in order) in:\n{text}"),
        }
    }
    match common::find_ptxas() {
        Some(ptxas) => {
            let dir = std::env::temp_dir().join(format!("adc-ptx-emit-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("scratch dir");
            for arch in [Arch::Sm80, Arch::Sm90] {
                let options = PtxOptions { arch, ..PtxOptions::default() };
                let module = adc_ir::text::parse_module(source).expect("parses");
                let text = emit_module(&module, &options).expect("emits");
                let file = dir.join(format!("{name}.{}.ptx", arch.name()));
                std::fs::write(&file, text).expect("write");
                if let Err(e) = common::ptxas(&ptxas, &file, arch) {
                    panic!("{name}: ptxas ({}) rejected {}:\n{e}", arch.name(), file.display());
                }
            }
        }
        None => println!("{name}: ptxas not found, only the text was checked"),
    }
    text
}

#[test]
fn kernel_header_params_and_sregs() {
    let text = check(
        "kernel",
        r#"
declare @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
declare @llvm.nvvm.barrier0()

func @scale(%x: ptr addrspace(1), %a: f64) kernel {
^entry:
  %t = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %w = zext %t to i64
  %eight = const i64 8
  %off = mul i64 %w, %eight
  %p = ptradd ptr addrspace(1) %x, %off
  %v = load f64, %p, align 8
  %y = fmul f64 %v, %a
  call @llvm.nvvm.barrier0()
  store %y, %p, align 8
  ret
}
"#,
        &[
            ".version 7.0",
            ".target sm_80",
            ".address_size 64",
            ".visible .entry scale(.param .b64 scale_param_0, .param .b64 scale_param_1)",
            "ld.param.b64 %rd1, [scale_param_0];",
            "mov.u32 %r1, %tid.x;",
            "cvt.u64.u32",
            "ld.global.f64",
            "mul.rn.f64",
            "bar.sync 0;",
            "st.global.f64",
            "ret;",
        ],
    );
    assert!(!text.contains("llvm.nvvm"), "intrinsics must not be declared:\n{text}");
}

#[test]
fn exact_rounding_modifiers() {
    check(
        "rounding",
        r#"
func @f(%a: f64, %b: f64, %c: f64, %i: i32) -> i32 {
^entry:
  %q = fdiv f64 %a, %b
  %s = sqrt f64 %q
  %m = fma f64 %s, %b, %c
  %fi = sitofp %i to f64
  %sum = fadd contract f64 %m, %fi
  %r = fptosi %sum to i32
  ret %r
}
"#,
        &[
            ".func (.param .b32 func_retval0) f(",
            "div.rn.f64",
            "sqrt.rn.f64",
            "fma.rn.f64",
            "cvt.rn.f64.s32",
            "add.f64",
            "cvt.rzi.s32.f64",
            "st.param.b32 [func_retval0]",
        ],
    );
}

#[test]
fn block_parameters_swap_through_temporaries() {
    // `^loop(%b, %a)` swaps: both arguments must be read before either is written.
    let text = check(
        "swap",
        r#"
func @fib(%n: i32) -> i32 {
^entry:
  %zero = const i32 0
  %one = const i32 1
  jump ^loop(%zero, %one, %zero)
^loop(%a: i32, %b: i32, %i: i32):
  %more = icmp slt i32 %i, %n
  brif %more, ^body, ^done
^body:
  %c = add i32 %a, %b
  %i1 = add i32 %i, %one
  jump ^loop(%b, %c, %i1)
^done:
  ret %a
}
"#,
        &["setp.lt.s32", "@%p1 bra", "add.s32", "mov.b32", "mov.b32", "bra.uni"],
    );
    // Three parameters: three temporaries then three moves on the back edge.
    assert!(text.matches("mov.b32").count() >= 12, "{text}");
}

#[test]
fn switch_becomes_compares_and_edge_stubs() {
    check(
        "switch",
        r#"
func @pick(%x: i64) -> f32 {
^entry:
  %one = const f32 1.0
  %two = const f32 2.0
  switch %x, ^other [0: ^zero, -1: ^done(%two)]
^zero:
  jump ^done(%one)
^other:
  %three = const f32 3.0
  jump ^done(%three)
^done(%r: f32):
  ret %r
}
"#,
        &[
            "setp.eq.u64 %p1, %rd1, 0;",
            "@%p1 bra $L__bb1;",
            "setp.eq.u64 %p2, %rd1, 18446744073709551615;",
            "@%p2 bra $L__edge1;",
            "bra.uni $L__bb2;",
            "$L__edge1:",
            "mov.f32",
            "bra.uni $L__bb3;",
        ],
    );
}

#[test]
fn shared_globals_atomics_and_casts() {
    check(
        "shared",
        r#"
global internal @tile: [64 x f32], addrspace(3), align 4 = undef
global @table: [2 x f64], align 8 = [1.5, 2.5]

func @acc(%out: ptr, %k: i8, %v: f32) kernel {
^entry:
  %s = const ptr addrspace(3) @tile
  %g = addrspacecast %s to ptr
  store %v, %g, align 4
  %back = addrspacecast %g to ptr addrspace(3)
  %x = load f32, %back, align 4
  %old = atomicrmw fadd f32 %out, %x seq_cst
  %t = const ptr @table
  %d = load f64, %t, align 8
  %f = fptrunc %d to f32
  %k32 = sext %k to i32
  %x2 = fptosi %f to i32
  %gone = atomicrmw add i32 %out, %x2 monotonic
  %u = udiv i8 %k, %k
  %z = zext %u to i64
  ret
}
"#,
        &[
            ".shared .align 4 .b8 tile[256];",
            ".visible .global .align 8 .b8 table[16] = {0, 0, 0, 0, 0, 0, 248, 63,",
            "mov.u64 %rd2, tile;",
            "cvta.shared.u64",
            "st.f32",
            "cvta.to.shared.u64",
            "ld.shared.f32",
            "atom.acq_rel.gpu.global.add.f32",
            "cvta.global.u64",
            "cvt.rn.f32.f64",
            "cvt.s32.s8",
            "cvt.rzi.s32.f32",
            "red.relaxed.gpu.global.add.u32",
            "cvt.u16.u8",
            "div.u16",
            "cvt.u64.u8",
        ],
    );
}

#[test]
fn device_function_calls_pass_params() {
    check(
        "call",
        r#"
func internal @sq(%x: f64, %flag: i1) -> f64 noinline {
^entry:
  %y = fmul f64 %x, %x
  %r = select f64 %flag, %y, %x
  ret %r
}

func @k(%p: ptr) kernel {
^entry:
  %x = load f64, %p, align 8
  %t = const i1 true
  %y = call @sq(%x, %t)
  store %y, %p, align 8
  ret
}
"#,
        &[
            ".func (.param .b64 func_retval0) sq(.param .b64 sq_param_0, .param .b8 sq_param_1);",
            "selp.b64",
            ".visible .entry k(",
            ".param .b64 param0;",
            "st.param.b64 [param0], %fd1;",
            ".param .b8 param1;",
            "selp.u16",
            "st.param.b8 [param1]",
            "call.uni (retval0), sq, (param0, param1);",
            "ld.param.b64 %fd2, [retval0];",
        ],
    );
}

#[test]
fn unsupported_instructions_are_errors_naming_them() {
    let err = emit(
        r#"
func @r(%a: f64, %b: f64) -> f64 {
^entry:
  %m = frem f64 %a, %b
  ret %m
}
"#,
    )
    .expect_err("frem has no PTX instruction");
    let text = err.to_string();
    assert!(text.contains("@r") && text.contains("%m = frem"), "{text}");

    let err = emit(
        r#"
func @v(%a: <2 x f64>) -> f64 {
^entry:
  %z = const f64 0.0
  %s = reduce.fadd <2 x f64> %a, %z
  ret %s
}
"#,
    );
    assert!(err.is_err(), "vectors are rejected: {err:?}");

    let err = emit(
        r#"
func @bad(%x: f64) -> f64 kernel {
^entry:
  ret %x
}
"#,
    )
    .expect_err("kernels return void");
    assert!(err.to_string().contains("void"), "{err}");

    let err = emit(
        r#"
func @wide() {
^entry:
  %u = const i128 0
  ret
}
"#,
    )
    .expect_err("i128 has no register");
    assert!(err.to_string().contains("%u = const") && err.to_string().contains("i128"), "{err}");
}

#[test]
fn every_scalar_operation_assembles() {
    // One function per family, written so that each instruction form the emitter selects
    // is produced once; ptxas (when installed) checks every line.
    let mut source = String::from(
        "declare @llvm.nvvm.read.ptx.sreg.laneid() -> i32\n\
         declare @llvm.nvvm.read.ptx.sreg.nctaid.z() -> i32\n",
    );
    for (ty, int) in
        [("i8", true), ("i16", true), ("i32", true), ("i64", true), ("f32", false), ("f64", false)]
    {
        let ops: &[&str] = if int {
            &[
                "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and",
                "or", "xor", "smin", "smax", "umin", "umax",
            ]
        } else {
            &["fadd", "fsub", "fmul", "fdiv", "fminnum", "fmaxnum", "copysign"]
        };
        let unary: &[&str] = match (ty, int) {
            ("i32" | "i64", _) => {
                &["ctpop", "ctlz", "cttz", "bswap", "bitreverse", "iabs", "freeze"]
            }
            (_, true) => &["freeze"],
            _ => &["fneg", "fabs", "sqrt", "floor", "ceil", "ftrunc", "round", "roundeven"],
        };
        let conds: &[&str] = if int {
            &["eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"]
        } else {
            &[
                "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                "ult", "ule", "une", "uno", "true",
            ]
        };
        source.push_str(&format!("func @ops_{ty}(%a: {ty}, %b: {ty}, %p: ptr) {{\n^entry:\n"));
        for (i, op) in ops.iter().enumerate() {
            source.push_str(&format!("  %b{i} = {op} {ty} %a, %b\n  store %b{i}, %p, align 1\n"));
        }
        for (i, op) in unary.iter().enumerate() {
            source.push_str(&format!("  %u{i} = {op} {ty} %a\n  store %u{i}, %p, align 1\n"));
        }
        let cmp = if int { "icmp" } else { "fcmp" };
        for (i, cond) in conds.iter().enumerate() {
            source.push_str(&format!(
                "  %c{i} = {cmp} {cond} {ty} %a, %b\n  %s{i} = select {ty} %c{i}, %a, %b\n  store %s{i}, %p, align 1\n  store %c{i}, %p, align 1\n"
            ));
        }
        if !int {
            source.push_str(&format!("  %f = fma {ty} %a, %b, %a\n  store %f, %p, align 1\n"));
            source.push_str(&format!(
                "  %rmw = atomicrmw fsub {ty} %p, %a monotonic\n  store %rmw, %p, align 1\n"
            ));
        }
        source.push_str("  ret\n}\n\n");
    }
    source.push_str(
        r#"
func @casts(%i8: i8, %i16: i16, %i32: i32, %i64: i64, %f: f32, %d: f64, %p: ptr, %q: ptr addrspace(1)) -> i1 {
^entry:
  %a = zext %i8 to i32
  %b = sext %i16 to i64
  %c = trunc %i64 to i8
  %c2 = trunc %i16 to i8
  %c3 = zext %i8 to i16
  %t = trunc %i32 to i1
  %e = zext %t to i64
  %e2 = sext %t to i8
  %g = fptoui %d to i64
  %h = fptosi %f to i8
  %h2 = fptoui %f to i16
  %k = uitofp %i64 to f32
  %k2 = sitofp %i8 to f64
  %k3 = uitofp %t to f64
  %m = fpext %f to f64
  %n = bitcast %d to i64
  %n2 = bitcast %i32 to f32
  %o = ptrtoint %p to i64
  %o2 = ptrtoint %p to i32
  %r = inttoptr %i64 to ptr
  %r2 = inttoptr %i32 to ptr
  %s = addrspacecast %q to ptr
  %s2 = addrspacecast %p to ptr addrspace(1)
  %l = load volatile i1, %q, align 1
  store volatile %l, %s2, align 1
  %slot = alloca f64, align 8
  %four = const i64 4
  %arr = alloca i32, %four, align 4
  store %d, %slot, align 8
  %old = cmpxchg i64 %q, %i64, %o seq_cst monotonic
  %old0 = extractvalue {i64, i1} %old, 0
  %ok = extractvalue {i64, i1} %old, 1
  %x = atomicrmw xchg i32 %arr, %i32 acq_rel
  %y = atomicrmw umax i64 %q, %old0 monotonic
  %z = atomicrmw sub i32 %p, %x release
  fence seq_cst
  fence acquire
  %lane = call @llvm.nvvm.read.ptx.sreg.laneid()
  %nz = call @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %f1 = const f32 -0.5
  %d1 = const f64 1e300
  %bits = and i1 %ok, %t
  %same = icmp eq i1 %bits, %l
  %sel = select i1 %same, %ok, %t
  switch %i8, ^a [3: ^b, -1: ^b]
^a:
  ret %sel
^b:
  unreachable
}
"#,
    );
    check(
        "every_op",
        &source,
        &[
            "cvta.global.u64",
            "cvta.to.global.u64",
            "atom.acq_rel.gpu.global.cas.b64",
            "fence.sc.sys;",
        ],
    );
}
