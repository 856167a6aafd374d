//! The reference interpreter: executes any verified adc-ir module exactly, reporting
//! undefined behaviour (division by zero, out-of-bounds, use-after-free, uninitialized
//! reads, ...) as errors instead of guessing. It is the semantic oracle for passes (before
//! vs after), gradients (finite differences) and the native backends.
//!
//! - `value`: runtime values and the pure operations on them;
//! - `memory`: allocations, per-byte initialization, value layout in bytes;
//! - `eval`: the execution loop (explicit call stack, fuel, block arguments);
//! - `external`: external functions dispatched by name (libc subset, printf);
//! - `libm`: the C math library table;
//! - `grid`: kernels run over a simulated CUDA grid ([`Interpreter::launch`]);
//! - `nvvm`: the nvvm math intrinsics libdevice's bodies call.
//!
//! Semantic decisions (where LLVM leaves a choice, adc fixes one so that runs are exact):
//! - integers wrap at their width whatever the `nsw`/`nuw`/`exact` flags say; shift amounts
//!   are taken modulo the width; division by zero and `INT_MIN / -1` are errors;
//! - `fminnum`/`fmaxnum` (and `reduce.fmin/fmax`, `atomicrmw fmin/fmax`) return the other
//!   operand for a NaN and order `-0.0` below `+0.0`;
//! - `undef`/`poison` are the zero value of their type, `freeze` is the identity;
//! - float-to-int casts saturate (NaN gives 0); int-to-float casts round once, to nearest;
//! - memory: every allocation has its own never-reused range with guard gaps; reading a
//!   byte never written is an error (copying it is not, struct padding is not checked);
//!   an overlapping `memcpy` (other than onto itself) is an error, `memmove` is not;
//! - `malloc`/`calloc`/`realloc` return null when the interpreter's memory limit (1 GiB
//!   live) is exceeded, as C allocators do; `realloc(p, 0)` frees `p` and returns null;
//!   `memcmp` returns the difference of the first differing bytes;
//! - `printf` conversions are formatted by the C library's `snprintf`, libm calls go to
//!   the platform libm: the same routines native code calls;
//! - calls to defined variadic functions lay their variable arguments out in a System V
//!   register save area and overflow area (`varargs`), which clang's `va_arg` code reads;
//!   `vprintf`, `vfprintf`, `vsnprintf` and `vsprintf` read them through the `va_list`.

mod eval;
mod external;
mod grid;
mod libm;
mod memory;
mod nvvm;
mod value;
mod varargs;

use cranelift_entity::SecondaryMap;
use thiserror::Error;

use crate::constant::{Constant, Symbol};
use crate::dfg::TextSpan;
use crate::diagnostic::Diagnostic;
use crate::entities::{FuncId, GlobalId};
use crate::module::{Module, StartupKind};
use crate::types::Type;

pub use grid::{Dim3, Schedule};
use memory::{checked_size, Access, AllocKind, Memory, FUNC_BASE, FUNC_STRIDE};
pub use value::Val;

/// What a read of never-written memory does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UninitReads {
    /// Undefined behaviour, reported as [`ErrorKind::UninitRead`]: the strict check that
    /// catches a pass storing too little.
    #[default]
    Error,
    /// The bytes read as this pattern. LLVM gives such a load an undefined value rather
    /// than undefined behaviour, so a pass may speculate it (hoist it out of a guarded
    /// path); running under two patterns and getting the same result as the original
    /// shows that the value read never mattered.
    Fill(u8),
}

/// The interpreter's pure value operations, public so that constant folding (`sccp`)
/// computes exactly what the interpreter would, rather than through a second evaluator.
/// An `Err` is a trap (division by zero, ...): a folder must leave such an instruction be.
pub mod fold {
    pub use super::value::{binary, cast, constant, fcmp, fma, icmp, select, unary};
}

/// Default number of instructions one `call` may execute.
pub const DEFAULT_FUEL: u64 = 100_000_000;
/// Default limit on nested calls.
pub const DEFAULT_MAX_CALL_DEPTH: usize = 10_000;

pub(crate) type R<T> = Result<T, ErrorKind>;

