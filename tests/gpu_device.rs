//! The gradient kernels of `tests/cuda/grad_*.cu` on a real GPU. The CUDA driver
//! (`libcuda.so.1`) is loaded at run time; without it, or without a device, the tests print
//! `SKIPPED: no CUDA driver/device` and pass. With one, each kernel whose PTX (libdevice
//! linked) calls no external other than the device heap is JIT-loaded by the driver, and
//! 1. the primal kernel on the device must leave the same buffers as the simulated grid
//!    (adc's interpreter, itself checked against C references in tests/cuda_kernels.rs);
//! 2. the gradient kernel likewise, shadows included.
//!
//! Device results may differ from the simulation in the last bits (atomics sum in another
//! order; the hardware's approximate reciprocals), hence relative tolerances.
//!
//! `cargo test --test gpu_device -- --ignored --nocapture` runs the timing mode instead:
//! the time of each primal and gradient kernel (median of repeated launches) and their
//! ratio.

#[path = "common/cuda.rs"]
mod cuda;

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::Path;
use std::time::{Duration, Instant};

use adc_ir::interp::{Dim3, Interpreter, Val};
use adc_ir::Module;
use cuda::{build_cuda, import_libdevice, Elem};

/// The driver API functions the tests use, resolved from `libcuda.so.1` (`_v2` names are
/// the 64-bit ones the CUDA headers map the plain names to).
mod driver {
    use super::*;

    pub type CuResult = c_int;
    pub type CuDevice = c_int;
    pub type CuContext = *mut c_void;
    pub type CuModule = *mut c_void;
    pub type CuFunction = *mut c_void;
    pub type CuDevicePtr = u64;
    pub type CuStream = *mut c_void;

    const CUDA_SUCCESS: CuResult = 0;
    const COMPUTE_CAPABILITY_MAJOR: c_int = 75;

    pub struct Driver {
        _library: libloading::Library,
        init: unsafe extern "C" fn(c_uint) -> CuResult,
        device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
        device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
        device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
        ctx_create: unsafe extern "C" fn(*mut CuContext, c_uint, CuDevice) -> CuResult,
        ctx_destroy: unsafe extern "C" fn(CuContext) -> CuResult,
        ctx_synchronize: unsafe extern "C" fn() -> CuResult,
        module_load_data: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
        module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
        module_get_function:
            unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
        mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
        mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
        memcpy_htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
        memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
        #[allow(clippy::type_complexity)]
        launch_kernel: unsafe extern "C" fn(
            CuFunction,
            c_uint,
            c_uint,
            c_uint,
            c_uint,
            c_uint,
            c_uint,
            c_uint,
            CuStream,
            *mut *mut c_void,
            *mut *mut c_void,
        ) -> CuResult,
        get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    }

    /// A context on device 0, destroyed on drop.
    pub struct Gpu {
        pub driver: Driver,
        context: CuContext,
        /// Compute capability major version.
        pub major: c_int,
    }

    impl Driver {
        /// `None` when the library or one of its functions is missing.
        pub fn load() -> Option<Driver> {
            // SAFETY: loading the CUDA driver runs its initializers, which have no
            // preconditions; each symbol is read with the prototype of cuda.h (CUDA 12).
            unsafe {
                let library = libloading::Library::new("libcuda.so.1").ok()?;
                macro_rules! sym {
                    ($name:literal) => {
                        *library.get(concat!($name, "\0").as_bytes()).ok()?
                    };
                }
                Some(Driver {
                    init: sym!("cuInit"),
                    device_get_count: sym!("cuDeviceGetCount"),
                    device_get: sym!("cuDeviceGet"),
                    device_get_attribute: sym!("cuDeviceGetAttribute"),
                    ctx_create: sym!("cuCtxCreate_v2"),
                    ctx_destroy: sym!("cuCtxDestroy_v2"),
                    ctx_synchronize: sym!("cuCtxSynchronize"),
                    module_load_data: sym!("cuModuleLoadData"),
                    module_unload: sym!("cuModuleUnload"),
                    module_get_function: sym!("cuModuleGetFunction"),
                    mem_alloc: sym!("cuMemAlloc_v2"),
                    mem_free: sym!("cuMemFree_v2"),
                    memcpy_htod: sym!("cuMemcpyHtoD_v2"),
                    memcpy_dtoh: sym!("cuMemcpyDtoH_v2"),
                    launch_kernel: sym!("cuLaunchKernel"),
                    get_error_name: sym!("cuGetErrorName"),
                    _library: library,
                })
            }
        }

