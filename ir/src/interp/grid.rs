//! A simulated CUDA grid: [`Interpreter::launch`] runs a kernel over `grid × block`
//! threads on the interpreter's one memory, so kernels and their gradients can be checked
//! without a GPU.
//!
//! - Blocks run one after the other; the threads of a block run phase by phase between
//!   barriers (`llvm.nvvm.barrier0`, `llvm.nvvm.barrier.sync*`). Within a phase they
//!   interleave ([`Schedule::Interleaved`], the default): round robin (x fastest, then y,
//!   then z), each thread running up to and including its next memory access per turn, so
//!   that a non-atomic `+=` on memory several threads update loses updates, as on a
//!   device; [`Schedule::Sequential`] runs each thread to its barrier in turn. A phase in
//!   which some threads stop at a barrier and others exit is a divergent barrier: an
//!   error.
//! - The special registers (`llvm.nvvm.read.ptx.sreg.{tid,ntid,ctaid,nctaid}.{x,y,z}`,
//!   `warpsize`, `laneid`, `warpid`, `nwarpid`) answer per thread; memory barriers are
//!   no-ops (threads never run concurrently). Other `llvm.nvvm.*` calls (the math helpers
//!   of libdevice) are ordinary external calls; an unknown special register is an error.
//! - Shared-memory globals (address space 3) get a fresh, uninitialized copy per block,
//!   as on a device; every other address space is the interpreter's one flat memory (an
//!   `addrspacecast` keeps the address). An atomic is one indivisible step of the
//!   schedule, which is one of the orders a device may produce.
//! - Fuel limits the instructions of one thread in one phase.

use crate::entities::{FuncId, GlobalId};
use crate::nvvm::{memory_barrier, Axis, Barrier, SpecialRegister, WarpOp};

use super::eval::{Exit, Turns};
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

/// The order in which a launch runs the threads of a block between two barriers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Round robin: each thread runs up to and including its next memory access, then
    /// the next thread takes its turn. A read-modify-write of memory other threads touch
    /// that is not atomic then loses updates, as it may on a device.
    #[default]
    Interleaved,
    /// Each thread runs to its next barrier (or its end) before the next one starts: no
    /// race shows.
    Sequential,
}

/// What a GPU intrinsic call does.
pub(crate) enum Intrinsic {
    Value(Option<Val>),
    Barrier,
}