/// What went wrong, without where.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ErrorKind {
    #[error("division by zero")]
    DivisionByZero,
    #[error("signed division overflow: {op} of INT_MIN by -1")]
    SignedDivisionOverflow { op: &'static str },
    #[error("out of bounds {op} of {len} bytes at {addr:#x} ({detail})")]
    OutOfBounds { op: &'static str, addr: u64, len: u64, detail: String },
    #[error("use after free: {op} of {len} bytes at {addr:#x} in a freed heap block")]
    UseAfterFree { op: &'static str, addr: u64, len: u64 },
    #[error(
        "use of dead stack memory: {op} of {len} bytes at {addr:#x} in an alloca of @{func}, \
         which has returned"
    )]
    DeadStack { op: &'static str, addr: u64, len: u64, func: String },
    #[error(
        "read of uninitialized memory: {op} of {len} bytes at {addr:#x} (byte {first:#x} was \
         never written)"
    )]
    UninitRead { op: &'static str, addr: u64, len: u64, first: u64 },
    #[error("double free of heap block {addr:#x}")]
    DoubleFree { addr: u64 },
    #[error("invalid free of {addr:#x}: {detail}")]
    InvalidFree { addr: u64, detail: String },
    #[error("write to constant global @{name}")]
    WriteToConstant { name: String },
    #[error("access to global @{name}, which is declared but not defined")]
    UndefinedGlobal { name: String },
    #[error("memcpy of overlapping ranges: {len} bytes from {src:#x} to {dst:#x}")]
    OverlappingCopy { dst: u64, src: u64, len: u64 },
    #[error("out of memory: cannot allocate {size} bytes")]
    OutOfMemory { size: u64 },
    #[error("call_indirect through {addr:#x}, which is not a function address")]
    NotAFunction { addr: u64 },
    #[error("call_indirect signature mismatch: @{func} has type {actual}, called as {expected}")]
    SignatureMismatch { func: String, actual: String, expected: String },
    #[error("reached unreachable")]
    Unreachable,
    #[error("ran out of fuel after {fuel} instructions in @{func}")]
    OutOfFuel { fuel: u64, func: String },
    #[error("call depth limit of {limit} exceeded calling @{func}")]
    CallDepth { limit: usize, func: String },
    #[error("assertion failed: {0}")]
    AssertionFailed(String),
    #[error("abort called")]
    Abort,
    #[error("exit called with code {0}")]
    Exit(i32),
    #[error("call to unknown external function @{0}")]
    UnknownExternal(String),
    #[error("bad call to @{name}: {detail}")]
    BadExternalCall { name: String, detail: String },
    #[error("lane index {index} out of range for a vector of {lanes} lanes")]
    LaneOutOfRange { index: u128, lanes: usize },
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("malformed IR: {0}")]
    Malformed(String),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error(
        "divergent barrier: thread {thread:?} of block {block:?} waits at a barrier (phase \
         {phase}) that {exited} of the block's {total} threads exited without reaching"
    )]
    DivergentBarrier {
        block: (u32, u32, u32),
        thread: (u32, u32, u32),
        phase: u64,
        exited: usize,
        total: usize,
    },
}

/// Where an error happened: the faulting instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorLocation {
    pub function: String,
    pub block: String,
    /// The instruction as printed by `text::FunctionPrinter`.
    pub inst: String,
    /// Its span in the text it was parsed from (empty when built in memory).
    pub span: TextSpan,
}

/// An error of the interpreter: what went wrong, at which instruction, under which calls.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{kind}")]
pub struct InterpError {
    kind: ErrorKind,
    location: Option<Box<ErrorLocation>>,
    /// Function names from the outermost call to the faulting function.
    stack: Vec<String>,
}

impl InterpError {
    pub(crate) fn new(kind: ErrorKind) -> InterpError {
        InterpError { kind, location: None, stack: Vec::new() }
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    pub fn location(&self) -> Option<&ErrorLocation> {
        self.location.as_deref()
    }

    /// Function names from the outermost call to the faulting function.
    pub fn call_stack(&self) -> &[String] {
        &self.stack
    }

    /// The one-line message.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }

    /// The message, the faulting instruction's span, and notes on where it happened.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::new(self.message());
        if let Some(loc) = &self.location {
            d = d.with_span(loc.span).with_note(format!(
                "in function @{}, block ^{}: `{}`",
                loc.function, loc.block, loc.inst
            ));
        }
        if self.stack.len() > 1 {
            const SHOWN: usize = 8;
            let names: Vec<String> = self.stack.iter().map(|f| format!("@{f}")).collect();
            let text = if names.len() > SHOWN {
                let hidden = names.len() - SHOWN;
                format!(
                    "{} -> ({hidden} more) -> {}",
                    names[..SHOWN / 2].join(" -> "),
                    names[names.len() - SHOWN / 2..].join(" -> ")
                )
            } else {
                names.join(" -> ")
            };
            d = d.with_note(format!("call stack: {text}"));
        }
        d
    }
}

impl From<ErrorKind> for InterpError {
    fn from(kind: ErrorKind) -> InterpError {
        InterpError::new(kind)
    }
}

/// Addresses of the `stdout`/`stderr` objects the C library exposes.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Streams {
    stdout: u64,
    stderr: u64,
}

/// Executes functions of one module against one memory; state (globals, heap, output)
/// persists across calls.
pub struct Interpreter<'m> {
    module: &'m Module,
    mem: Memory,
    global_addrs: SecondaryMap<GlobalId, u64>,
    streams: Streams,
    output: String,
    error_output: String,
    /// Bytes of an incomplete UTF-8 sequence at the end of each output.
    output_pending: Vec<u8>,
    error_pending: Vec<u8>,
    fuel: u64,
    max_depth: usize,
    /// The running thread's ids during [`Interpreter::launch`].
    gpu: Option<grid::ThreadContext>,
    /// How [`Interpreter::launch`] orders the threads of a block.
    schedule: grid::Schedule,
}