        pub fn check(&self, result: CuResult, what: &str) -> Result<(), String> {
            if result == CUDA_SUCCESS {
                return Ok(());
            }
            let mut name: *const c_char = std::ptr::null();
            // SAFETY: cuGetErrorName writes a pointer to a static string (or fails).
            let text = unsafe {
                if (self.get_error_name)(result, &mut name) == CUDA_SUCCESS && !name.is_null() {
                    CStr::from_ptr(name).to_string_lossy().into_owned()
                } else {
                    format!("error {result}")
                }
            };
            Err(format!("{what}: {text}"))
        }
    }

    impl Gpu {
        /// The driver and a context on device 0; `None` (with the reason) when there is
        /// no driver or no device.
        pub fn open() -> Result<Gpu, String> {
            let driver = Driver::load().ok_or("libcuda.so.1 not found")?;
            // SAFETY: the driver API's documented calling sequence; every out-pointer
            // points at a live local.
            unsafe {
                driver.check((driver.init)(0), "cuInit")?;
                let mut count = 0;
                driver.check((driver.device_get_count)(&mut count), "cuDeviceGetCount")?;
                if count == 0 {
                    return Err("no CUDA device".into());
                }
                let mut device = 0;
                driver.check((driver.device_get)(&mut device, 0), "cuDeviceGet")?;
                let mut major = 0;
                driver.check(
                    (driver.device_get_attribute)(&mut major, COMPUTE_CAPABILITY_MAJOR, device),
                    "cuDeviceGetAttribute",
                )?;
                let mut context = std::ptr::null_mut();
                driver.check((driver.ctx_create)(&mut context, 0, device), "cuCtxCreate")?;
                Ok(Gpu { driver, context, major })
            }
        }

        /// Loads PTX text (JIT-compiled by the driver).
        pub fn load(&self, ptx: &str) -> Result<CuModule, String> {
            let text = CString::new(ptx).map_err(|e| e.to_string())?;
            let mut module = std::ptr::null_mut();
            // SAFETY: `text` is a NUL-terminated PTX image alive during the call.
            unsafe {
                let r = (self.driver.module_load_data)(&mut module, text.as_ptr() as *const _);
                self.driver.check(r, "cuModuleLoadData")?;
            }
            Ok(module)
        }

        pub fn unload(&self, module: CuModule) {
            // SAFETY: `module` came from `load` and is unloaded once.
            unsafe { (self.driver.module_unload)(module) };
        }

        pub fn function(&self, module: CuModule, name: &str) -> Result<CuFunction, String> {
            let name_c = CString::new(name).map_err(|e| e.to_string())?;
            let mut f = std::ptr::null_mut();
            // SAFETY: valid module and NUL-terminated name.
            let r = unsafe { (self.driver.module_get_function)(&mut f, module, name_c.as_ptr()) };
            self.driver.check(r, &format!("cuModuleGetFunction({name})"))?;
            Ok(f)
        }

        /// A device buffer holding `bytes`.
        pub fn upload(&self, bytes: &[u8]) -> Result<CuDevicePtr, String> {
            let mut ptr = 0;
            // SAFETY: allocation of at least one byte; the copy reads `bytes` only.
            unsafe {
                self.driver
                    .check((self.driver.mem_alloc)(&mut ptr, bytes.len().max(1)), "cuMemAlloc")?;
                let r = (self.driver.memcpy_htod)(ptr, bytes.as_ptr() as *const _, bytes.len());
                self.driver.check(r, "cuMemcpyHtoD")?;
            }
            Ok(ptr)
        }

        pub fn download(&self, ptr: CuDevicePtr, len: usize) -> Result<Vec<u8>, String> {
            let mut bytes = vec![0u8; len];
            // SAFETY: `ptr` holds at least `len` bytes (it was uploaded with them).
            let r = unsafe { (self.driver.memcpy_dtoh)(bytes.as_mut_ptr() as *mut _, ptr, len) };
            self.driver.check(r, "cuMemcpyDtoH")?;
            Ok(bytes)
        }

