//! Kernel gradients end to end, without a GPU: each `tests/cuda/grad_*.cu` holds a kernel
//! `NAME` (a `__global__` wrapper around a `__device__` body), a sequential reference
//! `NAME_ref` with the same parameters, and a gradient kernel `NAME_grad` calling
//! `__enzyme_autodiff_NAME` (the parameters again, each `Dup` buffer followed by its
//! shadow). The file goes clang-19 -> bitcode -> `adc build` (pre-AD pipeline, AD, post-AD
//! pipeline), then
//! 1. the module is emitted as PTX for sm_80 and sm_90 and assembled by ptxas (skipped,
//!    with a message, when ptxas is missing);
//! 2. the kernel runs on a simulated grid and its buffers must match the reference run
//!    sequentially in the interpreter;
//! 3. the gradient kernel runs on the simulated grid with every `Dup` shadow seeded with
//!    weights `w`, and each shadow must then hold the gradient of `Σ w · (final buffer)`
//!    with respect to the initial buffers, which is checked against central finite
//!    differences of simulated runs of the kernel at sampled elements.
//!
//! Filter with `cargo test --test cuda_kernels -- NAME`.

#[path = "common/cuda.rs"]
mod cuda;

use std::path::Path;

use adc_ir::interp::{Dim3, Interpreter, Val};
use adc_ir::Module;
use cuda::{assemble, build_cuda, find_ptxas, have_clang, import_libdevice, ulps64, Elem};

/// One kernel parameter.
#[derive(Clone, Debug)]
enum Arg {
    Int(i64),
    Float32(f32),
    /// A buffer: element type, length, initial values in `[lo, hi)` (integers: `lo..hi`),
    /// and whether it is `Dup` in the gradient kernel.
    Buf {
        elem: Elem,
        len: usize,
        lo: f64,
        hi: f64,
        dup: bool,
    },
}

fn buf(elem: Elem, len: usize, lo: f64, hi: f64) -> Arg {
    Arg::Buf { elem, len, lo, hi, dup: elem != Elem::I32 }
}

fn constant_buf(elem: Elem, len: usize, lo: f64, hi: f64) -> Arg {
    Arg::Buf { elem, len, lo, hi, dup: false }
}

struct Spec {
    name: &'static str,
    grid: Dim3,
    block: Dim3,
    args: Vec<Arg>,
    /// Relative tolerance of the finite-difference comparison.
    tolerance: f64,
}

/// The module of `tests/cuda/<file>.cu` after `adc build` (derivatives synthesized).
fn compile(file: &str, scratch: &Path) -> Module {
    let (module, output) = build_cuda(file, scratch);
    println!("{file}: device tapes {:?}", output.lowering.device_tapes);
    module
}

/// The externals a kernel may call: CUDA's device-side heap and `printf`, system calls
/// that ptxas and the driver resolve (tapes use the heap only with `--gpu-tapes=heap`).
const DEVICE_SYSTEM_CALLS: &[&str] = &["malloc", "free", "vprintf"];

/// The names of the `.extern .func` prototypes of a PTX text.
fn extern_functions(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(".extern .func ")?;
            // Skip a return parameter list, then the name runs up to its parameters.
            let rest = if rest.starts_with('(') { rest.split_once(") ")?.1 } else { rest };
            rest.split('(').next()
        })
        .collect()
}