impl<'m> Interpreter<'m> {
    /// Lays out and initializes every global (relocations become addresses; functions get
    /// addresses that `call_indirect` resolves).
    pub fn new(module: &'m Module) -> Result<Self, InterpError> {
        let mut interp = Interpreter {
            module,
            mem: Memory::default(),
            global_addrs: SecondaryMap::new(),
            streams: Streams::default(),
            output: String::new(),
            error_output: String::new(),
            output_pending: Vec::new(),
            error_pending: Vec::new(),
            fuel: DEFAULT_FUEL,
            max_depth: DEFAULT_MAX_CALL_DEPTH,
            schedule: grid::Schedule::default(),
            gpu: None,
        };
        for (id, global) in module.globals.iter() {
            let size = checked_size(&global.ty).ok_or_else(|| {
                ErrorKind::Unsupported(format!(
                    "global @{} of type {} is too large",
                    global.name, global.ty
                ))
            })?;
            let align = u64::from(global.align).max(global.ty.align());
            let kind = match (&global.init, global.name.as_str()) {
                (Some(_), _) => {
                    AllocKind::Global { name: global.name.clone(), constant: global.constant }
                }
                (None, "stdout" | "stderr" | "__stdoutp" | "__stderrp") if global.ty.is_ptr() => {
                    AllocKind::Global { name: global.name.clone(), constant: false }
                }
                (None, _) => AllocKind::ExternGlobal { name: global.name.clone() },
            };
            let base = interp.mem.allocate(size, align, kind, false)?;
            interp.global_addrs[id] = base;
        }
        interp.streams.stdout = interp.mem.allocate(1, 1, AllocKind::Stream, true)?;
        interp.streams.stderr = interp.mem.allocate(1, 1, AllocKind::Stream, true)?;
        for (id, global) in module.globals.iter() {
            let base = interp.global_addrs[id];
            let value = match (&global.init, global.name.as_str()) {
                (None, "stdout" | "__stdoutp") if global.ty.is_ptr() => {
                    Some(Val::Ptr(interp.streams.stdout))
                }
                (None, "stderr" | "__stderrp") if global.ty.is_ptr() => {
                    Some(Val::Ptr(interp.streams.stderr))
                }
                (None, _) => continue,
                (Some(Constant::Zero | Constant::Undef | Constant::Poison), _) => None,
                (Some(init), _) => Some(
                    value::constant(&global.ty, init, &|s| interp.symbol_address(s))
                        .map_err(|e| global_error(&global.name, e))?,
                ),
            };
            interp
                .mem
                .init_global(base, &global.ty, value.as_ref())
                .map_err(|e| global_error(&global.name, e))?;
        }
        Ok(interp)
    }

    /// Maximum number of instructions one `call` may execute (default 100,000,000);
    /// running out is an error.
    pub fn set_fuel(&mut self, fuel: u64) {
        self.fuel = fuel;
    }

    /// What a read of never-written memory does, for memory allocated from now on
    /// (default [`UninitReads::Error`]).
    pub fn set_uninit_reads(&mut self, policy: UninitReads) {
        self.mem.set_undef_fill(match policy {
            UninitReads::Error => None,
            UninitReads::Fill(byte) => Some(byte),
        });
    }

    /// Maximum depth of nested calls (default 10,000); exceeding it is an error.
    pub fn set_max_call_depth(&mut self, depth: usize) {
        self.max_depth = depth;
    }

    /// Calls `func` with `args` (converted to its parameter types: integers are masked,
    /// integers and pointers are interchangeable) and returns its result.
    pub fn call(&mut self, func: FuncId, args: &[Val]) -> Result<Option<Val>, InterpError> {
        self.run(func, args)
    }

    /// Calls a C `main`: with `argc = 1, argv = {"prog", NULL}` when it takes two or more
    /// parameters, with none otherwise, as a whole program ([`Interpreter::call_program`]).
    /// What it prints is in [`Interpreter::output`].
    pub fn call_main(&mut self, main: FuncId) -> Result<Option<Val>, InterpError> {
        let takes_argv =
            self.module.functions.get(main).is_some_and(|f| f.signature.params.len() >= 2);
        let args = if takes_argv {
            let name: Vec<Val> = b"prog\0".iter().map(|b| Val::Int(u128::from(*b))).collect();
            let name = self.alloc(&Type::I8, &name)?;
            let argv = self.alloc(&Type::PTR, &[name, Val::Ptr(0)])?;
            vec![Val::Int(1), argv]
        } else {
            Vec::new()
        };
        self.call_program(main, &args)
    }