        pub fn free(&self, ptr: CuDevicePtr) {
            // SAFETY: `ptr` came from `upload` and is freed once.
            unsafe { (self.driver.mem_free)(ptr) };
        }

        /// Launches `f` with `params` (each a pointer to the argument's value, as
        /// cuLaunchKernel wants) and waits for it.
        pub fn launch(
            &self,
            f: CuFunction,
            grid: Dim3,
            block: Dim3,
            params: &mut [*mut c_void],
        ) -> Result<(), String> {
            // SAFETY: `params` has one pointer per kernel parameter, each pointing at a
            // live value of the parameter's size.
            unsafe {
                let r = (self.driver.launch_kernel)(
                    f,
                    grid.x,
                    grid.y,
                    grid.z,
                    block.x,
                    block.y,
                    block.z,
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                );
                self.driver.check(r, "cuLaunchKernel")?;
                self.driver.check((self.driver.ctx_synchronize)(), "cuCtxSynchronize")
            }
        }
    }

    impl Drop for Gpu {
        fn drop(&mut self) {
            // SAFETY: the context was created by `open` and is destroyed once.
            unsafe { (self.driver.ctx_destroy)(self.context) };
        }
    }
}

use driver::Gpu;

use Elem::{F32, F64, I32};

#[derive(Clone, Debug)]
enum Arg {
    Int(i32),
    Float32(f32),
    /// Element type, length, range of initial values, `Dup` in the gradient kernel.
    Buf(Elem, usize, f64, f64, bool),
}

fn buf(elem: Elem, len: usize, lo: f64, hi: f64) -> Arg {
    Arg::Buf(elem, len, lo, hi, elem != I32)
}

struct Spec {
    name: &'static str,
    grid: Dim3,
    block: Dim3,
    args: Vec<Arg>,
}

