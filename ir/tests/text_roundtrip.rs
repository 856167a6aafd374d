//! Round trips of the text form: `print(parse(t)) == t` for canonical texts covering every
//! instruction, flag, constant form, type, linkage and attribute, and for modules built
//! with `FunctionBuilder` (`parse(print(m))` prints as `m` does).

use adc_ir::builder::FunctionBuilder;
use adc_ir::text::{parse_module, print_module};
use adc_ir::*;

fn roundtrip(text: &str) -> Module {
    let module = match parse_module(text) {
        Ok(module) => module,
        Err(diags) => panic!("parse failed:\n{}", diags.render("t.adir", text)),
    };
    let printed = print_module(&module);
    if printed != text {
        for (i, (a, b)) in text.lines().zip(printed.lines()).enumerate() {
            assert_eq!(a, b, "first difference on line {}", i + 1);
        }
        assert_eq!(printed, text);
    }
    module
}

const GLOBALS: &str = r#"target "x86_64-pc-linux-gnu"

global @g0: i32, align 4 = 42

global internal const @g1: [4 x i8], align 1 = c"a\22\5C\00"

global private @g2: {i32, f64}, align 8 = {-1, 2.5}

global weak @g3: <{i8, i64}>, align 1 = <{1, -9223372036854775808}>

global linkonce_odr @g4: [2 x {ptr, i64}], align 8 = [{@g0 + 8, 1}, {@g1 - 8, 2}]

global weak_odr @g5: <4 x f32>, align 16 = [1.0, -0.0, inf, nan]

global common @g6: [3 x f64], align 8 = zeroinit

global extern_weak @g7: i8, align 1

global @g8: ptr addrspace(1), addrspace(3), align 8 = null

global @g9: ptr, addrspace(3), align 8 = @f

global @g10: f64, align 8 = 0x7ff8000000000001

global @g11: f32, align 4 = 0x7fc00001

global @g12: i128, align 16 = -170141183460469231731687303715884105728

global @g13: [2 x i1], align 1 = [true, false]

global @g14: {}, align 1 = {}

global @g15: [2 x f64], align 8 = undef

global @"quoted name\0A": i16, align 2 = poison

global @g16: f64, align 8 = -inf

global @g17: f64, align 8 = 1e-10

global @g18: f64, align 8 = 2.5e300

global @g19: f32, align 4 = 0.1

global @g20: {[2 x <2 x i64>], <{f32, i1}>, [0 x i8]}, align 16 = {[[1, -2], [3, 4]], <{-1.5, true}>, c""}

global @g21: [2 x ptr], align 8 = [@"quoted name\0A", @g21 - 9223372036854775808]

global @g22: i64, align 8 = -1

global @g23: f32, align 4 = 3.4028235e38

global @g24: f64, align 8 = 5e-324

global @g25: <2 x i1>, align 1 = [false, true]

global @g26: i8, align 1 = -128

declare @f() -> ptr

declare @printf(ptr noalias nocapture readonly, ...) -> i32

declare internal @va(...)

declare @attrs(ptr noalias nocapture readonly writeonly nonnull zeroext signext) readnone readonly writeonly argmemonly noinline alwaysinline nounwind willreturn noreturn noalias_return kernel nofree

declare weak @"weird fn"(ptr addrspace(1), {i32, f64}) -> ptr addrspace(1)
"#;

