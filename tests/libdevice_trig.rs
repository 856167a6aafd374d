//! libdevice's trigonometric functions end to end. Their bodies reach a slow path (the
//! Payne-Hanek argument reduction for |x| >= 2^31 or so) written in inline PTX assembly,
//! which the importer translates (frontend-llvm/src/inline_asm.rs). Checked here:
//! 1. `sin`, `cos`, `tan`, `sincos`, `sinpi`, `cospi` (double) and `sinf`, `cosf`, `tanf`
//!    (float), linked from `libdevice.10.bc` and run by the interpreter, agree with the
//!    host's libm within libdevice's documented bounds (2 ulp for sin/cos/tan/sinf/cosf/
//!    tanf; the host may itself be up to 1 ulp off, so 3 is allowed) at small, medium and
//!    huge arguments; sinpi/cospi against the host's sin(pi * r) within 2e-15 and exactly
//!    at integers and halves;
//! 2. a kernel calling them (tests/cuda/trig.cu) links into PTX without any external
//!    function, which ptxas assembles as a complete program for sm_80 and sm_90, and its
//!    simulated run matches the host.
//!
//! Skipped, with a message, when ptxas (and libdevice beside it) are not installed.

#[path = "common/cuda.rs"]
mod cuda;

use std::path::PathBuf;

use adc_ir::interp::{Dim3, Interpreter, Val};
use adc_ir::Module;
use cuda::{assemble, find_ptxas, import_cuda, import_libdevice, ulps64};

/// ptxas and libdevice as adc imports it; every inline-assembly template in libdevice
/// must be one the importer translates.
fn libdevice() -> Option<(PathBuf, Module)> {
    let ptxas = find_ptxas()?;
    let (module, skipped) = import_libdevice()?;
    let asm: Vec<&String> = skipped.iter().filter(|e| e.contains("inline assembly")).collect();
    assert!(asm.is_empty(), "libdevice functions with untranslated inline assembly: {asm:#?}");
    Some((ptxas, module))
}

fn ulps32(a: f32, b: f32) -> u64 {
    u64::from((a.to_bits() as i32).abs_diff(b.to_bits() as i32))
}

/// Arguments from tiny to huge: the fast reduction, its edges, and the Payne-Hanek path.
const POINTS: &[f64] = &[
    1e-9, -0.3, 0.5, 1.0, -2.75, 3.1, 10.0, -100.5, 12345.678, 1.0e6, -2.0e9, 3.0e9, 1.0e15,
    -1.0e22, 6.0e52, 1.0e100, -3.0e200, 1.7e308,
];

#[test]
fn sin_cos_tan_bodies_match_host_libm() {
    let Some((_, libdevice)) = libdevice() else {
        println!("SKIPPED: ptxas (and libdevice next to it) not found");
        return;
    };
    let names64 = ["__nv_sin", "__nv_cos", "__nv_tan", "__nv_sinpi", "__nv_cospi"];
    let names32 = ["__nv_sinf", "__nv_cosf", "__nv_tanf"];
    let mut text = String::new();
    for name in names64 {
        text += &format!("declare @{name}(f64) -> f64\n");
    }
    for name in names32 {
        text += &format!("declare @{name}(f32) -> f32\n");
    }
    text += "declare @__nv_sincos(f64, ptr, ptr)\n";
    let mut module = adc_ir::text::parse_module(&text).expect("parses");
    let linked = adc_ptx::libdevice::link_libdevice(&mut module, &libdevice);
    for name in names64.iter().chain(&names32).chain(&["__nv_sincos"]) {
        assert!(linked.iter().any(|l| l == name), "{name} was not linked: {linked:?}");
    }
    adc_ir::verify::verify_module(&module).expect("linked module verifies");
    let mut interp = Interpreter::new(&module).expect("interpreter");
    let mut call = |name: &str, arg: Val| -> Val {
        let f = module.function_by_name(name).expect("linked");
        match interp.call(f, std::slice::from_ref(&arg)) {
            Ok(Some(v)) => v,
            other => panic!("{name}({arg:?}): {other:?}"),
        }
    };
    let mut worst = std::collections::BTreeMap::<&str, u64>::new();
    for &x in POINTS {
        let pi = std::f64::consts::PI;
        // sinpi/cospi: the host has none; sin(pi * r) for the reduced r = x mod 2 is
        // within an ulp of it when |x| is small, so only moderate arguments are compared.
        let mut cases = vec![("__nv_sin", x.sin()), ("__nv_cos", x.cos()), ("__nv_tan", x.tan())];
        if x.abs() < 20.0 && x.fract() != 0.0 {
            let r = x % 2.0;
            cases.push(("__nv_sinpi", (pi * r).sin()));
            cases.push(("__nv_cospi", (pi * r).cos()));
        }
        for (name, expected) in cases {
            let Val::F64(got) = call(name, Val::F64(x)) else { panic!("{name}: not f64") };
            if name.ends_with("pi") {
                // The host's sin(pi * r) carries the rounding of pi * r (< 1e-15 absolute
                // for |r| < 2), which is no ulp bound near the zeros: compare absolutely.
                let d = (got - expected).abs();
                assert!(d <= 2e-15, "{name}({x:e}): libdevice {got:e}, host {expected:e}");
                continue;
            }
            let d = ulps64(got, expected);
            assert!(d <= 3, "{name}({x:e}): libdevice {got:e}, host {expected:e} ({d} ulp)");
            let w = worst.entry(name).or_default();
            *w = (*w).max(d);
        }
        let x32 = x as f32;
        let wide = f64::from(x32);
        for (name, expected) in [
            ("__nv_sinf", wide.sin() as f32),
            ("__nv_cosf", wide.cos() as f32),
            ("__nv_tanf", wide.tan() as f32),
        ] {
            let Val::F32(got) = call(name, Val::F32(x32)) else { panic!("{name}: not f32") };
            let d = ulps32(got, expected);
            assert!(d <= 3, "{name}({x32:e}): libdevice {got:e}, host {expected:e} ({d} ulp)");
            let w = worst.entry(name).or_default();
            *w = (*w).max(d);
        }
    }
    // sinpi/cospi are exact where the answer is.
    for (name, x, expected) in [
        ("__nv_sinpi", 0.5, 1.0f64),
        ("__nv_cospi", 0.5, 0.0),
        ("__nv_sinpi", 1.0, 0.0),
        ("__nv_cospi", 1.0, -1.0),
        ("__nv_sinpi", 1.0e300, 0.0),
        ("__nv_cospi", -3.0, -1.0),
    ] {
        let Val::F64(got) = call(name, Val::F64(x)) else { panic!("{name}: not f64") };
        assert_eq!(got.abs(), expected.abs(), "{name}({x:e})");
        assert!(got == 0.0 || got == expected, "{name}({x:e}) = {got:e}");
    }
    // sincos writes both results through its pointers.
    let sincos = module.function_by_name("__nv_sincos").expect("linked");
    for &x in POINTS {
        let s = interp.alloc(&adc_ir::Type::F64, &[Val::F64(0.0)]).expect("alloc");
        let c = interp.alloc(&adc_ir::Type::F64, &[Val::F64(0.0)]).expect("alloc");
        interp.call(sincos, &[Val::F64(x), s.clone(), c.clone()]).expect("sincos runs");
        let read = |p: &Val| match interp.read(p, &adc_ir::Type::F64, 1).expect("read")[0] {
            Val::F64(v) => v,
            ref other => panic!("{other:?}"),
        };
        let (got_s, got_c) = (read(&s), read(&c));
        assert!(ulps64(got_s, x.sin()) <= 3, "sincos({x:e}).sin = {got_s:e}");
        assert!(ulps64(got_c, x.cos()) <= 3, "sincos({x:e}).cos = {got_c:e}");
    }
    println!("worst ulp distance from the host libm over {} points: {worst:?}", POINTS.len());
}