/// Emits PTX for both architectures and assembles it as a whole program (every called
/// function defined, or a device system call).
fn check_ptx(module: &Module, file: &str, scratch: &Path) {
    let Some(ptxas) = find_ptxas() else {
        println!("SKIPPED ptxas for {file}: not found (run scripts/install-deps.sh)");
        return;
    };
    let mut module = module.clone();
    if module.functions.values().any(|f| f.is_declaration() && f.name.starts_with("__nv_")) {
        let (libdevice, skipped) = import_libdevice().expect("libdevice beside ptxas");
        let linked = adc_ptx::libdevice::link_libdevice(&mut module, &libdevice);
        assert!(!linked.is_empty(), "{file}: no libdevice function linked");
        let unresolved: Vec<&str> = module
            .functions
            .values()
            .filter(|f| f.is_declaration() && f.name.starts_with("__"))
            .filter(|f| !f.name.starts_with("__enzyme"))
            .map(|f| f.name.as_str())
            .collect();
        let why: Vec<&String> =
            skipped.iter().filter(|e| unresolved.iter().any(|name| e.contains(name))).collect();
        assert!(unresolved.is_empty(), "{file}: unresolved after linking: {unresolved:?}: {why:?}");
        adc_ir::verify::verify_module(&module).expect("linked module verifies");
    }
    for arch in [adc_ptx::Arch::Sm80, adc_ptx::Arch::Sm90] {
        let options = adc_ptx::PtxOptions { arch, ..Default::default() };
        let text = adc_ptx::emit_module(&module, &options)
            .unwrap_or_else(|e| panic!("{file}: PTX emission for {} failed: {e}", arch.name()));
        let path = scratch.join(format!("{file}.{}.ptx", arch.name()));
        std::fs::write(&path, &text).expect("write ptx");
        let externs = extern_functions(&text);
        let unexpected: Vec<&str> =
            externs.iter().copied().filter(|name| !DEVICE_SYSTEM_CALLS.contains(name)).collect();
        assert!(
            unexpected.is_empty(),
            "{file}: the {} PTX calls externals a device cannot resolve: {unexpected:?} ({})",
            arch.name(),
            path.display()
        );
        // Tapes live in registers, local arrays or the local tape region: a device
        // `malloc` per thread serializes a launch (`--gpu-tapes=heap` is the opt-in).
        assert!(
            !externs.contains(&"malloc"),
            "{file}: the {} gradient PTX calls the device heap ({})",
            arch.name(),
            path.display()
        );
        println!("{file}: {} PTX is a whole program (externals {externs:?})", arch.name());
        if let Err(complaint) = assemble(&ptxas, &path, arch) {
            panic!(
                "{file}: ptxas rejected the {} PTX ({}):\n{complaint}",
                arch.name(),
                path.display()
            );
        }
    }
}

/// A deterministic generator (64-bit LCG) so that failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn to_val(elem: Elem, x: f64) -> Val {
    match elem {
        Elem::F32 => Val::F32(x as f32),
        Elem::F64 => Val::F64(x),
        Elem::I32 => Val::Int(u128::from(x as i32 as u32)),
    }
}

fn to_f64(v: &Val) -> f64 {
    match v {
        Val::F32(x) => f64::from(*x),
        Val::F64(x) => *x,
        Val::Int(i) => f64::from(*i as u32 as i32),
        other => panic!("not a number: {other:?}"),
    }
}

/// Initial contents of every buffer parameter (`None` for scalars).
fn initial_buffers(spec: &Spec) -> Vec<Option<Vec<f64>>> {
    let mut rng = Lcg(0x5eed ^ spec.name.len() as u64);
    spec.args
        .iter()
        .map(|a| match a {
            Arg::Buf { elem: Elem::I32, len, lo, hi, .. } => Some(
                (0..*len).map(|_| (lo + (rng.next() * (hi - lo)).floor()).min(hi - 1.0)).collect(),
            ),
            Arg::Buf { len, lo, hi, .. } => {
                Some((0..*len).map(|_| lo + rng.next() * (hi - lo)).collect())
            }
            _ => None,
        })
        .collect()
}

fn elem_of(arg: &Arg) -> Elem {
    match arg {
        Arg::Buf { elem, .. } => *elem,
        _ => Elem::F64,
    }
}

/// Allocates the buffers and builds the argument list (with shadows after `Dup` buffers
/// when `shadows` is given).
fn materialize(
    interp: &mut Interpreter<'_>,
    spec: &Spec,
    contents: &[Option<Vec<f64>>],
    shadows: Option<&[Option<Vec<f64>>]>,
) -> (Vec<Val>, Vec<Option<Val>>, Vec<Option<Val>>) {
    let (mut args, mut ptrs, mut shadow_ptrs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, arg) in spec.args.iter().enumerate() {
        match arg {
            Arg::Int(v) => {
                args.push(Val::Int(u128::from(*v as u64)));
                ptrs.push(None);
                shadow_ptrs.push(None);
            }
            Arg::Float32(x) => {
                args.push(Val::F32(*x));
                ptrs.push(None);
                shadow_ptrs.push(None);
            }
            Arg::Buf { elem, dup, .. } => {
                let data = contents[i].as_ref().expect("buffer contents");
                let vals: Vec<Val> = data.iter().map(|x| to_val(*elem, *x)).collect();
                let p = interp.alloc(&elem.ty(), &vals).expect("alloc");
                args.push(p.clone());
                ptrs.push(Some(p));
                match (dup, shadows) {
                    (true, Some(shadows)) => {
                        let seed = shadows[i].as_ref().expect("shadow contents");
                        let vals: Vec<Val> = seed.iter().map(|x| to_val(*elem, *x)).collect();
                        let s = interp.alloc(&elem.ty(), &vals).expect("alloc");
                        args.push(s.clone());
                        shadow_ptrs.push(Some(s));
                    }
                    _ => shadow_ptrs.push(None),
                }
            }
        }
    }
    (args, ptrs, shadow_ptrs)
}