/// The kernels of tests/cuda_kernels.rs with the same launch shapes.
fn specs() -> Vec<Spec> {
    let spec = |name, grid, block, args| Spec { name, grid, block, args };
    vec![
        spec(
            "saxpy",
            Dim3::x(3),
            Dim3::x(32),
            vec![Arg::Int(90), Arg::Float32(1.5), buf(F32, 90, -1.0, 1.0), buf(F32, 90, -1.0, 1.0)],
        ),
        spec(
            "stencil1d",
            Dim3::x(2),
            Dim3::x(32),
            vec![Arg::Int(60), buf(F64, 60, -1.0, 1.0), buf(F64, 60, -1.0, 1.0)],
        ),
        spec(
            "stencil2d",
            Dim3::new(2, 2, 1),
            Dim3::new(6, 6, 1),
            vec![Arg::Int(12), buf(F64, 144, 0.0, 1.0), buf(F64, 144, 0.0, 1.0)],
        ),
        spec(
            "expsin",
            Dim3::x(2),
            Dim3::x(32),
            vec![Arg::Int(50), buf(F64, 50, -2.0, 2.0), buf(F64, 50, -1.0, 1.0)],
        ),
        spec(
            "sqrtpow",
            Dim3::x(2),
            Dim3::x(32),
            vec![Arg::Int(50), buf(F64, 50, -1.0, 2.0), buf(F64, 50, -1.0, 1.0)],
        ),
        spec(
            "tanh_layer",
            Dim3::x(2),
            Dim3::x(8),
            vec![
                Arg::Int(12),
                buf(F64, 96, -0.5, 0.5),
                buf(F64, 8, -1.0, 1.0),
                buf(F64, 12, -0.5, 0.5),
                buf(F64, 12, -1.0, 1.0),
            ],
        ),
        spec(
            "nbody",
            Dim3::x(2),
            Dim3::x(16),
            vec![buf(F64, 48, -1.0, 1.0), buf(F64, 24, 0.5, 1.5), buf(F64, 48, -0.1, 0.1)],
        ),
        spec(
            "histogram",
            Dim3::x(2),
            Dim3::x(32),
            vec![
                Arg::Int(50),
                buf(F64, 50, 0.0, 1.0),
                buf(F64, 50, 0.5, 1.5),
                buf(F64, 8, 0.0, 1.0),
                buf(I32, 8, 0.0, 3.0),
            ],
        ),
        spec(
            "xsbench",
            Dim3::x(2),
            Dim3::x(16),
            vec![
                Arg::Int(30),
                Arg::Buf(F64, 16, 0.0, 1.0, false),
                buf(F64, 30, 0.1, 0.9),
                buf(F64, 48, 0.5, 2.0),
                buf(F64, 3, 0.5, 1.5),
                buf(F64, 30, 0.0, 1.0),
            ],
        ),
        spec(
            "poly_loop",
            Dim3::x(2),
            Dim3::x(16),
            vec![
                Arg::Int(30),
                buf(I32, 30, 0.0, 7.0),
                buf(F64, 30, -1.0, 1.0),
                buf(F64, 8, -1.0, 1.0),
                buf(F64, 30, 0.0, 1.0),
            ],
        ),
        spec(
            "logsumexp",
            Dim3::x(2),
            Dim3::x(8),
            vec![Arg::Int(12), Arg::Int(5), buf(F64, 60, -2.0, 2.0), buf(F64, 12, 0.0, 1.0)],
        ),
        spec(
            "sumsq",
            Dim3::x(2),
            Dim3::x(32),
            vec![
                Arg::Int(50),
                buf(F64, 50, -1.0, 1.0),
                buf(F64, 50, 0.5, 1.5),
                buf(F64, 1, 0.0, 1.0),
            ],
        ),
        spec(
            "dot",
            Dim3::x(3),
            Dim3::x(32),
            vec![
                Arg::Int(80),
                buf(F64, 80, -1.0, 1.0),
                buf(F64, 80, -1.0, 1.0),
                buf(F64, 1, 0.0, 1.0),
            ],
        ),
        spec(
            "matmul",
            Dim3::new(2, 2, 1),
            Dim3::new(4, 4, 1),
            vec![buf(F64, 64, -1.0, 1.0), buf(F64, 64, -1.0, 1.0), buf(F64, 64, -1.0, 1.0)],
        ),
        spec(
            "stencil_tile",
            Dim3::x(3),
            Dim3::x(16),
            vec![Arg::Int(40), buf(F64, 40, -1.0, 1.0), buf(F64, 40, -1.0, 1.0)],
        ),
    ]
}

/// `tests/cuda/grad_<name>.cu` through clang-19 and `adc build`, libdevice linked when
/// it is installed. The module and its PTX for sm_80 (which every later GPU JIT-compiles).
fn compile(name: &str, scratch: &Path, libdevice: Option<&Module>) -> (Module, String) {
    let (mut module, _) = build_cuda(&format!("grad_{name}"), scratch);
    if let Some(libdevice) = libdevice {
        adc_ptx::libdevice::link_libdevice(&mut module, libdevice);
    }
    let ptx = adc_ptx::emit_module(&module, &adc_ptx::PtxOptions::default()).expect("PTX");
    (module, ptx)
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One buffer of a launch: its element type and values (as f64).
#[derive(Clone, Debug)]
struct Buffer {
    elem: Elem,
    data: Vec<f64>,
}

impl Buffer {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.data.len() * self.elem.size());
        for x in &self.data {
            match self.elem {
                F32 => out.extend((*x as f32).to_le_bytes()),
                F64 => out.extend(x.to_le_bytes()),
                I32 => out.extend((*x as i32).to_le_bytes()),
            }
        }
        out
    }

    fn from_bytes(elem: Elem, bytes: &[u8]) -> Buffer {
        let data = bytes
            .chunks_exact(elem.size())
            .map(|c| match elem {
                F32 => f64::from(f32::from_le_bytes(c.try_into().unwrap())),
                F64 => f64::from_le_bytes(c.try_into().unwrap()),
                I32 => f64::from(i32::from_le_bytes(c.try_into().unwrap())),
            })
            .collect();
        Buffer { elem, data }
    }

    fn vals(&self) -> Vec<Val> {
        self.data
            .iter()
            .map(|x| match self.elem {
                F32 => Val::F32(*x as f32),
                F64 => Val::F64(*x),
                I32 => Val::Int(u128::from(*x as i32 as u32)),
            })
            .collect()
    }
}