#[test]
fn globals_declarations_and_constants() {
    let module = roundtrip(GLOBALS);
    assert_eq!(module.target.as_deref(), Some("x86_64-pc-linux-gnu"));
    let g = |name: &str| &module.globals[module.global_by_name(name).unwrap()];
    assert_eq!(g("g1").init, Some(Constant::Bytes(b"a\"\\\0".to_vec())));
    assert!(g("g1").constant);
    assert_eq!(g("g1").linkage, Linkage::Internal);
    assert_eq!(g("g8").ty, Type::Ptr(1));
    assert_eq!(g("g8").addr_space, 3);
    assert_eq!(g("g7").init, None);
    assert_eq!(g("g10").init, Some(Constant::Float(0x7ff8000000000001)));
    assert_eq!(g("g11").init, Some(Constant::Float(0x7fc00001)));
    let g4 = module.global_by_name("g0").unwrap();
    let g1 = module.global_by_name("g1").unwrap();
    assert_eq!(
        g("g4").init,
        Some(Constant::Elements(vec![
            Constant::Elements(vec![
                Constant::Address { symbol: Symbol::Global(g4), offset: 8 },
                Constant::Int(1)
            ]),
            Constant::Elements(vec![
                Constant::Address { symbol: Symbol::Global(g1), offset: -8 },
                Constant::Int(2)
            ]),
        ]))
    );
    let f = module.function_by_name("f").unwrap();
    assert_eq!(g("g9").init, Some(Constant::Address { symbol: Symbol::Func(f), offset: 0 }));
    assert_eq!(g("quoted name\n").init, Some(Constant::Poison));
    let printf = &module.functions[module.function_by_name("printf").unwrap()];
    assert!(printf.signature.varargs);
    assert_eq!(
        printf.param_attrs[0],
        ParamAttrs::NOALIAS | ParamAttrs::NOCAPTURE | ParamAttrs::READONLY
    );
    // Ids follow text order.
    assert_eq!(module.globals.keys().next().map(|g| module.globals[g].name.as_str()), Some("g0"));
    assert_eq!(f.as_u32(), 0);
}

const INSTS: &str = r#"global @g0: i32, align 4 = 0

declare @sin(f64) -> f64 readnone nounwind

declare @printf(ptr, ...) -> i32

declare @v()