fn read_all(interp: &Interpreter<'_>, spec: &Spec, ptrs: &[Option<Val>]) -> Vec<Option<Vec<f64>>> {
    spec.args
        .iter()
        .zip(ptrs)
        .map(|(arg, p)| match (arg, p) {
            (Arg::Buf { elem, len, .. }, Some(p)) => Some(
                interp.read(p, &elem.ty(), *len).expect("read buffer").iter().map(to_f64).collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Runs the kernel on a simulated grid from `contents`; the final buffers.
fn run_kernel(
    module: &Module,
    spec: &Spec,
    contents: &[Option<Vec<f64>>],
) -> Vec<Option<Vec<f64>>> {
    let mut interp = Interpreter::new(module).expect("interpreter");
    let kernel = module.function_by_name(spec.name).expect("kernel");
    let (args, ptrs, _) = materialize(&mut interp, spec, contents, None);
    if let Err(e) = interp.launch(kernel, spec.grid, spec.block, &args) {
        panic!("{}: simulated launch failed: {}", spec.name, e.to_diagnostic());
    }
    read_all(&interp, spec, &ptrs)
}

fn objective(spec: &Spec, weights: &[Option<Vec<f64>>], fin: &[Option<Vec<f64>>]) -> f64 {
    let mut sum = 0.0;
    for (i, arg) in spec.args.iter().enumerate() {
        if let (Arg::Buf { dup: true, .. }, Some(w), Some(v)) = (arg, &weights[i], &fin[i]) {
            sum += w.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
        }
    }
    sum
}

fn check_kernel(file: &str, spec: Spec) {
    if !have_clang() {
        println!("SKIPPED {file}: clang-19 not found");
        return;
    }
    let scratch = std::env::temp_dir().join(format!("adc-cuda-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let module = compile(file, &scratch);
    check_ptx(&module, file, &scratch);
    let initial = initial_buffers(&spec);
    let f32_kernel = spec.args.iter().any(|a| elem_of(a) == Elem::F32);

    // Primal against the sequential reference.
    let simulated = run_kernel(&module, &spec, &initial);
    let reference = {
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let f = module.function_by_name(&format!("{}_ref", spec.name)).expect("reference");
        let (args, ptrs, _) = materialize(&mut interp, &spec, &initial, None);
        if let Err(e) = interp.call(f, &args) {
            panic!("{}: reference failed: {}", spec.name, e.to_diagnostic());
        }
        read_all(&interp, &spec, &ptrs)
    };
    let primal_tol = if f32_kernel { 1e-5 } else { 1e-12 };
    for (i, (a, b)) in simulated.iter().zip(&reference).enumerate() {
        let (Some(a), Some(b)) = (a, b) else { continue };
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= primal_tol * y.abs().max(1.0),
                "{}: buffer {i}[{k}]: simulated {x} but the reference gives {y}",
                spec.name
            );
        }
    }

    // Gradient against central finite differences.
    let mut rng = Lcg(0xadc);
    let weights: Vec<Option<Vec<f64>>> = spec
        .args
        .iter()
        .map(|a| match a {
            Arg::Buf { dup: true, len, .. } => Some((0..*len).map(|_| rng.next() + 0.5).collect()),
            _ => None,
        })
        .collect();
    let gradient = {
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let grad = module.function_by_name(&format!("{}_grad", spec.name)).expect("gradient");
        let (args, _, shadow_ptrs) = materialize(&mut interp, &spec, &initial, Some(&weights));
        if let Err(e) = interp.launch(grad, spec.grid, spec.block, &args) {
            panic!("{}: simulated gradient launch failed: {}", spec.name, e.to_diagnostic());
        }
        read_all(&interp, &spec, &shadow_ptrs)
    };
    let mut checked = 0;
    for (i, arg) in spec.args.iter().enumerate() {
        let Arg::Buf { dup: true, len, elem, .. } = arg else { continue };
        let samples = (*len).min(10);
        for s in 0..samples {
            let k = s * len / samples;
            let x = initial[i].as_ref().expect("buffer")[k];
            let h = if *elem == Elem::F32 { 1e-2 } else { 1e-6 } * x.abs().max(1.0);
            let eval = |delta: f64| {
                let mut contents = initial.clone();
                contents[i].as_mut().expect("buffer")[k] = x + delta;
                objective(&spec, &weights, &run_kernel(&module, &spec, &contents))
            };
            let fd = (eval(h) - eval(-h)) / (2.0 * h);
            let ad = gradient[i].as_ref().expect("shadow")[k];
            assert!(
                (ad - fd).abs() <= spec.tolerance * fd.abs().max(1.0),
                "{}: d/d buffer {i}[{k}]: AD gives {ad}, finite differences {fd}",
                spec.name
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "{}: no gradient element was checked", spec.name);
    println!("{}: primal matches the reference, {checked} gradient elements match", spec.name);
}

macro_rules! kernel_test {
    ($test:ident, $spec:expr) => {
        #[test]
        fn $test() {
            check_kernel(concat!("grad_", stringify!($test)), $spec);
        }
    };
}

use Elem::{F32, F64, I32};

kernel_test!(
    saxpy,
    Spec {
        name: "saxpy",
        grid: Dim3::x(3),
        block: Dim3::x(32),
        args: vec![
            Arg::Int(90),
            Arg::Float32(1.5),
            buf(F32, 90, -1.0, 1.0),
            buf(F32, 90, -1.0, 1.0)
        ],
        tolerance: 1e-3,
    }
);

kernel_test!(
    stencil1d,
    Spec {
        name: "stencil1d",
        grid: Dim3::x(2),
        block: Dim3::x(32),
        args: vec![Arg::Int(60), buf(F64, 60, -1.0, 1.0), buf(F64, 60, -1.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    stencil2d,
    Spec {
        name: "stencil2d",
        grid: Dim3::new(2, 2, 1),
        block: Dim3::new(6, 6, 1),
        args: vec![Arg::Int(12), buf(F64, 144, 0.0, 1.0), buf(F64, 144, 0.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    expsin,
    Spec {
        name: "expsin",
        grid: Dim3::x(2),
        block: Dim3::x(32),
        args: vec![Arg::Int(50), buf(F64, 50, -2.0, 2.0), buf(F64, 50, -1.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    sqrtpow,
    Spec {
        name: "sqrtpow",
        grid: Dim3::x(2),
        block: Dim3::x(32),
        args: vec![Arg::Int(50), buf(F64, 50, -1.0, 2.0), buf(F64, 50, -1.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    tanh_layer,
    Spec {
        name: "tanh_layer",
        grid: Dim3::x(2),
        block: Dim3::x(8),
        args: vec![
            Arg::Int(12),
            buf(F64, 96, -0.5, 0.5),
            buf(F64, 8, -1.0, 1.0),
            buf(F64, 12, -0.5, 0.5),
            buf(F64, 12, -1.0, 1.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    nbody,
    Spec {
        name: "nbody",
        grid: Dim3::x(2),
        block: Dim3::x(16),
        args: vec![buf(F64, 48, -1.0, 1.0), buf(F64, 24, 0.5, 1.5), buf(F64, 48, -0.1, 0.1)],
        tolerance: 1e-5,
    }
);

kernel_test!(
    nbody_restrict,
    Spec {
        name: "nbody_restrict",
        grid: Dim3::x(2),
        block: Dim3::x(16),
        args: vec![buf(F64, 48, -1.0, 1.0), buf(F64, 24, 0.5, 1.5), buf(F64, 48, -0.1, 0.1)],
        tolerance: 1e-5,
    }
);

kernel_test!(
    histogram,
    Spec {
        name: "histogram",
        grid: Dim3::x(2),
        block: Dim3::x(32),
        args: vec![
            Arg::Int(50),
            buf(F64, 50, 0.0, 1.0),
            buf(F64, 50, 0.5, 1.5),
            buf(F64, 8, 0.0, 1.0),
            buf(I32, 8, 0.0, 3.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    xsbench,
    Spec {
        name: "xsbench",
        grid: Dim3::x(2),
        block: Dim3::x(16),
        args: vec![
            Arg::Int(30),
            constant_buf(F64, 16, 0.0, 1.0),
            buf(F64, 30, 0.1, 0.9),
            buf(F64, 48, 0.5, 2.0),
            buf(F64, 3, 0.5, 1.5),
            buf(F64, 30, 0.0, 1.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    poly_loop,
    Spec {
        name: "poly_loop",
        grid: Dim3::x(2),
        block: Dim3::x(16),
        args: vec![
            Arg::Int(30),
            buf(I32, 30, 0.0, 7.0),
            buf(F64, 30, -1.0, 1.0),
            buf(F64, 8, -1.0, 1.0),
            buf(F64, 30, 0.0, 1.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    logsumexp,
    Spec {
        name: "logsumexp",
        grid: Dim3::x(2),
        block: Dim3::x(8),
        args: vec![Arg::Int(12), Arg::Int(5), buf(F64, 60, -2.0, 2.0), buf(F64, 12, 0.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    sumsq,
    Spec {
        name: "sumsq",
        grid: Dim3::x(2),
        block: Dim3::x(32),
        args: vec![
            Arg::Int(50),
            buf(F64, 50, -1.0, 1.0),
            buf(F64, 50, 0.5, 1.5),
            buf(F64, 1, 0.0, 1.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    dot,
    Spec {
        name: "dot",
        grid: Dim3::x(3),
        block: Dim3::x(32),
        args: vec![
            Arg::Int(80),
            buf(F64, 80, -1.0, 1.0),
            buf(F64, 80, -1.0, 1.0),
            buf(F64, 1, 0.0, 1.0),
        ],
        tolerance: 1e-6,
    }
);

kernel_test!(
    matmul,
    Spec {
        name: "matmul",
        grid: Dim3::new(2, 2, 1),
        block: Dim3::new(4, 4, 1),
        args: vec![buf(F64, 64, -1.0, 1.0), buf(F64, 64, -1.0, 1.0), buf(F64, 64, -1.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    stencil_tile,
    Spec {
        name: "stencil_tile",
        grid: Dim3::x(3),
        block: Dim3::x(16),
        args: vec![Arg::Int(40), buf(F64, 40, -1.0, 1.0), buf(F64, 40, -1.0, 1.0)],
        tolerance: 1e-6,
    }
);

kernel_test!(
    row_decay,
    Spec {
        name: "row_decay",
        grid: Dim3::x(2),
        block: Dim3::x(8),
        args: vec![Arg::Int(12), Arg::Int(7), buf(F64, 84, -0.8, 0.8), buf(F64, 12, 0.0, 1.0)],
        tolerance: 1e-6,
    }
);

/// libdevice's bodies, imported and linked by adc, run in the interpreter (nvvm math
/// intrinsics included) and must agree with the host's libm within libdevice's documented
/// bounds (exp, log, tanh 1-2 ulp, pow 2 ulp, sqrt exact; the host's glibc may itself be
/// 1 ulp off, hence 3).
#[test]
fn libdevice_bodies_match_host_libm() {
    let Some((libdevice, _)) = import_libdevice() else {
        println!("SKIPPED: ptxas (and libdevice next to it) not found");
        return;
    };
    let mut module = adc_ir::text::parse_module(
        "declare @__nv_exp(f64) -> f64\ndeclare @__nv_log(f64) -> f64\n\
         declare @__nv_tanh(f64) -> f64\ndeclare @__nv_sqrt(f64) -> f64\n\
         declare @__nv_pow(f64, f64) -> f64\n",
    )
    .expect("parses");
    let linked = adc_ptx::libdevice::link_libdevice(&mut module, &libdevice);
    for name in ["__nv_exp", "__nv_log", "__nv_tanh", "__nv_sqrt", "__nv_pow"] {
        assert!(linked.iter().any(|l| l == name), "{name} was not linked: {linked:?}");
    }
    adc_ir::verify::verify_module(&module).expect("linked module verifies");
    let mut interp = Interpreter::new(&module).expect("interpreter");
    let mut run = |name: &str, args: &[f64]| -> f64 {
        let f = module.function_by_name(name).expect("linked");
        let vals: Vec<Val> = args.iter().map(|x| Val::F64(*x)).collect();
        match interp.call(f, &vals) {
            Ok(Some(Val::F64(y))) => y,
            other => panic!("{name}{args:?}: {other:?}"),
        }
    };
    let points = [-7.25, -1.5, -0.3, 0.001, 0.5, 1.0, 2.75, 10.0, 100.5];
    let (mut checked, mut worst) = (0, 0);
    for &x in &points {
        let cases: Vec<(&str, Vec<f64>, f64)> = vec![
            ("__nv_exp", vec![x], x.exp()),
            ("__nv_tanh", vec![x], x.tanh()),
            ("__nv_log", vec![x.abs()], x.abs().ln()),
            ("__nv_sqrt", vec![x.abs()], x.abs().sqrt()),
            ("__nv_pow", vec![x.abs(), 1.7], x.abs().powf(1.7)),
            ("__nv_pow", vec![1.3, x], 1.3f64.powf(x)),
        ];
        for (name, args, expected) in cases {
            let got = run(name, &args);
            assert!(
                ulps64(got, expected) <= 3,
                "{name}{args:?}: libdevice gives {got:e}, the host {expected:e}"
            );
            checked += 1;
            worst = worst.max(ulps64(got, expected));
        }
    }
    println!("{checked} libdevice results, at most {worst} ulp from the host libm");
}