/// A kernel parameter of one launch.
#[derive(Clone, Debug)]
enum Param {
    Int(i32),
    Float32(f32),
    Buf(Buffer),
}

/// The parameters of the primal kernel, or of the gradient kernel (a shadow after each
/// `Dup` buffer), with deterministic contents.
fn params(spec: &Spec, gradient: bool) -> Vec<Param> {
    let mut rng = Lcg(0x5eed ^ spec.name.len() as u64);
    let mut out = Vec::new();
    for arg in &spec.args {
        match arg {
            Arg::Int(v) => out.push(Param::Int(*v)),
            Arg::Float32(x) => out.push(Param::Float32(*x)),
            Arg::Buf(elem, len, lo, hi, dup) => {
                let data: Vec<f64> = (0..*len)
                    .map(|_| {
                        let x = lo + rng.next() * (hi - lo);
                        if *elem == I32 {
                            x.floor().min(hi - 1.0)
                        } else {
                            x
                        }
                    })
                    .collect();
                out.push(Param::Buf(Buffer { elem: *elem, data }));
                if gradient && *dup {
                    let seed = (0..*len).map(|_| rng.next() - 0.5).collect();
                    out.push(Param::Buf(Buffer { elem: *elem, data: seed }));
                }
            }
        }
    }
    out
}

/// Runs `kernel` on the simulated grid; the final buffers (in parameter order).
fn simulate(module: &Module, kernel: &str, spec: &Spec, params: &[Param]) -> Vec<Buffer> {
    let mut interp = Interpreter::new(module).expect("interpreter");
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for p in params {
        match p {
            Param::Int(v) => args.push(Val::Int(u128::from(*v as u32))),
            Param::Float32(x) => args.push(Val::F32(*x)),
            Param::Buf(b) => {
                let ptr = interp.alloc(&b.elem.ty(), &b.vals()).expect("alloc");
                args.push(ptr.clone());
                buffers.push((b.elem, b.data.len(), ptr));
            }
        }
    }
    let f = module.function_by_name(kernel).expect("kernel");
    if let Err(e) = interp.launch(f, spec.grid, spec.block, &args) {
        panic!("{kernel}: simulated launch failed: {}", e.to_diagnostic());
    }
    buffers
        .into_iter()
        .map(|(elem, len, ptr)| {
            let vals = interp.read(&ptr, &elem.ty(), len).expect("read");
            let data = vals
                .iter()
                .map(|v| match v {
                    Val::F32(x) => f64::from(*x),
                    Val::F64(x) => *x,
                    Val::Int(i) => f64::from(*i as u32 as i32),
                    other => panic!("{other:?}"),
                })
                .collect();
            Buffer { elem, data }
        })
        .collect()
}

/// Runs `kernel` on the device `repeat` times from the same inputs; the final buffers of
/// the last launch and the median launch time.
fn run_on_gpu(
    gpu: &Gpu,
    module: driver::CuModule,
    kernel: &str,
    spec: &Spec,
    params: &[Param],
    repeat: usize,
) -> Result<(Vec<Buffer>, Duration), String> {
    let f = gpu.function(module, kernel)?;
    let mut times = Vec::new();
    let mut result = Vec::new();
    for _ in 0..repeat {
        // Scalars and device pointers live in `values`; `pointers` point at them.
        let mut values: Vec<u64> = Vec::with_capacity(params.len());
        let mut device = Vec::new();
        for p in params {
            match p {
                Param::Int(v) => values.push(u64::from(*v as u32)),
                Param::Float32(x) => values.push(u64::from(x.to_bits())),
                Param::Buf(b) => {
                    let ptr = gpu.upload(&b.bytes())?;
                    device.push((b.elem, b.data.len(), ptr));
                    values.push(ptr);
                }
            }
        }
        // Little-endian: the low bytes of each u64 hold an i32/f32 argument.
        let mut pointers: Vec<*mut c_void> =
            values.iter_mut().map(|v| v as *mut u64 as *mut c_void).collect();
        let start = Instant::now();
        let launched = gpu.launch(f, spec.grid, spec.block, &mut pointers);
        times.push(start.elapsed());
        let downloaded: Result<Vec<Buffer>, String> = device
            .iter()
            .map(|(elem, len, ptr)| {
                Ok(Buffer::from_bytes(*elem, &gpu.download(*ptr, len * elem.size())?))
            })
            .collect();
        for (_, _, ptr) in &device {
            gpu.free(*ptr);
        }
        launched?;
        result = downloaded?;
    }
    times.sort();
    Ok((result, times[times.len() / 2]))
}