func internal @insts(%a: i32, %b: i32, %x: f64 noalias, %y: f64, %p: ptr noalias nocapture, %v: <4 x f64>, %s: {i32, f64}, %c: i1, %f: f32, %n: i64, %w: <4 x i32>, %byte: i8, ...) -> f64 nounwind {
^entry:
  %k0 = const i32 -7
  %k1 = const i1 true
  %k2 = const ptr null
  %k3 = const ptr @g0 + 8
  %k4 = const f64 -0.0
  %k5 = const f32 0.1
  %k6 = const <4 x f64> [1.0, 2.0, undef, poison]
  %k7 = const {i32, f64} zeroinit
  %k8 = const [3 x i8] c"a\22\5C"
  %k9 = const i128 170141183460469231731687303715884105727
  %k10 = const i64 -9223372036854775808
  %k11 = const f64 0x7ff0000000000001
  %k12 = const f64 inf
  %k13 = const f64 nan
  %k14 = const ptr @insts
  %k15 = const ptr @g0 - 4
  %k16 = const i16 -32768
  %k17 = const i8 127
  %k18 = const f32 -inf
  %k19 = const f32 1e-45
  %k20 = const <{i8, [2 x f32]}> <{-1, [0.5, 0x7fa00000]}>
  %u0 = fneg f64 %x
  %u1 = fabs fast f64 %x
  %u2 = sqrt nnan f64 %x
  %u3 = floor ninf f64 %x
  %u4 = ceil nsz f64 %x
  %u5 = ftrunc arcp f64 %x
  %u6 = round contract f64 %x
  %u7 = roundeven afn f64 %x
  %u8 = ctpop i32 %a
  %u9 = ctlz i32 %a
  %u10 = cttz i32 %a
  %u11 = bswap i32 %a
  %u12 = bitreverse i32 %a
  %u13 = iabs i32 %a
  %u14 = freeze f64 %x
  %u15 = fneg nnan reassoc f64 %x
  %u16 = sqrt <4 x f64> %v
  %i0 = add nuw nsw i32 %a, %b
  %i1 = sub nuw i32 %a, %b
  %i2 = mul nsw i32 %a, %b
  %i3 = udiv exact i32 %a, %b
  %i4 = sdiv i32 %a, %b
  %i5 = urem i32 %a, %b
  %i6 = srem i32 %a, %b
  %i7 = shl nuw nsw i32 %a, %b
  %i8 = lshr exact i32 %a, %b
  %i9 = ashr i32 %a, %b
  %i10 = and i32 %a, %b
  %i11 = or disjoint i32 %a, %b
  %i12 = xor i32 %a, %b
  %i13 = smin i32 %a, %b
  %i14 = smax i32 %a, %b
  %i15 = umin i32 %a, %b
  %i16 = umax i32 %a, %b
  %i17 = add <4 x i32> %w, %w
  %f0 = fadd fast f64 %x, %y
  %f1 = fsub nnan ninf f64 %x, %y
  %f2 = fmul nsz arcp f64 %x, %y
  %f3 = fdiv contract afn f64 %x, %y
  %f4 = frem reassoc f64 %x, %y
  %f5 = fminnum f64 %x, %y
  %f6 = fmaxnum f64 %x, %y
  %f7 = copysign nnan f64 %x, %y
  %f8 = fma fast f64 %x, %y, %x
  %f9 = fma f64 %x, %y, %x
  %f10 = fadd nnan ninf nsz arcp contract reassoc f32 %f, %f
  %f11 = fadd nnan ninf nsz arcp contract afn f64 %x, %x
  %c0 = icmp eq i32 %a, %b
  %c1 = icmp ne i32 %a, %b
  %c2 = icmp ugt i32 %a, %b
  %c3 = icmp uge i32 %a, %b
  %c4 = icmp ult i32 %a, %b
  %c5 = icmp ule i32 %a, %b
  %c6 = icmp sgt i32 %a, %b
  %c7 = icmp sge i32 %a, %b
  %c8 = icmp slt i32 %a, %b
  %c9 = icmp sle i32 %a, %b
  %c10 = icmp eq ptr %p, %k2
  %c11 = icmp slt <4 x i32> %w, %w
  %d0 = fcmp false f64 %x, %y
  %d1 = fcmp oeq f64 %x, %y
  %d2 = fcmp ogt f64 %x, %y
  %d3 = fcmp oge f64 %x, %y
  %d4 = fcmp olt f64 %x, %y
  %d5 = fcmp ole f64 %x, %y
  %d6 = fcmp one f64 %x, %y
  %d7 = fcmp ord f64 %x, %y
  %d8 = fcmp ueq f64 %x, %y
  %d9 = fcmp ugt f64 %x, %y
  %d10 = fcmp uge f64 %x, %y
  %d11 = fcmp ult f64 %x, %y
  %d12 = fcmp ule f64 %x, %y
  %d13 = fcmp une f64 %x, %y
  %d14 = fcmp uno f64 %x, %y
  %d15 = fcmp true f64 %x, %y
  %d16 = fcmp fast olt f64 %x, %y
  %d17 = fcmp nnan olt <4 x f64> %v, %v
  %s0 = select f64 %c, %x, %y
  %s1 = select nnan nsz f64 %c0, %x, %y
  %s2 = select <4 x f64> %d17, %v, %v
  %t0 = zext %a to i64
  %t1 = sext %a to i64
  %t2 = trunc %n to i32
  %t3 = fptoui %x to i32
  %t4 = fptosi %x to i64
  %t5 = uitofp %a to f64
  %t6 = sitofp %a to f32
  %t7 = fpext %f to f64
  %t8 = fptrunc %x to f32
  %t9 = bitcast %n to f64
  %t10 = ptrtoint %p to i64
  %t11 = inttoptr %n to ptr
  %t12 = addrspacecast %p to ptr addrspace(1)
  %t13 = zext %w to <4 x i64>
  %m0 = alloca f64, align 8
  %m1 = alloca [4 x i32], %n, align 16
  %m2 = load f64, %p, align 8
  %m3 = load volatile i32, %p, align 4
  store %x, %p, align 8
  store volatile %a, %p, align 4
  %m4 = ptradd ptr %p, %n
  %m5 = ptradd inbounds ptr %p, %n
  %m6 = ptradd ptr addrspace(1) %t12, %n
  memcpy %p, %m0, %n
  memcpy volatile %p, %m0, %n
  memmove %p, %m0, %n
  memmove volatile %p, %m0, %n
  memset %p, %byte, %n
  memset volatile %p, %byte, %n
  %call0 = call @sin(%x) readnone
  %call1 = call @printf(%p, %a, %x)
  call @v() nounwind willreturn
  %call2 = call_indirect fn(f64) -> f64 %p(%x) nounwind
  call_indirect fn(ptr, ...) %p(%p, %a)
  call_indirect fn() %p()
  %l0 = extractlane <4 x f64> %v, %a
  %l1 = insertlane <4 x f64> %v, %x, %a
  %l2 = shuffle <4 x f64> %v, %v, [0, 5, undef, 7]
  %l3 = shuffle <4 x f64> %v, %v, [1, 2]
  %r0 = reduce.add <4 x i32> %w
  %r1 = reduce.mul <4 x i32> %w
  %r2 = reduce.and <4 x i32> %w
  %r3 = reduce.or <4 x i32> %w
  %r4 = reduce.xor <4 x i32> %w
  %r5 = reduce.smin <4 x i32> %w
  %r6 = reduce.smax <4 x i32> %w
  %r7 = reduce.umin <4 x i32> %w
  %r8 = reduce.umax <4 x i32> %w
  %r9 = reduce.fadd reassoc <4 x f64> %v, %x
  %r10 = reduce.fmul <4 x f64> %v, %y
  %r11 = reduce.fmin nnan <4 x f64> %v
  %r12 = reduce.fmax <4 x f64> %v
  %e0 = extractvalue {i32, f64} %s, 1
  %e1 = insertvalue {i32, f64} %s, %x, 1
  %e2 = const {[2 x i32], f64} zeroinit
  %e3 = extractvalue {[2 x i32], f64} %e2, 0, 1
  %e4 = insertvalue {[2 x i32], f64} %e2, %a, 0, 0
  %a0 = atomicrmw xchg i32 %p, %a seq_cst
  %a1 = atomicrmw add i32 %p, %a monotonic
  %a2 = atomicrmw sub i32 %p, %a acquire
  %a3 = atomicrmw and i32 %p, %a release
  %a4 = atomicrmw nand i32 %p, %a acq_rel
  %a5 = atomicrmw or i32 %p, %a unordered
  %a6 = atomicrmw xor i32 %p, %a seq_cst
  %a7 = atomicrmw max i32 %p, %a seq_cst
  %a8 = atomicrmw min i32 %p, %a seq_cst
  %a9 = atomicrmw umax i32 %p, %a seq_cst
  %a10 = atomicrmw umin i32 %p, %a seq_cst
  %a11 = atomicrmw fadd f64 %p, %x seq_cst
  %a12 = atomicrmw fsub f64 %p, %x seq_cst
  %a13 = atomicrmw fmax f64 %p, %x seq_cst
  %a14 = atomicrmw volatile fmin f64 %p, %x seq_cst
  %x0 = cmpxchg i32 %p, %a, %b seq_cst monotonic
  %x1 = cmpxchg weak volatile i64 %p, %n, %n acq_rel acquire
  %x2 = cmpxchg weak i32 %p, %a, %b release monotonic
  %x3 = cmpxchg volatile i32 %p, %a, %b seq_cst seq_cst
  fence seq_cst
  fence acquire
  fence release
  fence acq_rel
  brif %c, ^b1(%a), ^b2 !"file.c":10:3
^b1(%q: i32):
  switch %q, ^b2 [0: ^b3, -1: ^b3, 2147483647: ^b4(%x), -2147483648: ^"block 5"]
^b2:
  switch %c, ^b3 [true: ^b3, false: ^b4(%y)]
^b3:
  switch %n, ^b3 []
^b4(%z: f64, %"a b": i8):
  %"x y" = fadd f64 %z, %z !"dir/my \22file\22.c":4294967295:0
  jump ^b4(%"x y", %"a b") !"f.c":1:1
^"block 5":
  ret %z
^b6:
  unreachable
}

