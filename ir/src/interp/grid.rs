//! A simulated CUDA grid: [`Interpreter::launch`] runs a kernel over `grid × block`
//! threads on the interpreter's one memory, so kernels and their gradients can be checked
//! without a GPU.
//!
//! - Blocks run one after the other; the threads of a block run phase by phase: each
//!   thread runs until its next barrier (`llvm.nvvm.barrier0`, `llvm.nvvm.barrier.sync*`)
//!   or its end, then the next thread (x fastest, then y, then z). A phase in which some
//!   threads stop at a barrier and others exit is a divergent barrier: an error.
//! - The special registers (`llvm.nvvm.read.ptx.sreg.{tid,ntid,ctaid,nctaid}.{x,y,z}`,
//!   `warpsize`, `laneid`, `warpid`, `nwarpid`) answer per thread; memory barriers are
//!   no-ops (threads never run concurrently). Any other `llvm.nvvm.*` call is reported as
//!   unsupported.
//! - Shared-memory globals (address space 3) get a fresh, uninitialized copy per block,
//!   as on a device; every other address space is the interpreter's one flat memory (an
//!   `addrspacecast` keeps the address). Atomics execute in program order of the
//!   simulation, which is one of the orders a device may produce.
//! - Fuel limits the instructions of one thread in one phase.

use crate::entities::{FuncId, GlobalId};

use super::eval::Exit;
use super::memory::{checked_size, AllocKind};
use super::value::Val;
use super::{ErrorKind, InterpError, Interpreter, R};

/// Threads per block or blocks per grid, in up to three dimensions (CUDA's `dim3`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// A one-dimensional extent.
    pub const fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    /// The `index`-th point, x fastest.
    fn point(self, index: u64) -> Dim3 {
        let (x, y) = (u64::from(self.x), u64::from(self.y));
        Dim3 { x: (index % x) as u32, y: (index / x % y) as u32, z: (index / (x * y)) as u32 }
    }
}

/// The ids one simulated thread sees.
#[derive(Copy, Clone, Debug)]
pub(crate) struct ThreadContext {
    tid: Dim3,
    ntid: Dim3,
    ctaid: Dim3,
    nctaid: Dim3,
}

impl ThreadContext {
    fn linear_tid(&self) -> u64 {
        u64::from(self.tid.x)
            + u64::from(self.ntid.x)
                * (u64::from(self.tid.y) + u64::from(self.ntid.y) * u64::from(self.tid.z))
    }
}

/// What a GPU intrinsic call does.
pub(crate) enum Intrinsic {
    Value(Option<Val>),
    Barrier,
}

/// Threads per block a device accepts (CUDA's limit on every current architecture).
const MAX_THREADS_PER_BLOCK: u64 = 1024;

fn axis(value: Dim3, name: &str) -> Option<u32> {
    match name {
        "x" => Some(value.x),
        "y" => Some(value.y),
        "z" => Some(value.z),
        _ => None,
    }
}

impl<'m> Interpreter<'m> {
    /// Runs `kernel` (a function returning nothing) on `grid` blocks of `block` threads
    /// each, all with the same `args`. Returns when every thread has finished; results are
    /// in memory (read them with [`Interpreter::read`]).
    pub fn launch(
        &mut self,
        kernel: FuncId,
        grid: Dim3,
        block: Dim3,
        args: &[Val],
    ) -> Result<(), InterpError> {
        let module = self.module;
        let f = module.functions.get(kernel).ok_or_else(|| {
            ErrorKind::InvalidArgument(format!("function {kernel} is not in the module"))
        })?;
        if f.is_declaration() || f.signature.varargs || f.signature.ret.is_some() {
            return Err(ErrorKind::InvalidArgument(format!(
                "@{} cannot be launched: a kernel is a defined function returning void",
                f.name
            ))
            .into());
        }
        if grid.count() == 0 || block.count() == 0 || block.count() > MAX_THREADS_PER_BLOCK {
            return Err(ErrorKind::InvalidArgument(format!(
                "launch of @{} with grid {grid:?} and block {block:?}: every extent must be \
                 at least 1 and a block at most {MAX_THREADS_PER_BLOCK} threads",
                f.name
            ))
            .into());
        }
        let args = self.convert_args(f, args)?;
        let shared: Vec<GlobalId> = module
            .globals
            .iter()
            .filter(|(_, g)| g.addr_space == 3)
            .map(|(id, _)| id)
            .collect();
        let saved: Vec<u64> = shared.iter().map(|g| self.global_addrs[*g]).collect();
        let result = (0..grid.count()).try_for_each(|b| {
            self.run_block(kernel, &args, &shared, grid, grid.point(b), block)
        });
        for (g, addr) in shared.iter().zip(saved) {
            self.global_addrs[*g] = addr;
        }
        self.gpu = None;
        result
    }