fn compare(what: &str, device: &[Buffer], simulated: &[Buffer]) {
    assert_eq!(device.len(), simulated.len(), "{what}: buffer count");
    for (i, (d, s)) in device.iter().zip(simulated).enumerate() {
        let tolerance = if d.elem == F32 { 1e-4 } else { 1e-9 };
        for (k, (x, y)) in d.data.iter().zip(&s.data).enumerate() {
            assert!(
                (x - y).abs() <= tolerance * y.abs().max(1.0),
                "{what}: buffer {i}[{k}]: device {x}, simulated {y}"
            );
        }
    }
}

/// The device, or the reason there is none (after printing the skip line).
fn open_gpu() -> Option<Gpu> {
    match Gpu::open() {
        Ok(gpu) => Some(gpu),
        Err(reason) => {
            println!("SKIPPED: no CUDA driver/device ({reason})");
            None
        }
    }
}

/// Compiles every kernel and runs its self-contained PTX on the device; `check` compares
/// with the simulator, `repeat` launches each kernel that many times (timing).
fn run_all(gpu: &Gpu, check: bool, repeat: usize) {
    if gpu.major < 8 {
        println!("SKIPPED: the device has compute capability {}.x; the PTX is sm_80", gpu.major);
        return;
    }
    let libdevice = import_libdevice().map(|(module, _)| module);
    let scratch = std::env::temp_dir().join(format!("adc-gpu-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let mut ran = 0;
    for spec in specs() {
        let (module, ptx) = compile(spec.name, &scratch, libdevice.as_ref());
        // The device heap (`malloc`/`free`, used by tapes of unknown size) and `vprintf`
        // are system calls the driver's JIT resolves; anything else cannot load.
        let unresolved: Vec<&str> = ptx
            .lines()
            .filter_map(|l| l.strip_prefix(".extern .func "))
            .filter(|rest| !["malloc", "free", "vprintf"].iter().any(|name| rest.contains(name)))
            .collect();
        if !unresolved.is_empty() {
            println!("{}: skipped, its PTX calls external functions {unresolved:?}", spec.name);
            continue;
        }
        let loaded = gpu.load(&ptx).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        let grad = format!("{}_grad", spec.name);
        let primal_params = params(&spec, false);
        let grad_params = params(&spec, true);
        let (primal, primal_time) =
            run_on_gpu(gpu, loaded, spec.name, &spec, &primal_params, repeat)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        let (gradient, grad_time) = run_on_gpu(gpu, loaded, &grad, &spec, &grad_params, repeat)
            .unwrap_or_else(|e| panic!("{grad}: {e}"));
        gpu.unload(loaded);
        if check {
            compare(spec.name, &primal, &simulate(&module, spec.name, &spec, &primal_params));
            compare(&grad, &gradient, &simulate(&module, &grad, &spec, &grad_params));
            println!("{}: primal and gradient on the device match the simulator", spec.name);
        } else {
            let ratio = grad_time.as_secs_f64() / primal_time.as_secs_f64();
            println!(
                "{:<14} primal {:>9.1} us  gradient {:>9.1} us  ratio {ratio:.2}",
                spec.name,
                primal_time.as_secs_f64() * 1e6,
                grad_time.as_secs_f64() * 1e6
            );
        }
        ran += 1;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(ran > 0, "no kernel had self-contained PTX");
}

#[test]
fn kernels_on_the_device_match_the_simulator() {
    let Some(gpu) = open_gpu() else { return };
    run_all(&gpu, true, 1);
}

/// Launch times (median of 20, launch overhead included: these grids are tiny).
#[test]
#[ignore = "timing mode: cargo test --test gpu_device -- --ignored --nocapture"]
fn kernel_timings() {
    let Some(gpu) = open_gpu() else { return };
    run_all(&gpu, false, 20);
}