func @void_ret() {
^bb0:
  ret
}

func @loop_before_def(%n: i64) -> i64 {
^entry:
  %zero = const i64 0
  jump ^header(%zero)
^exit:
  ret %next
^header(%i: i64):
  %next = add i64 %i, %one
  %one = const i64 1
  %done = icmp eq i64 %next, %n
  brif %done, ^exit, ^header(%next)
}

func @"quoted\09fn"(%"": i32) -> i32 {
^"":
  ret %""
}
"#;

#[test]
fn every_instruction_flag_and_constant() {
    let module = roundtrip(INSTS);
    let f = &module.functions[module.function_by_name("insts").unwrap()];
    assert_eq!(f.linkage, Linkage::Internal);
    assert!(f.signature.varargs);
    assert_eq!(f.attrs, FuncAttrs::NOUNWIND);
    // Spans and debug locations.
    let first = f.layout.first_inst(f.entry_block().unwrap()).unwrap();
    let span = f.dfg.inst_spans[first];
    assert_eq!(&INSTS[span.range()], "%k0 = const i32 -7");
    let entry_span = f.dfg.block_spans[f.entry_block().unwrap()];
    assert_eq!(&INSTS[entry_span.range()], "^entry:");
    let brif = f.terminator(f.entry_block().unwrap()).unwrap();
    let loc = f.dfg.debug_locs[brif].clone().unwrap();
    assert_eq!((&*loc.file, loc.line, loc.column), ("file.c", 10, 3));
    assert_eq!(&INSTS[f.dfg.inst_spans[brif].range()], "brif %c, ^b1(%a), ^b2 !\"file.c\":10:3");
    // Names come from the text.
    assert_eq!(f.dfg.value_name(f.params()[0]), Some("a"));
    assert_eq!(f.dfg.block_name(f.layout.blocks()[1]), Some("b1"));
}