    /// Calls `entry` as the C runtime calls `main`: after the module's constructors (rising
    /// priority) and before its destructors (falling priority, the last registered first).
    pub fn call_program(
        &mut self,
        entry: FuncId,
        args: &[Val],
    ) -> Result<Option<Val>, InterpError> {
        let startup = |kind: StartupKind| {
            let mut list: Vec<(u32, FuncId)> = self
                .module
                .startup
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| (s.priority, s.function))
                .collect();
            list.sort_by_key(|(priority, _)| *priority);
            list
        };
        let (constructors, mut destructors) =
            (startup(StartupKind::Constructor), startup(StartupKind::Destructor));
        destructors.reverse();
        for (_, constructor) in constructors {
            self.call(constructor, &[])?;
        }
        let result = self.call(entry, args)?;
        for (_, destructor) in destructors {
            self.call(destructor, &[])?;
        }
        Ok(result)
    }

    /// Allocates a heap block holding `values` as consecutive elements of type `ty` (at
    /// `ty.size()` strides) and returns its address as a `Val::Ptr`. `free` accepts it.
    pub fn alloc(&mut self, ty: &Type, values: &[Val]) -> Result<Val, InterpError> {
        let elem = checked_size(ty)
            .ok_or_else(|| ErrorKind::InvalidArgument(format!("type {ty} is too large")))?;
        let size = elem
            .checked_mul(values.len() as u64)
            .ok_or(ErrorKind::OutOfMemory { size: u64::MAX })?;
        let base = self.mem.allocate(size, ty.align(), AllocKind::Heap, false)?;
        for (i, v) in values.iter().enumerate() {
            let v = v.coerce(ty).ok_or_else(|| {
                ErrorKind::InvalidArgument(format!(
                    "element {i} ({v:?}) is not a value of type {ty}"
                ))
            })?;
            self.mem.store(base + elem * i as u64, ty, &v, Access::write("store"))?;
        }
        Ok(Val::Ptr(base))
    }

    /// Reads `count` consecutive elements of type `ty` starting at `ptr`; every byte read
    /// must be initialized.
    pub fn read(&self, ptr: &Val, ty: &Type, count: usize) -> Result<Vec<Val>, InterpError> {
        let base = ptr.as_ptr().map_err(|_| {
            ErrorKind::InvalidArgument(format!("read from {}, not a pointer", ptr.kind_name()))
        })?;
        let elem = checked_size(ty)
            .ok_or_else(|| ErrorKind::InvalidArgument(format!("type {ty} is too large")))?;
        let mut out = Vec::with_capacity(count.min(1 << 16));
        for i in 0..count as u64 {
            let addr = i
                .checked_mul(elem)
                .and_then(|o| base.checked_add(o))
                .ok_or_else(|| ErrorKind::InvalidArgument("read past the address space".into()))?;
            out.push(self.mem.load(addr, ty, Access::read("read"))?);
        }
        Ok(out)
    }

    /// What `printf`, `puts`, `putchar` (and writes to `stdout`) produced so far.
    pub fn output(&self) -> &str {
        &self.output
    }

    /// What was written to `stderr` so far.
    pub fn error_output(&self) -> &str {
        &self.error_output
    }

    /// The address `call_indirect` resolves to `func`.
    pub fn function_address(&self, func: FuncId) -> Val {
        Val::Ptr(function_address(func))
    }

    /// The address of a global.
    pub fn global_address(&self, global: GlobalId) -> Option<Val> {
        self.module.globals.get(global).map(|_| Val::Ptr(self.global_addrs[global]))
    }

    pub(crate) fn symbol_address(&self, symbol: &Symbol) -> R<u64> {
        match symbol {
            Symbol::Global(g) if self.module.globals.is_valid(*g) => Ok(self.global_addrs[*g]),
            Symbol::Func(f) if self.module.functions.is_valid(*f) => Ok(function_address(*f)),
            other => Err(ErrorKind::Malformed(format!("reference to unknown symbol {other:?}"))),
        }
    }

    /// The function at a function address.
    pub(crate) fn function_at(&self, addr: u64) -> R<FuncId> {
        let not = || ErrorKind::NotAFunction { addr };
        let offset = addr.checked_sub(FUNC_BASE).ok_or_else(not)?;
        if offset % FUNC_STRIDE != 0 {
            return Err(not());
        }
        let index = usize::try_from(offset / FUNC_STRIDE).map_err(|_| not())?;
        if index >= self.module.functions.len() {
            return Err(not());
        }
        Ok(FuncId::from_u32(index as u32))
    }
}

fn function_address(func: FuncId) -> u64 {
    FUNC_BASE + FUNC_STRIDE * u64::from(func.as_u32())
}