#[test]
fn trig_kernel_ptx_is_self_contained_and_runs() {
    let Some((ptxas, libdevice)) = libdevice() else {
        println!("SKIPPED: ptxas (and libdevice next to it) not found");
        return;
    };
    let scratch = std::env::temp_dir().join(format!("adc-trig-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let mut module = import_cuda("trig", &scratch);
    adc_ptx::libdevice::link_libdevice(&mut module, &libdevice);
    adc_ir::verify::verify_module(&module).expect("linked module verifies");
    for arch in [adc_ptx::Arch::Sm80, adc_ptx::Arch::Sm90] {
        let options = adc_ptx::PtxOptions { arch, ..Default::default() };
        let text = adc_ptx::emit_module(&module, &options).expect("PTX emission");
        assert!(!text.contains(".extern"), "{}: the PTX still calls externals", arch.name());
        let path = scratch.join(format!("trig.{}.ptx", arch.name()));
        std::fs::write(&path, &text).expect("write ptx");
        if let Err(complaint) = assemble(&ptxas, &path, arch) {
            panic!("ptxas rejected {}:\n{complaint}", path.display());
        }
    }

    let n = POINTS.len();
    let mut interp = Interpreter::new(&module).expect("interpreter");
    let xs: Vec<Val> = POINTS.iter().map(|x| Val::F64(*x)).collect();
    let x = interp.alloc(&adc_ir::Type::F64, &xs).expect("alloc");
    let out = interp.alloc(&adc_ir::Type::F64, &vec![Val::F64(0.0); 3 * n]).expect("alloc");
    let out32 = interp.alloc(&adc_ir::Type::F32, &vec![Val::F32(0.0); 2 * n]).expect("alloc");
    let kernel = module.function_by_name("trig").expect("kernel");
    let args = [Val::Int(n as u128), x, out.clone(), out32.clone()];
    interp.launch(kernel, Dim3::x(2), Dim3::x(16), &args).expect("simulated launch");
    let got = interp.read(&out, &adc_ir::Type::F64, 3 * n).expect("read");
    let got32 = interp.read(&out32, &adc_ir::Type::F32, 2 * n).expect("read");
    for (i, &x) in POINTS.iter().enumerate() {
        for (k, expected) in [x.sin(), x.cos(), x.tan()].into_iter().enumerate() {
            let Val::F64(y) = got[3 * i + k] else { panic!("not f64") };
            assert!(ulps64(y, expected) <= 3, "point {x:e}, result {k}: {y:e} vs {expected:e}");
        }
        let wide = f64::from(x as f32);
        for (k, expected) in [wide.sin() as f32, wide.cos() as f32].into_iter().enumerate() {
            let Val::F32(y) = got32[2 * i + k] else { panic!("not f32") };
            assert!(ulps32(y, expected) <= 3, "point {x:e}, f32 result {k}: {y:e} vs {expected:e}");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