#[test]
fn switch_cases_are_masked_to_the_value_width() {
    let module = roundtrip(INSTS);
    let f = &module.functions[module.function_by_name("insts").unwrap()];
    let b1 = f.layout.blocks()[1];
    let InstructionData::Switch { cases, .. } = f.inst(f.terminator(b1).unwrap()) else {
        panic!("not a switch")
    };
    let values: Vec<u128> = cases.iter().map(|(v, _)| *v).collect();
    assert_eq!(values, vec![0, 0xffff_ffff, 0x7fff_ffff, 0x8000_0000]);
}

/// Free spacing, comments and blank lines are accepted; printing normalizes them.
#[test]
fn comments_and_spacing() {
    let text = "; leading comment\n\n\ndeclare   @sin( f64 )->f64   readnone ; trailing\n\
                func @f(%x:f64)->f64{ ; body\n^e :\n\t%y=call @sin(%x)\n\n  ret %y;done\n}";
    let module = parse_module(text).unwrap_or_else(|d| panic!("{}", d.render("t", text)));
    let printed = print_module(&module);
    assert_eq!(
        printed,
        "declare @sin(f64) -> f64 readnone\n\nfunc @f(%x: f64) -> f64 {\n^e:\n  %y = call @sin(%x)\n  ret %y\n}\n"
    );
    roundtrip(&printed);
}

/// `sum(x, n) = Σ sin(x[i])`, built as in the builder's own tests, with unnamed values.
fn assert_fixed_point(module: &Module) {
    let text = print_module(module);
    roundtrip(&text);
}

#[test]
fn built_sum_of_sines() {
    let module = adc_ir::examples::sum_of_sines();
    assert_fixed_point(&module);
    let parsed = parse_module(&print_module(&module)).unwrap();
    let f = &parsed.functions[parsed.function_by_name("sum").unwrap()];
    assert_eq!(f.layout.blocks().len(), 4);
    assert_eq!(f.dfg.insts.len(), module.functions[FuncId::from_u32(1)].dfg.insts.len());
}