fn global_error(name: &str, e: ErrorKind) -> ErrorKind {
    match e {
        ErrorKind::Malformed(m) => ErrorKind::Malformed(format!("initializer of @{name}: {m}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::FunctionBuilder;
    use crate::entities::Value;
    use crate::function::{Function, Signature};
    use crate::instructions::*;
    use crate::module::Global;
    use crate::Linkage;

    /// Adds a function built by `body` (which receives the parameters) to `m`.
    fn define(
        m: &mut Module,
        name: &str,
        params: Vec<Type>,
        ret: Option<Type>,
        body: impl FnOnce(&mut FunctionBuilder, &[Value]),
    ) -> FuncId {
        let sig = Signature::new(params, ret);
        let own = m.functions.next_key();
        let mut sigs: Vec<(FuncId, Signature)> =
            m.functions.iter().map(|(id, f)| (id, f.signature.clone())).collect();
        sigs.push((own, sig.clone()));
        let callees = move |f: FuncId| sigs.iter().find(|(id, _)| *id == f).map(|(_, s)| s.clone());
        let mut func = Function::new(name, sig);
        let mut b = FunctionBuilder::new(&mut func, &callees);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let params = b.func.params().to_vec();
        body(&mut b, &params);
        m.add_function(func)
    }

    fn declare(m: &mut Module, name: &str, params: Vec<Type>, ret: Option<Type>) -> FuncId {
        m.add_function(Function::new(name, Signature::new(params, ret)))
    }

    fn err_of(r: Result<Option<Val>, InterpError>) -> InterpError {
        r.expect_err("expected an error")
    }

    #[test]
    fn sum_of_sines_matches_native() {
        let m = crate::examples::sum_of_sines();
        let sum = m.function_by_name("sum").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let xs = [0.5, 1.0, -2.0];
        let vals: Vec<Val> = xs.iter().map(|x| Val::F64(*x)).collect();
        let p = interp.alloc(&Type::F64, &vals).unwrap();
        let r = interp.call(sum, &[p, Val::Int(3)]).unwrap();
        let expected = xs.iter().fold(0.0, |acc, x: &f64| acc + x.sin());
        assert_eq!(r, Some(Val::F64(expected)));
    }

    /// `swap(a, b, n)`: n times (a, b) <- (b, a) through block arguments, returns a - b.
    fn swap_module() -> (Module, FuncId) {
        let mut m = Module::new();
        let f = define(
            &mut m,
            "swap",
            vec![Type::I32, Type::I32, Type::I32],
            Some(Type::I32),
            |b, p| {
                let head = b.create_block();
                let a = b.append_block_param(head, Type::I32);
                let c = b.append_block_param(head, Type::I32);
                let n = b.append_block_param(head, Type::I32);
                let body = b.create_block();
                let exit = b.create_block();
                b.jump(head, vec![p[0], p[1], p[2]]);
                b.switch_to_block(head);
                let zero = b.iconst(Type::I32, 0);
                let more = b.icmp(IntCC::Sgt, n, zero);
                b.brif(more, BlockCall::new(body, vec![]), BlockCall::new(exit, vec![]));
                b.switch_to_block(body);
                let one = b.iconst(Type::I32, 1);
                let n2 = b.binary(BinaryOp::Sub, n, one);
                b.jump(head, vec![c, a, n2]);
                b.switch_to_block(exit);
                let d = b.binary(BinaryOp::Sub, a, c);
                b.ret(Some(d));
            },
        );
        (m, f)
    }

    #[test]
    fn block_arguments_are_a_parallel_copy() {
        let (m, f) = swap_module();
        let mut interp = Interpreter::new(&m).unwrap();
        assert_eq!(
            interp.call(f, &[Val::Int(10), Val::Int(3), Val::Int(1)]).unwrap(),
            Some(Val::Int(0xffff_fff9))
        );
        assert_eq!(
            interp.call(f, &[Val::Int(10), Val::Int(3), Val::Int(2)]).unwrap(),
            Some(Val::Int(7))
        );
    }

    #[test]
    fn fuel_runs_out() {
        let (m, f) = swap_module();
        let mut interp = Interpreter::new(&m).unwrap();
        interp.set_fuel(1000);
        let e = err_of(interp.call(f, &[Val::Int(1), Val::Int(2), Val::Int(1_000_000)]));
        assert_eq!(e.to_string(), "ran out of fuel after 1000 instructions in @swap");
        // The interpreter stays usable.
        assert_eq!(
            interp.call(f, &[Val::Int(1), Val::Int(2), Val::Int(2)]).unwrap(),
            Some(Val::Int(0xffff_ffff))
        );
    }

    fn factorial_module() -> (Module, FuncId) {
        let mut m = Module::new();
        let own = m.functions.next_key();
        let f = define(&mut m, "fact", vec![Type::I64], Some(Type::I64), |b, p| {
            let rec = b.create_block();
            let base = b.create_block();
            let one = b.iconst(Type::I64, 1);
            let small = b.icmp(IntCC::Sle, p[0], one);
            b.brif(small, BlockCall::new(base, vec![]), BlockCall::new(rec, vec![]));
            b.switch_to_block(base);
            b.ret(Some(one));
            b.switch_to_block(rec);
            let n1 = b.binary(BinaryOp::Sub, p[0], one);
            let r = b.call(own, vec![n1]).1.unwrap();
            let prod = b.binary(BinaryOp::Mul, p[0], r);
            b.ret(Some(prod));
        });
        (m, f)
    }

    #[test]
    fn recursion_and_depth_limit() {
        let (m, f) = factorial_module();
        let mut interp = Interpreter::new(&m).unwrap();
        assert_eq!(
            interp.call(f, &[Val::Int(20)]).unwrap(),
            Some(Val::Int(2_432_902_008_176_640_000))
        );
        // 21! wraps at 64 bits.
        let wrapped = (1..=21u64).fold(1u64, |a, b| a.wrapping_mul(b));
        assert_eq!(interp.call(f, &[Val::Int(21)]).unwrap(), Some(Val::Int(u128::from(wrapped))));
        interp.set_max_call_depth(50);
        let e = err_of(interp.call(f, &[Val::Int(100)]));
        assert!(e.to_string().contains("call depth limit of 50"), "{e}");
        assert_eq!(e.call_stack().len(), 50);
        let d = e.to_diagnostic();
        assert!(d.notes.iter().any(|n| n.contains("more")), "{d}");
    }

    #[test]
    fn division_by_zero_is_located() {
        let mut m = Module::new();
        let f = define(&mut m, "div", vec![Type::I32, Type::I32], Some(Type::I32), |b, p| {
            let q = b.binary(BinaryOp::Sdiv, p[0], p[1]);
            b.ret(Some(q));
        });
        let mut interp = Interpreter::new(&m).unwrap();
        assert_eq!(
            interp.call(f, &[Val::Int(7), Val::Int(0xffff_fffe)]).unwrap(),
            Some(Val::Int(0xffff_fffd))
        );
        let e = err_of(interp.call(f, &[Val::Int(7), Val::Int(0)]));
        assert_eq!(e.to_string(), "division by zero");
        let loc = e.location().unwrap();
        assert_eq!(loc.function, "div");
        assert_eq!(loc.inst, "%v2 = sdiv i32 %v0, %v1");
        let d = e.to_diagnostic();
        assert_eq!(d.message, "division by zero");
        assert_eq!(
            d.notes,
            vec!["in function @div, block ^bb0: `%v2 = sdiv i32 %v0, %v1`".to_string()]
        );
        let e = err_of(interp.call(f, &[Val::Int(0x8000_0000), Val::Int(0xffff_ffff)]));
        assert!(e.to_string().contains("INT_MIN"), "{e}");
    }

    #[test]
    fn stack_memory_errors() {
        let mut m = Module::new();
        // Returns the address of its own alloca.
        let escape = define(&mut m, "escape", vec![], Some(Type::PTR), |b, _| {
            let p = b.alloca(Type::I32, None, 4);
            let v = b.iconst(Type::I32, 5);
            b.store(v, p, 4);
            b.ret(Some(p));
        });
        let dead = define(&mut m, "dead", vec![], Some(Type::I32), |b, _| {
            let p = b.call(escape, vec![]).1.unwrap();
            let v = b.load(Type::I32, p, 4);
            b.ret(Some(v));
        });
        let oob = define(&mut m, "oob", vec![Type::I64], Some(Type::I32), |b, p| {
            let a = b.alloca(Type::I32, None, 4);
            let v = b.iconst(Type::I32, 5);
            let q = b.ptradd(a, p[0]);
            b.store(v, q, 4);
            let r = b.load(Type::I32, a, 4);
            b.ret(Some(r));
        });
        let uninit = define(&mut m, "uninit", vec![], Some(Type::I64), |b, _| {
            let a = b.alloca(Type::I64, None, 8);
            let v = b.iconst(Type::I32, 5);
            b.store(v, a, 4);
            let r = b.load(Type::I64, a, 8);
            b.ret(Some(r));
        });
        let mut interp = Interpreter::new(&m).unwrap();
        let e = err_of(interp.call(dead, &[]));
        assert!(e.to_string().contains("dead stack memory"), "{e}");
        assert!(e.to_string().contains("@escape"), "{e}");
        assert_eq!(interp.call(oob, &[Val::Int(0)]).unwrap(), Some(Val::Int(5)));
        let e = err_of(interp.call(oob, &[Val::Int(2)]));
        assert!(e.to_string().starts_with("out of bounds store of 4 bytes"), "{e}");
        assert!(e.to_string().contains("offset 2 in the 4-byte alloca in @oob"), "{e}");
        let e = err_of(interp.call(oob, &[Val::Int(u128::from(u64::MAX))]));
        assert!(e.to_string().contains("1 bytes before"), "{e}");
        let e = err_of(interp.call(uninit, &[]));
        assert!(e.to_string().starts_with("read of uninitialized memory: load of 8 bytes"), "{e}");
        // Under a fill pattern the four never-written bytes read as the pattern.
        interp.set_uninit_reads(UninitReads::Fill(0xa5));
        assert_eq!(interp.call(uninit, &[]).unwrap(), Some(Val::Int(0xa5a5_a5a5_0000_0005)));
        interp.set_uninit_reads(UninitReads::Error);
        assert!(interp.call(uninit, &[]).is_err());
    }

    #[test]
    fn heap_functions() {
        let mut m = Module::new();
        let malloc = declare(&mut m, "malloc", vec![Type::I64], Some(Type::PTR));
        let realloc = declare(&mut m, "realloc", vec![Type::PTR, Type::I64], Some(Type::PTR));
        let free = declare(&mut m, "free", vec![Type::PTR], None);
        // grow(): malloc 8, store 42, realloc to 64, free, return loaded value.
        let grow = define(&mut m, "grow", vec![Type::I1], Some(Type::I64), |b, p| {
            let eight = b.iconst(Type::I64, 8);
            let q = b.call(malloc, vec![eight]).1.unwrap();
            let v = b.iconst(Type::I64, 42);
            b.store(v, q, 8);
            let big = b.iconst(Type::I64, 64);
            let q2 = b.call(realloc, vec![q, big]).1.unwrap();
            let r = b.load(Type::I64, q2, 8);
            b.call(free, vec![q2]);
            let then = b.create_block();
            let done = b.create_block();
            b.brif(p[0], BlockCall::new(then, vec![]), BlockCall::new(done, vec![]));
            b.switch_to_block(then);
            // Use after free of the old and the new block.
            let r2 = b.load(Type::I64, q, 8);
            b.ret(Some(r2));
            b.switch_to_block(done);
            b.ret(Some(r));
        });
        let twice = define(&mut m, "twice", vec![], None, |b, _| {
            let eight = b.iconst(Type::I64, 8);
            let q = b.call(malloc, vec![eight]).1.unwrap();
            b.call(free, vec![q]);
            b.call(free, vec![q]);
            b.ret(None);
        });
        let mut interp = Interpreter::new(&m).unwrap();
        assert_eq!(interp.call(grow, &[Val::Int(0)]).unwrap(), Some(Val::Int(42)));
        let e = err_of(interp.call(grow, &[Val::Int(1)]));
        assert!(e.to_string().starts_with("use after free"), "{e}");
        let e = err_of(interp.call(twice, &[]));
        assert!(e.to_string().starts_with("double free"), "{e}");
        // free of something that is not a heap block.
        let p = interp.global_address(GlobalId::from_u32(0));
        assert!(p.is_none());
        let e = err_of(interp.call(free, &[Val::Ptr(0x1234)]));
        assert!(e.to_string().contains("invalid free"), "{e}");
    }

    #[test]
    fn globals_relocations_and_function_pointers() {
        let mut m = Module::new();
        let data = m.add_global(Global {
            name: "data".into(),
            ty: Type::array(Type::I32, 3),
            linkage: Linkage::Internal,
            constant: true,
            align: 4,
            addr_space: 0,
            init: Some(Constant::Elements(vec![
                Constant::Int(1),
                Constant::Int(2),
                Constant::Int(3),
            ])),
        });
        let target = define(&mut m, "target", vec![Type::I32], Some(Type::I32), |b, p| {
            let two = b.iconst(Type::I32, 2);
            let r = b.binary(BinaryOp::Mul, p[0], two);
            b.ret(Some(r));
        });
        let table = m.add_global(Global {
            name: "table".into(),
            ty: Type::structure(vec![Type::PTR, Type::PTR], false),
            linkage: Linkage::Internal,
            constant: false,
            align: 8,
            addr_space: 0,
            init: Some(Constant::Elements(vec![
                Constant::Address { symbol: Symbol::Global(data), offset: 8 },
                Constant::Address { symbol: Symbol::Func(target), offset: 0 },
            ])),
        });
        let sig = Signature::new(vec![Type::I32], Some(Type::I32));
        let run = define(&mut m, "run", vec![Type::PTR], Some(Type::I32), |b, p| {
            let t = b.constant(
                Type::PTR,
                Constant::Address { symbol: Symbol::Global(table), offset: 0 },
            );
            let elem = b.load(Type::PTR, t, 8);
            let v = b.load(Type::I32, elem, 4);
            let r = b
                .ins(InstructionData::CallIndirect {
                    sig: Box::new(sig.clone()),
                    callee: p[0],
                    args: vec![v],
                    attrs: FuncAttrs::empty(),
                })
                .1
                .unwrap();
            b.ret(Some(r));
        });
        let poke = define(&mut m, "poke", vec![], None, |b, _| {
            let d = b
                .constant(Type::PTR, Constant::Address { symbol: Symbol::Global(data), offset: 0 });
            let v = b.iconst(Type::I32, 9);
            b.store(v, d, 4);
            b.ret(None);
        });
        let mut interp = Interpreter::new(&m).unwrap();
        let fp = interp.function_address(target);
        assert_eq!(interp.call(run, &[fp]).unwrap(), Some(Val::Int(6)));
        let e = err_of(interp.call(run, &[Val::Ptr(0x40)]));
        assert!(e.to_string().contains("not a function address"), "{e}");
        let e = err_of(interp.call(run, &[interp.function_address(run)]));
        assert!(e.to_string().contains("signature mismatch"), "{e}");
        let e = err_of(interp.call(poke, &[]));
        assert_eq!(e.to_string(), "write to constant global @data");
        let base = interp.global_address(data).unwrap();
        assert_eq!(
            interp.read(&base, &Type::I32, 3).unwrap(),
            vec![Val::Int(1), Val::Int(2), Val::Int(3)]
        );
    }

    #[test]
    fn printf_and_unknown_externals() {
        let mut m = Module::new();
        let fmt = m.add_global(Global {
            name: "fmt".into(),
            ty: Type::array(Type::I8, 21),
            linkage: Linkage::Private,
            constant: true,
            align: 1,
            addr_space: 0,
            init: Some(Constant::Bytes(b"%d %5.2f %s|%c%%\n\0hi\0".to_vec())),
        });
        let printf = m.add_function(Function {
            signature: Signature { params: vec![Type::PTR], ret: Some(Type::I32), varargs: true },
            ..Function::new("printf", Signature::default())
        });
        let mystery = declare(&mut m, "mystery", vec![], None);
        let hello = define(&mut m, "hello", vec![], Some(Type::I32), |b, _| {
            let f =
                b.constant(Type::PTR, Constant::Address { symbol: Symbol::Global(fmt), offset: 0 });
            let n = b.iconst(Type::I32, -3);
            let x = b.f64const(1.23456);
            let s = b
                .constant(Type::PTR, Constant::Address { symbol: Symbol::Global(fmt), offset: 18 });
            let c = b.iconst(Type::I32, 65);
            let r = b.call(printf, vec![f, n, x, s, c]).1.unwrap();
            b.ret(Some(r));
        });
        let mut interp = Interpreter::new(&m).unwrap();
        assert_eq!(interp.call(hello, &[]).unwrap(), Some(Val::Int(15)));
        assert_eq!(interp.output(), "-3  1.23 hi|A%\n");
        let e = err_of(interp.call(mystery, &[]));
        assert_eq!(e.to_string(), "call to unknown external function @mystery");
    }

    #[test]
    fn api_alloc_read_and_argument_checks() {
        let (m, f) = swap_module();
        let mut interp = Interpreter::new(&m).unwrap();
        let s = Type::structure(vec![Type::I8, Type::F64], false);
        let vals = vec![
            Val::Aggregate(vec![Val::Int(1), Val::F64(0.5)]),
            Val::Aggregate(vec![Val::Int(0x1ff), Val::F64(-1.0)]),
        ];
        let p = interp.alloc(&s, &vals).unwrap();
        let back = interp.read(&p, &s, 2).unwrap();
        assert_eq!(back[1], Val::Aggregate(vec![Val::Int(0xff), Val::F64(-1.0)]));
        assert!(interp.read(&p, &s, 3).unwrap_err().to_string().contains("out of bounds"));
        assert!(interp.read(&p, &Type::I64, 1).unwrap_err().to_string().contains("uninitialized"));
        assert!(interp.alloc(&Type::F64, &[Val::Int(1)]).is_err());
        assert!(interp.call(f, &[Val::Int(1)]).is_err());
        assert!(interp.call(f, &[Val::F64(1.0), Val::Int(1), Val::Int(1)]).is_err());
        let (z1, z2) =
            (interp.alloc(&Type::I32, &[]).unwrap(), interp.alloc(&Type::I32, &[]).unwrap());
        assert_ne!(z1, z2);
        assert!(interp.read(&z1, &Type::I32, 1).is_err());
    }

    #[test]
    fn diagnostics_point_at_the_parsed_instruction() {
        let text = "func @f(%a: i32) -> i32 {\n^entry:\n  %z = const i32 0\n  %r = sdiv i32 %a, %z\n  ret %r\n}\n\nfunc @g(%a: i32) -> i32 {\n^entry:\n  %r = call @f(%a)\n  ret %r\n}\n";
        let m = crate::text::parse_module(text).unwrap();
        let g = m.function_by_name("g").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let e = interp.call(g, &[Val::Int(1)]).unwrap_err();
        let d = e.to_diagnostic();
        let span = d.span.expect("parsed instructions have spans");
        assert_eq!(&text[span.range()], "%r = sdiv i32 %a, %z");
        assert_eq!(
            d.notes,
            vec![
                "in function @f, block ^entry: `%r = sdiv i32 %a, %z`".to_string(),
                "call stack: @g -> @f".to_string()
            ]
        );
        let rendered = d.render("t.adir", text);
        assert!(rendered.contains("t.adir:4:3"), "{rendered}");
        assert!(rendered.contains("division by zero"), "{rendered}");
    }
}