/// Threads per block a device accepts (CUDA's limit on every current architecture).
const MAX_THREADS_PER_BLOCK: u64 = 1024;

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
        let shared: Vec<GlobalId> =
            module.globals.iter().filter(|(_, g)| g.addr_space == 3).map(|(id, _)| id).collect();
        let saved: Vec<u64> = shared.iter().map(|g| self.global_addrs[*g]).collect();
        let result = (0..grid.count())
            .try_for_each(|b| self.run_block(kernel, &args, &shared, grid, grid.point(b), block));
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
            self.global_addrs[*g] = self.mem.allocate(
                size,
                align,
                AllocKind::Global { name, constant: false },
                false,
            )?;
        }
        let contexts: Vec<ThreadContext> = (0..block.count())
            .map(|t| ThreadContext { tid: block.point(t), ntid: block, ctaid, nctaid: grid })
            .collect();
        let mut stacks = Vec::with_capacity(contexts.len());
        for ctx in &contexts {
            let mut stack = Vec::new();
            self.gpu = Some(*ctx);
            self.push_frame(&mut stack, kernel, args.to_vec(), None, None)?;
            stacks.push(Some(stack));
        }
        let result = self.run_phases(&contexts, &mut stacks);
        for stack in stacks.into_iter().flatten() {
            self.kill_frames(stack);
        }
        // A block's shared memory ends with the block (big grids would otherwise run
        // into the interpreter's memory limit); later accesses report dead memory.
        for g in shared {
            self.mem.kill_stack(self.global_addrs[*g]);
        }
        result
    }

    fn run_phases(
        &mut self,
        contexts: &[ThreadContext],
        stacks: &mut [Option<Vec<super::eval::Frame<'m>>>],
    ) -> Result<(), InterpError> {
        let yield_after_memory = self.schedule == Schedule::Interleaved;
        let mut phase = 0u64;
        loop {
            let (mut waiting, mut exited) = (None, 0usize);
            let mut turns: Vec<Turns> =
                (0..stacks.len()).map(|_| Turns { executed: 0, yield_after_memory }).collect();
            // Threads still running in this phase, in turn order.
            let mut runnable: Vec<usize> =
                (0..stacks.len()).filter(|t| stacks[*t].is_some()).collect();
            exited += stacks.len() - runnable.len();
            while !runnable.is_empty() {
                let mut still = Vec::with_capacity(runnable.len());
                for t in runnable {
                    let Some(stack) = stacks[t].as_mut() else { continue };
                    self.gpu = Some(contexts[t]);
                    match self.run_turn(stack, &mut turns[t])? {
                        Exit::Yield => still.push(t),
                        Exit::Barrier => {
                            waiting.get_or_insert(t);
                        }
                        Exit::Return(_) => {
                            exited += 1;
                            if let Some(done) = stacks[t].take() {
                                self.kill_frames(done);
                            }
                        }
                    }
                }
                runnable = still;
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

    /// Chooses how later launches order the threads of a block.
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    /// Answers a call to an `llvm.nvvm.*` declaration while a kernel runs; `None` for
    /// every other call (and for every call outside a launch, where such intrinsics are
    /// unknown externals).
    pub(crate) fn gpu_intrinsic(&mut self, name: &str, args: &[Val]) -> R<Option<Intrinsic>> {
        let (Some(ctx), Some(rest)) = (self.gpu, name.strip_prefix("llvm.nvvm.")) else {
            return Ok(None);
        };
        let int = |v: u64| Ok(Some(Intrinsic::Value(Some(Val::Int(u128::from(v))))));
        if let Some(reg) = SpecialRegister::from_intrinsic(name) {
            let along = |d: Dim3, axis: Axis| match axis {
                Axis::X => d.x,
                Axis::Y => d.y,
                Axis::Z => d.z,
            };
            return match reg {
                SpecialRegister::Tid(a) => int(u64::from(along(ctx.tid, a))),
                SpecialRegister::Ntid(a) => int(u64::from(along(ctx.ntid, a))),
                SpecialRegister::Ctaid(a) => int(u64::from(along(ctx.ctaid, a))),
                SpecialRegister::Nctaid(a) => int(u64::from(along(ctx.nctaid, a))),
                SpecialRegister::WarpSize => int(32),
                SpecialRegister::LaneId => int(ctx.linear_tid() % 32),
                SpecialRegister::WarpId => int(ctx.linear_tid() / 32),
                SpecialRegister::NWarpId => int(ctx.ntid.count().div_ceil(32)),
                SpecialRegister::SmId => Err(unsupported(name)),
            };
        }
        if rest.starts_with("read.ptx.sreg.") {
            return Err(unsupported(name));
        }
        if let Some(barrier) = Barrier::from_intrinsic(name) {
            if barrier == Barrier::WithId
                && args.first().is_some_and(|a| a.as_int().ok() != Some(0))
            {
                return Err(ErrorKind::Unsupported(format!(
                    "@{name} with a barrier id other than 0"
                )));
            }
            return Ok(Some(Intrinsic::Barrier));
        }
        if memory_barrier(name).is_some() {
            return Ok(Some(Intrinsic::Value(None)));
        }
        if let Some(op) = WarpOp::from_intrinsic(name) {
            return warp_op(op, ctx.linear_tid() % 32, name, args).map(Some);
        }
        // The math helpers of linked libdevice bodies (`d2i.hi`, `rcp.approx.d`...) are
        // ordinary external calls; what nothing models is reported there.
        Ok(None)
    }
}

/// A warp operation in a simulated grid, which runs the lanes of a warp one at a time:
/// `activemask` reports the calling lane alone (one of the answers a device may give, as
/// lanes need not run together), so a shuffle or vote over that mask reads the lane's own
/// value. Masks naming other lanes would need them to run together: an error.
fn warp_op(op: WarpOp, lane: u64, name: &str, args: &[Val]) -> R<Intrinsic> {
    let own = 1u128 << lane;
    if op == WarpOp::ActiveMask {
        return Ok(Intrinsic::Value(Some(Val::Int(own))));
    }
    let mask = args.first().and_then(|m| m.as_int().ok()).map(|m| m & 0xffff_ffff);
    if mask != Some(own) {
        return Err(ErrorKind::Unsupported(format!(
            "@{name} over lanes {mask:#x?} in the simulated grid, which runs the lanes of a \
             warp one at a time (its activemask is the calling lane's bit, {own:#x})"
        )));
    }
    let value = args
        .get(1)
        .cloned()
        .ok_or_else(|| ErrorKind::Malformed(format!("@{name} needs a mask and a value")))?;
    Ok(Intrinsic::Value(Some(value)))
}

fn unsupported(name: &str) -> ErrorKind {
    ErrorKind::Unsupported(format!("GPU intrinsic @{name} in the simulated grid"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    const SREGS: &str = "declare @llvm.nvvm.read.ptx.sreg.tid.x() -> i32\n\
        declare @llvm.nvvm.read.ptx.sreg.tid.y() -> i32\n\
        declare @llvm.nvvm.read.ptx.sreg.ntid.x() -> i32\n\
        declare @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32\n\
        declare @llvm.nvvm.read.ptx.sreg.nctaid.x() -> i32\n\
        declare @llvm.nvvm.barrier0()\n";

    fn module(body: &str) -> crate::module::Module {
        parse_module(&format!("{SREGS}{body}")).expect("parses")
    }

    fn read_i32(interp: &Interpreter<'_>, p: &Val, n: usize) -> Vec<u32> {
        interp
            .read(p, &crate::types::Type::I32, n)
            .unwrap()
            .iter()
            .map(|v| v.as_int().unwrap() as u32)
            .collect()
    }

    #[test]
    fn ids_and_dims_answer_per_thread() {
        // out[linear] = ctaid.x * 1000 + tid.y * 100 + tid.x * 10 + nctaid.x
        let m = module(
            "func @ids(%out: ptr) kernel {
^entry:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call @llvm.nvvm.read.ptx.sreg.tid.y()
  %nx = call @llvm.nvvm.read.ptx.sreg.ntid.x()
  %bx = call @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %gx = call @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %c1000 = const i32 1000
  %c100 = const i32 100
  %c10 = const i32 10
  %c6 = const i32 6
  %a = mul i32 %bx, %c1000
  %b = mul i32 %ty, %c100
  %c = mul i32 %tx, %c10
  %s1 = add i32 %a, %b
  %s2 = add i32 %s1, %c
  %s3 = add i32 %s2, %gx
  %row = mul i32 %ty, %nx
  %local = add i32 %row, %tx
  %base = mul i32 %bx, %c6
  %lin = add i32 %base, %local
  %w = zext %lin to i64
  %four = const i64 4
  %off = mul i64 %w, %four
  %p = ptradd ptr %out, %off
  store %s3, %p, align 4
  ret
}
",
        );
        let f = m.function_by_name("ids").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let out = interp.alloc(&crate::types::Type::I32, &vec![Val::Int(0); 12]).unwrap();
        interp.launch(f, Dim3::x(2), Dim3::new(3, 2, 1), std::slice::from_ref(&out)).unwrap();
        assert_eq!(
            read_i32(&interp, &out, 12),
            vec![2, 12, 22, 102, 112, 122, 1002, 1012, 1022, 1102, 1112, 1122]
        );
    }

    /// Each thread writes its id into a shared array, waits, and reads its neighbour's
    /// slot: only correct when all threads of the block passed the barrier first, and
    /// each block has its own copy of the array.
    const ROTATE: &str = "global internal @tile: [4 x i32], addrspace(3), align 4 = undef

func @rotate(%out: ptr) kernel {
^entry:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %bx = call @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %tile = const ptr addrspace(3) @tile
  %w = zext %tx to i64
  %four = const i64 4
  %off = mul i64 %w, %four
  %slot = ptradd ptr addrspace(3) %tile, %off
  %c100 = const i32 100
  %tag = mul i32 %bx, %c100
  %mine = add i32 %tag, %tx
  store %mine, %slot, align 4
  call @llvm.nvvm.barrier0()
  %one = const i32 1
  %three = const i32 3
  %n = add i32 %tx, %one
  %next = and i32 %n, %three
  %nw = zext %next to i64
  %noff = mul i64 %nw, %four
  %nslot = ptradd ptr addrspace(3) %tile, %noff
  %v = load i32, %nslot, align 4
  %c4 = const i32 4
  %base = mul i32 %bx, %c4
  %lin = add i32 %base, %tx
  %lw = zext %lin to i64
  %loff = mul i64 %lw, %four
  %p = ptradd ptr %out, %loff
  store %v, %p, align 4
  ret
}
";

    #[test]
    fn barriers_separate_phases_and_shared_memory_is_per_block() {
        let m = module(ROTATE);
        let f = m.function_by_name("rotate").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let out = interp.alloc(&crate::types::Type::I32, &vec![Val::Int(0); 8]).unwrap();
        interp.launch(f, Dim3::x(2), Dim3::x(4), std::slice::from_ref(&out)).unwrap();
        assert_eq!(read_i32(&interp, &out, 8), vec![1, 2, 3, 0, 101, 102, 103, 100]);
    }

    #[test]
    fn a_barrier_some_threads_skip_is_an_error() {
        let m = module(
            "func @diverge() kernel {
^entry:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %zero = const i32 0
  %first = icmp eq i32 %tx, %zero
  brif %first, ^wait, ^done
^wait:
  call @llvm.nvvm.barrier0()
  jump ^done
^done:
  ret
}
",
        );
        let f = m.function_by_name("diverge").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let e = interp.launch(f, Dim3::x(1), Dim3::x(4), &[]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::DivergentBarrier { exited: 3, total: 4, .. }), "{e}");
        assert_eq!(e.location().unwrap().inst, "call @llvm.nvvm.barrier0()");
        // Every thread reaching it is fine.
        interp.launch(f, Dim3::x(1), Dim3::x(1), &[]).unwrap();
    }

    /// Every thread adds its id + 1 to `out[0]` (global) and to a shared counter that
    /// thread 0 copies to `out[1]` after a barrier: with `atomic`, through `atomicrmw
    /// add`; without, as a plain load, add and store.
    fn counting_kernel(atomic: bool) -> crate::module::Module {
        let add = |ptr: &str| {
            if atomic {
                format!("  %old.{ptr} = atomicrmw add i32 %{ptr}, %inc seq_cst\n")
            } else {
                format!(
                    "  %v.{ptr} = load i32, %{ptr}, align 4\n  %s.{ptr} = add i32 %v.{ptr}, %inc\n  \
                     store %s.{ptr}, %{ptr}, align 4\n"
                )
            }
        };
        module(&format!(
            "global internal @counter: i32, addrspace(3), align 4 = undef

func @count(%out: ptr) kernel {{
^entry:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %zero = const i32 0
  %one = const i32 1
  %inc = add i32 %tx, %one
  %shared = const ptr addrspace(3) @counter
  %first = icmp eq i32 %tx, %zero
  brif %first, ^init, ^go
^init:
  store %zero, %shared, align 4
  jump ^go
^go:
  call @llvm.nvvm.barrier0()
{}{}  call @llvm.nvvm.barrier0()
  brif %first, ^copy, ^done
^copy:
  %total = load i32, %shared, align 4
  %four = const i64 4
  %slot = ptradd ptr %out, %four
  store %total, %slot, align 4
  jump ^done
^done:
  ret
}}
",
            add("out"),
            add("shared")
        ))
    }

    fn count(atomic: bool, schedule: Schedule) -> Vec<u32> {
        let m = counting_kernel(atomic);
        let f = m.function_by_name("count").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        interp.set_schedule(schedule);
        let out = interp.alloc(&crate::types::Type::I32, &[Val::Int(0), Val::Int(0)]).unwrap();
        interp.launch(f, Dim3::x(2), Dim3::x(8), std::slice::from_ref(&out)).unwrap();
        read_i32(&interp, &out, 2)
    }

    #[test]
    fn interleaved_threads_lose_non_atomic_updates() {
        // 1 + ... + 8 per block; two blocks share the global counter.
        let (global, shared) = (2 * 36, 36);
        assert_eq!(count(true, Schedule::Interleaved), vec![global, shared]);
        assert_eq!(count(true, Schedule::Sequential), vec![global, shared]);
        // Run one after the other, the racy version happens to be right...
        assert_eq!(count(false, Schedule::Sequential), vec![global, shared]);
        // ...interleaved, every thread of a block reads before any writes: the last
        // write wins (8 per block).
        assert_eq!(count(false, Schedule::Interleaved), vec![16, 8]);
    }

    #[test]
    fn unsupported_intrinsics_and_bad_launches_are_errors() {
        let m = module(
            "declare @llvm.nvvm.read.ptx.sreg.clock() -> i32

func @clock() kernel {
^entry:
  %c = call @llvm.nvvm.read.ptx.sreg.clock()
  ret
}
",
        );
        let f = m.function_by_name("clock").unwrap();
        let mut interp = Interpreter::new(&m).unwrap();
        let e = interp.launch(f, Dim3::x(1), Dim3::x(2), &[]).unwrap_err();
        assert!(e.to_string().contains("@llvm.nvvm.read.ptx.sreg.clock"), "{e}");
        let e = interp.launch(f, Dim3::x(1), Dim3::x(2048), &[]).unwrap_err();
        assert!(e.to_string().contains("at most 1024"), "{e}");
        // Outside a launch, GPU intrinsics are unknown externals, as before.
        let tid = m.function_by_name("llvm.nvvm.read.ptx.sreg.tid.x").unwrap();
        assert!(interp.call(tid, &[]).is_err());
    }
}