/// Names that collide, need quoting, or are missing get the printer's fallbacks, which the
/// parser then keeps as real names.
#[test]
fn built_names_and_constants() {
    let mut module = Module::new();
    let g = module.add_global(Global {
        name: "table".into(),
        ty: Type::array(Type::PTR, 2),
        linkage: Linkage::Private,
        constant: true,
        align: 8,
        addr_space: 4,
        init: None,
    });
    module.globals[g].init = Some(Constant::Elements(vec![
        Constant::Address { symbol: Symbol::Global(g), offset: -16 },
        Constant::Address { symbol: Symbol::Global(g), offset: i64::MIN },
    ]));
    let mut func = Function::new("k", Signature::new(vec![Type::F32, Type::F64], Some(Type::F64)));
    func.attrs = FuncAttrs::KERNEL;
    let callees = |_: FuncId| None;
    let mut b = FunctionBuilder::new(&mut func, &callees);
    let entry = b.create_entry_block();
    let (f, d) = (b.func.params()[0], b.func.params()[1]);
    b.func.dfg.set_value_name(f, "x");
    b.func.dfg.set_value_name(d, "x");
    b.func.dfg.set_block_name(entry, "entry block");
    b.switch_to_block(entry);
    let nan = b.constant(Type::F64, Constant::Float(0xfff8_0000_0000_0000));
    b.func.dfg.set_value_name(nan, "v0");
    let snan = b.constant(Type::F32, Constant::Float(0x7f80_0001));
    let neg = b.constant(Type::F64, Constant::f64(-0.0));
    let packed = b.constant(
        Type::structure(vec![Type::I8, Type::vector(Type::F32, 2)], true),
        Constant::Elements(vec![
            Constant::Int(0xff),
            Constant::Elements(vec![Constant::f32(1.5), Constant::f32(f32::MIN_POSITIVE)]),
        ]),
    );
    let bytes = b.constant(Type::array(Type::I8, 3), Constant::Bytes(vec![0, 0x80, b'"']));
    b.func.dfg.set_value_name(bytes, "é");
    let _ = (snan, packed);
    let sum = b.binary(BinaryOp::Fadd, nan, neg);
    b.func.dfg.debug_locs[b.func.layout.last_inst(entry).unwrap()] =
        Some(DebugLoc { file: "a b.c".into(), line: 3, column: 7 });
    b.ret(Some(sum));
    module.add_function(func);
    let text = print_module(&module);
    assert!(text.contains("@table - 16"), "{text}");
    assert!(text.contains("^\"entry block\":"), "{text}");
    assert!(text.contains("%\"\\C3\\A9\""), "{text}");
    assert_fixed_point(&module);
}

#[test]
fn empty_module() {
    let module = roundtrip("");
    assert!(module.functions.is_empty());
    assert!(parse_module("\n; nothing\n\n").unwrap().globals.is_empty());
}

/// Non-canonical spellings the parser accepts: unsigned integers, integers and `0` for
/// floats and pointers, `-1` for `i1`.
#[test]
fn lenient_literals() {
    let text = "global @a: i64, align 8 = 18446744073709551615\n\
                global @b: f64, align 8 = 3\n\
                global @c: ptr, align 8 = 0\n\
                global @d: i1, align 1 = -1\n\
                global @e: f32, align 4 = 2.5E+3\n\
                global @f: i8, align 1 = 255\n";
    let module = parse_module(text).unwrap_or_else(|d| panic!("{}", d.render("t", text)));
    assert_eq!(
        print_module(&module),
        "global @a: i64, align 8 = -1\n\nglobal @b: f64, align 8 = 3.0\n\n\
         global @c: ptr, align 8 = null\n\nglobal @d: i1, align 1 = true\n\n\
         global @e: f32, align 4 = 2500.0\n\nglobal @f: i8, align 1 = -1\n"
    );
}