    /// Runs the threads of one block phase by phase.
    fn run_block(
        &mut self,
        kernel: FuncId,
        args: &[Val],
        shared: &[GlobalId],
        grid: Dim3,
        ctaid: Dim3,
        block: Dim3,
    ) -> Result<(), InterpError> {
        for g in shared {
            let global = &self.module.globals[*g];
            let size = checked_size(&global.ty).ok_or_else(|| {
                ErrorKind::Unsupported(format!("shared array @{} is too large", global.name))
            })?;
            let align = u64::from(global.align).max(global.ty.align());
            let name = format!("{} (block {},{},{})", global.name, ctaid.x, ctaid.y, ctaid.z);
            self.global_addrs[*g] =
                self.mem.allocate(size, align, AllocKind::Global { name, constant: false }, false)?;
        }
        let contexts: Vec<ThreadContext> = (0..block.count())
            .map(|t| ThreadContext { tid: block.point(t), ntid: block, ctaid, nctaid: grid })
            .collect();
        let mut stacks = Vec::with_capacity(contexts.len());
        for ctx in &contexts {
            let mut stack = Vec::new();
            self.gpu = Some(*ctx);
            self.push_frame(&mut stack, kernel, args.to_vec(), None)?;
            stacks.push(Some(stack));
        }
        let result = self.run_phases(&contexts, &mut stacks);
        for stack in stacks.into_iter().flatten() {
            self.kill_frames(stack);
        }
        result
    }

    fn run_phases(
        &mut self,
        contexts: &[ThreadContext],
        stacks: &mut [Option<Vec<super::eval::Frame<'m>>>],
    ) -> Result<(), InterpError> {
        let mut phase = 0u64;
        loop {
            let (mut waiting, mut exited) = (None, 0usize);
            for (t, slot) in stacks.iter_mut().enumerate() {
                let Some(stack) = slot.as_mut() else {
                    exited += 1;
                    continue;
                };
                self.gpu = Some(contexts[t]);
                match self.run_loop(stack)? {
                    Exit::Barrier => {
                        waiting.get_or_insert(t);
                    }
                    Exit::Return(_) => {
                        exited += 1;
                        if let Some(done) = slot.take() {
                            self.kill_frames(done);
                        }
                    }
                }
            }
            let Some(first) = waiting else { return Ok(()) };
            if exited > 0 {
                let ctx = contexts[first];
                let kind = ErrorKind::DivergentBarrier {
                    block: (ctx.ctaid.x, ctx.ctaid.y, ctx.ctaid.z),
                    thread: (ctx.tid.x, ctx.tid.y, ctx.tid.z),
                    phase,
                    exited,
                    total: contexts.len(),
                };
                let stack = stacks[first].as_deref().unwrap_or_default();
                let barrier = stack.last().and_then(|f| f.previous_inst());
                return Err(self.locate(kind, stack, barrier));
            }
            phase += 1;
        }
    }

    /// Answers a call to an `llvm.nvvm.*` declaration while a kernel runs; `None` for
    /// every other call (and for every call outside a launch, where such intrinsics are
    /// unknown externals).
    pub(crate) fn gpu_intrinsic(&mut self, name: &str, args: &[Val]) -> R<Option<Intrinsic>> {
        let (Some(ctx), Some(rest)) = (self.gpu, name.strip_prefix("llvm.nvvm.")) else {
            return Ok(None);
        };
        let int = |v: u64| Ok(Some(Intrinsic::Value(Some(Val::Int(u128::from(v))))));
        if let Some(reg) = rest.strip_prefix("read.ptx.sreg.") {
            let (base, dim) = reg.rsplit_once('.').unwrap_or((reg, ""));
            let value = match base {
                "tid" => axis(ctx.tid, dim),
                "ntid" => axis(ctx.ntid, dim),
                "ctaid" => axis(ctx.ctaid, dim),
                "nctaid" => axis(ctx.nctaid, dim),
                _ => None,
            };
            if let Some(v) = value {
                return int(u64::from(v));
            }
            return match reg {
                "warpsize" => int(32),
                "laneid" => int(ctx.linear_tid() % 32),
                "warpid" => int(ctx.linear_tid() / 32),
                "nwarpid" => int(ctx.ntid.count().div_ceil(32)),
                _ => Err(unsupported(name)),
            };
        }
        match rest {
            "barrier0" | "barrier.sync" | "bar.sync" | "barrier.cta.sync.aligned.all" => {
                if rest != "barrier0" && args.first().is_some_and(|a| a.as_int().ok() != Some(0)) {
                    return Err(ErrorKind::Unsupported(format!(
                        "@{name} with a barrier id other than 0"
                    )));
                }
                Ok(Some(Intrinsic::Barrier))
            }
            "membar.cta" | "membar.gl" | "membar.sys" => Ok(Some(Intrinsic::Value(None))),
            _ => Err(unsupported(name)),
        }
    }
}

fn unsupported(name: &str) -> ErrorKind {
    ErrorKind::Unsupported(format!("GPU intrinsic @{name} in the simulated grid"))
}
