//! Device-side tapes: after reverse-mode synthesis, the tapes of a GPU module (nvptx
//! target) are moved off the CPU tape runtime, whose `realloc` does not exist on a device.
//!
//! The cache synthesis (`super::tape`) builds every tape the same way on every target:
//! a `{ptr data, i64 top, i64 capacity}` header in the derivative's setup block, a buffer
//! from `malloc` when the number of elements is known on entry, `__adc_tape_push` growing
//! it with `realloc` otherwise, and `free(load header)` before the derivative returns. This
//! module rewrites that runtime for the device, in one place and without changing the
//! plan:
//!
//! - a presized tape whose size in bytes is a compile-time constant (fixed trip counts)
//!   becomes an `alloca` (PTX `.local` memory, per thread), its pushes reserve without a
//!   capacity check (the capacity is exact) and its `free` disappears, as long as the
//!   function's local tapes stay within [`LOCAL_TAPE_BUDGET`] bytes;
//! - by default ([`DeviceTapeSpace::Local`]) every other tape lives in a *tape region*: one
//!   local array per derivative of a fixed size, bump-allocated through a slot holding
//!   its used bytes ([`REGION_RESERVE`]). A presized tape of a size known only on entry
//!   reserves its buffer there; a tape of unknown size is pushed through
//!   [`REGION_PUSH`], which grows a full tape by reserving twice the capacity in the
//!   region and copying the used bytes. Nothing is freed: the region ends with the
//!   derivative's frame, and growth by doubling uses at most twice the final size. A
//!   thread whose tapes do not fit traps, which stops the launch with an error (never a
//!   wrong gradient); `--gpu-tapes=local=BYTES` enlarges the region. No device `malloc`,
//!   whose calls serialize the threads of a launch and made such gradients thousands of
//!   times slower than their primals;
//! - with [`DeviceTapeSpace::Heap`] (opt-in, `--gpu-tapes=heap`), or for a tape whose
//!   header leaves the derivative, those tapes use [`DEVICE_ALLOC`] instead: CUDA's
//!   device-side `malloc` (a system call ptxas resolves) that traps when the device heap
//!   is exhausted, and `__adc_tape_push` gets a device body that grows a full tape by
//!   allocating twice the capacity, copying the used bytes and freeing the old buffer.
//!
//! Every pointer a tape header holds is therefore a thread's local array or region
//! (never freed), or a device-heap block released with `free`. The rewrite is idempotent
//! and does nothing to modules for other targets.

use std::collections::{HashMap, HashSet};

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    BinaryOp, BlockCall, CastOp, Constant, FuncAttrs, FuncId, Function, Inst, InstFlags,
    InstructionData, IntCC, Linkage, Module, Signature, Type, Value, ValueDef,
};

use super::tape::{build_tape_push, TapeGrowth, TAPE_TOP_OFFSET};
use crate::callees::TAPE_PUSH;
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::DeviceTapeSpace;

/// Bytes of tapes one derivative may keep in thread-local memory; larger tapes go to the
/// device heap. PTX allows 512 KiB of local memory per thread, but the driver reserves
/// local memory for every thread that may be resident, so big frames cost occupancy and
/// device memory: a few KiB per thread is what CUDA code commonly keeps there.
pub const LOCAL_TAPE_BUDGET: u64 = 16 * 1024;

/// `__adc_device_tape_alloc(i64 bytes) -> ptr`: device `malloc` that traps on failure.
pub const DEVICE_ALLOC: &str = "__adc_device_tape_alloc";

/// `__adc_device_tape_reserve(ptr region, ptr used, i64 bytes) -> ptr`: bump allocation
/// in a derivative's tape region, trapping when the region is full.
pub const REGION_RESERVE: &str = "__adc_device_tape_reserve";

/// `__adc_device_tape_push(ptr tape, i64 size, ptr region, ptr used) -> ptr`: the tape
/// push of [`build_tape_push`], growing into the region.
pub const REGION_PUSH: &str = "__adc_device_tape_push";

/// Alignment of a tape kept in local memory (what device `malloc` guarantees).
const LOCAL_TAPE_ALIGN: u32 = 16;

/// `__adc_device_tape_free(ptr)`: releases what [`DEVICE_ALLOC`] gave a whole derivative
/// (synthesis calls the pair; the rewrite turns them into region reservations and nothing,
/// or into the device heap's `malloc` and `free`).
pub const DEVICE_FREE: &str = "__adc_device_tape_free";

/// How one module's tapes were placed (for tests and reports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceTapes {
    /// Presized tapes turned into thread-local arrays, and their bytes in all.
    pub local: usize,
    pub local_bytes: u64,
    /// Tape buffers allocated on the device heap (`--gpu-tapes=heap`).
    pub heap: usize,
    /// Tapes grown on the device heap by the device `__adc_tape_push`.
    pub growing: usize,
    /// Tape buffers reserved in tape regions (sizes known on entry).
    pub region_presized: usize,
    /// Tapes pushed through [`REGION_PUSH`] (growing in the region when full).
    pub region_growing: usize,
}

/// Rewrites the tape runtime of a GPU module for the device (see the module comment).
/// Does nothing for modules of other targets. A synthesized function that still grows a
/// buffer with `realloc` afterwards (a forward derivative of the CPU tape push; today
/// forward-over-reverse in a kernel already stops earlier, at the atomic adjoints) is an
/// error naming it: the device has no `realloc`.
pub fn place_device_tapes(
    module: &mut Module,
    space: DeviceTapeSpace,
) -> Result<DeviceTapes, AdError> {
    let mut report = DeviceTapes::default();
    if !super::gpu::is_nvptx(module) {
        return Ok(report);
    }
    let Some(push) = module.function_by_name(TAPE_PUSH) else { return Ok(report) };
    let (Some(malloc), Some(free)) =
        (module.function_by_name("malloc"), module.function_by_name("free"))
    else {
        return Ok(report);
    };
    let alloc = define_device_alloc(module, malloc);
    let tape_free = module.function_by_name(DEVICE_FREE);
    if let Some(id) = tape_free {
        define_device_free(module, id, free, space);
    }
    if calls_realloc(module, push) {
        define_device_push(module, push, alloc, free);
    }
    let region = match space {
        DeviceTapeSpace::Local(bytes) => Some(define_region_runtime(module, bytes)),
        DeviceTapeSpace::Heap => None,
    };
    let runtime = DeviceRuntime { push, free, alloc, tape_free, region };
    let callers: Vec<FuncId> = module
        .functions
        .iter()
        .filter(|(id, f)| !f.is_declaration() && !runtime.defines(*id))
        .map(|(id, _)| id)
        .collect();
    for id in callers {
        place_function_tapes(&mut module.functions[id], &runtime, &mut report)?;
    }
    let synthesized = module.functions.iter().filter(|(_, f)| f.name.starts_with("__adc_"));
    if let Some((_, f)) = synthesized.into_iter().find(|(id, _)| calls_realloc(module, *id)) {
        return Err(AdError::new(
            Site::function(&f.name),
            AdErrorKind::Unsupported {
                what: format!(
                    "@{} grows a tape with realloc, which GPU code cannot call (a forward \
                     derivative of reverse-mode tapes: forward-over-reverse in a kernel)",
                    f.name
                ),
            },
        ));
    }
    Ok(report)
}

fn calls_realloc(module: &Module, func: FuncId) -> bool {
    let f = &module.functions[func];
    f.layout.insts().any(|(_, inst)| match &f.dfg.insts[inst] {
        InstructionData::Call { callee, .. } => module.functions[*callee].name == "realloc",
        _ => false,
    })
}

/// The device's tape functions.
struct DeviceRuntime {
    push: FuncId,
    free: FuncId,
    /// [`DEVICE_ALLOC`] (defined: the device heap) and [`DEVICE_FREE`] (declared).
    alloc: FuncId,
    tape_free: Option<FuncId>,
    /// Region reserve and push, and the region size ([`DeviceTapeSpace::Local`]).
    region: Option<RegionRuntime>,
}

#[derive(Copy, Clone)]
struct RegionRuntime {
    reserve: FuncId,
    push: FuncId,
    bytes: u64,
}

impl DeviceRuntime {
    fn defines(&self, id: FuncId) -> bool {
        id == self.push
            || id == self.alloc
            || self.region.is_some_and(|r| id == r.reserve || id == r.push)
    }
}

/// The calls in `f` (laid out) to `callee`.
fn calls_to(f: &Function, callee: FuncId) -> Vec<Inst> {
    f.layout
        .insts()
        .filter(|(_, inst)| {
            matches!(&f.dfg.insts[*inst], InstructionData::Call { callee: c, .. } if *c == callee)
        })
        .map(|(_, inst)| inst)
        .collect()
}

/// The tapes of one function: a local array for each presized tape of constant size
/// within the budget; the rest in the function's tape region, or on the device heap.
fn place_function_tapes(
    f: &mut Function,
    runtime: &DeviceRuntime,
    report: &mut DeviceTapes,
) -> Result<(), AdError> {
    let local_headers = place_constant_tapes(f, runtime, report);
    reserve_without_growth(f, runtime.push, &local_headers);
    let allocations = calls_to(f, runtime.alloc);
    let is_alloca = |f: &Function, v: Value| match f.dfg.value_def(v) {
        ValueDef::Result(inst) => matches!(f.dfg.insts[inst], InstructionData::Alloca { .. }),
        ValueDef::Param(..) => false,
    };
    // Pushes onto this function's own headers (a split function's live in its frame and
    // keep the heap push).
    let pushes: Vec<Inst> = calls_to(f, runtime.push)
        .into_iter()
        .filter(|call| match &f.dfg.insts[*call] {
            InstructionData::Call { args, .. } => is_alloca(f, args[0]),
            _ => false,
        })
        .collect();
    let tape_frees = runtime.tape_free.map(|free| calls_to(f, free)).unwrap_or_default();
    let mut pushed: HashSet<Value> = HashSet::new();
    for call in &pushes {
        if let InstructionData::Call { args, .. } = &f.dfg.insts[*call] {
            pushed.insert(args[0]);
        }
    }
    match runtime.region {
        Some(r) => {
            let mut allocations = allocations;
            let mut local_bytes = 0u64;
            for call in allocations.clone() {
                let InstructionData::Call { args, .. } = &f.dfg.insts[call] else { continue };
                let Some(bytes) = constant_value(f, args[0], 0) else { continue };
                if local_bytes + bytes <= LOCAL_TAPE_BUDGET {
                    // Any tape of constant size within the budget, records included:
                    // a local array (the region's frees are dropped below anyway).
                    local_bytes += bytes;
                    replace_by_local_array(f, call, bytes);
                    allocations.retain(|c| *c != call);
                    report.local += 1;
                } else if bytes > r.bytes {
                    return Err(AdError::new(
                        Site::function(&f.name),
                        AdErrorKind::Unsupported {
                            what: format!(
                                "a tape of {bytes} bytes per thread, more than the local \
                                 tape region of {} bytes: build with --gpu-tapes=local=BYTES \
                                 (at most 524288) or --gpu-tapes=heap",
                                r.bytes
                            ),
                        },
                    ));
                }
            }
            report.local_bytes += local_bytes;
            if !allocations.is_empty() || !pushes.is_empty() {
                let (area, used) = add_region(f, r.bytes);
                for call in &allocations {
                    if let InstructionData::Call { callee, args, .. } = &mut f.dfg.insts[*call] {
                        *callee = r.reserve;
                        *args = vec![area, used, args[0]];
                    }
                }
                for call in &pushes {
                    if let InstructionData::Call { callee, args, .. } = &mut f.dfg.insts[*call] {
                        *callee = r.push;
                        args.extend([area, used]);
                    }
                }
                report.region_presized += allocations.len();
                report.region_growing += pushed.len();
            }
            // The region ends with the frame: nothing to free.
            for call in tape_frees {
                f.layout.remove_inst(call);
            }
        }
        None => {
            report.heap += allocations.len();
            report.growing += pushed.len();
            for call in tape_frees {
                if let InstructionData::Call { callee, .. } = &mut f.dfg.insts[call] {
                    *callee = runtime.free;
                }
            }
        }
    }
    Ok(())
}

/// Replaces the allocator call `call` by a local array of `bytes` bytes.
fn replace_by_local_array(f: &mut Function, call: Inst, bytes: u64) {
    let count = f.dfg.make_inst(
        InstructionData::Const { ty: Type::I64, value: Constant::Int(bytes.into()) },
        Some(Type::I64),
    );
    f.layout.insert_inst_before(count, call);
    let count = f.dfg.inst_result(count).expect("a constant has a result");
    let array = f.dfg.make_inst(
        InstructionData::Alloca { ty: Type::I8, count: Some(count), align: LOCAL_TAPE_ALIGN },
        Some(Type::PTR),
    );
    f.layout.insert_inst_before(array, call);
    let array = f.dfg.inst_result(array).expect("an alloca has a result");
    let buffer = f.dfg.inst_result(call).expect("the allocator returns a pointer");
    f.dfg.replace_uses(buffer, array);
    f.layout.remove_inst(call);
}

/// Presized tapes whose size is a constant within [`LOCAL_TAPE_BUDGET`] become local
/// arrays; their frees disappear. Returns their headers.
fn place_constant_tapes(
    f: &mut Function,
    runtime: &DeviceRuntime,
    report: &mut DeviceTapes,
) -> HashSet<Value> {
    let push = runtime.push;
    let uses = value_uses(f);
    let mut local_headers = HashSet::new();
    let mut local_bytes = 0u64;
    let stores: Vec<(Inst, Value, Value)> = f
        .layout
        .insts()
        .filter_map(|(_, inst)| match f.dfg.insts[inst] {
            InstructionData::Store { value, ptr, .. } => Some((inst, value, ptr)),
            _ => None,
        })
        .collect();
    for (_, value, header) in stores {
        let ValueDef::Result(call) = f.dfg.value_def(value) else { continue };
        let InstructionData::Call { callee, ref args, .. } = f.dfg.insts[call] else { continue };
        if callee != runtime.alloc || uses.get(&value).map_or(0, Vec::len) != 1 {
            continue;
        }
        let Some(bytes) = args.first().and_then(|b| constant_value(f, *b, 0)) else { continue };
        if local_bytes + bytes > LOCAL_TAPE_BUDGET || !header_stays_local(f, &uses, header, push) {
            continue;
        }
        replace_by_local_array(f, call, bytes);
        local_bytes += bytes;
        local_headers.insert(header);
        report.local += 1;
    }
    report.local_bytes += local_bytes;
    // Their frees: `free(load header)`.
    let frees: Vec<Inst> = f
        .layout
        .insts()
        .filter(|(_, inst)| match &f.dfg.insts[*inst] {
            InstructionData::Call { callee, args, .. }
                if Some(*callee) == runtime.tape_free || *callee == runtime.free =>
            {
                args.first().is_some_and(|a| match f.dfg.value_def(*a) {
                    ValueDef::Result(load) => matches!(
                        f.dfg.insts[load],
                        InstructionData::Load { ptr, .. } if local_headers.contains(&ptr)
                    ),
                    ValueDef::Param(..) => false,
                })
            }
            _ => false,
        })
        .map(|(_, inst)| inst)
        .collect();
    for inst in frees {
        f.layout.remove_inst(inst);
    }
    local_headers
}

/// Adds the tape region to the start of `f`'s entry block: `bytes` of local memory and
/// a slot counting the bytes in use (zero). Returns both pointers.
fn add_region(f: &mut Function, bytes: u64) -> (Value, Value) {
    let entry = f.entry_block().expect("a function with tapes has a body");
    let first = f.layout.first_inst(entry).expect("an entry block ends in a terminator");
    let mut insert = |data: InstructionData, ty: Type| {
        let inst = f.dfg.make_inst(data, Some(ty));
        f.layout.insert_inst_before(inst, first);
        f.dfg.inst_result(inst).expect("typed instructions have results")
    };
    let int =
        |value: u64| InstructionData::Const { ty: Type::I64, value: Constant::Int(value.into()) };
    let count = insert(int(bytes), Type::I64);
    let area = insert(
        InstructionData::Alloca { ty: Type::I8, count: Some(count), align: LOCAL_TAPE_ALIGN },
        Type::PTR,
    );
    let used = insert(InstructionData::Alloca { ty: Type::I64, count: None, align: 8 }, Type::PTR);
    let zero = insert(int(0), Type::I64);
    let store = f.dfg.make_inst(
        InstructionData::Store { value: zero, ptr: used, align: 8, volatile: false },
        None,
    );
    f.layout.insert_inst_before(store, first);
    (area, used)
}

/// An internal, non-unwinding function of the device tape runtime, without a body yet.
fn internal_function(name: &str, params: Vec<Type>, ret: Option<Type>) -> Function {
    let mut f = Function::new(name, Signature::new(params, ret));
    f.linkage = Linkage::Internal;
    f.attrs = FuncAttrs::NOUNWIND;
    f
}

/// Defines (once) [`REGION_RESERVE`] for regions of `bytes` and [`REGION_PUSH`] on it.
fn define_region_runtime(module: &mut Module, bytes: u64) -> RegionRuntime {
    let reserve = match module.function_by_name(REGION_RESERVE) {
        Some(id) => id,
        None => define_region_reserve(module, bytes),
    };
    let push = match module.function_by_name(REGION_PUSH) {
        Some(id) => id,
        None => define_region_push(module, reserve),
    };
    RegionRuntime { reserve, push, bytes }
}

/// `reserve(region, used, bytes)`: `used` rounded up to 16 bytes is the offset of the
/// block; a block ending past the region traps.
fn define_region_reserve(module: &mut Module, capacity: u64) -> FuncId {
    let params = vec![Type::PTR, Type::PTR, Type::I64];
    let mut f = internal_function(REGION_RESERVE, params, Some(Type::PTR));
    f.attrs = f.attrs | FuncAttrs::ALWAYSINLINE;
    let lookup = |_: FuncId| None;
    let mut b = FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let full = b.create_block();
    let fits = b.create_block();
    let params = b.func.dfg.block_params(entry).to_vec();
    let (area, used_slot, bytes) = (params[0], params[1], params[2]);
    b.switch_to_block(entry);
    let used = b.load(Type::I64, used_slot, 8);
    let align = b.iconst(Type::I64, i128::from(LOCAL_TAPE_ALIGN) - 1);
    let padded = b.binary(BinaryOp::Add, used, align);
    let mask = b.iconst(Type::I64, -i128::from(LOCAL_TAPE_ALIGN));
    let start = b.binary(BinaryOp::And, padded, mask);
    let end = b.binary(BinaryOp::Add, start, bytes);
    let room = b.iconst(Type::I64, i128::from(capacity));
    // `bytes` above the region also catches a wrapped `end`.
    let too_big = b.icmp(IntCC::Ugt, bytes, room);
    let past_end = b.icmp(IntCC::Ugt, end, room);
    let over = b.binary(BinaryOp::Or, too_big, past_end);
    b.brif(over, BlockCall::new(full, Vec::new()), BlockCall::new(fits, Vec::new()));
    b.switch_to_block(full);
    b.ins(InstructionData::Unreachable);
    b.switch_to_block(fits);
    b.store(end, used_slot, 8);
    let block = b.ptradd(area, start);
    b.ret(Some(block));
    module.add_function(f)
}

/// [`REGION_PUSH`]: the tape push of [`build_tape_push`] whose growth reserves the doubled
/// buffer in the region and copies the used bytes (the old buffer stays, unused).
fn define_region_push(module: &mut Module, reserve: FuncId) -> FuncId {
    let params = vec![Type::PTR, Type::I64, Type::PTR, Type::PTR];
    let mut f = internal_function(REGION_PUSH, params, Some(Type::PTR));
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    build_tape_push(&mut f, &lookup, |b, growth| {
        let TapeGrowth { data, top, size, new_bytes } = growth;
        let entry = b.func.entry_block().expect("built from its entry block");
        let params = b.func.dfg.block_params(entry).to_vec();
        let (area, used) = (params[2], params[3]);
        let (_, grown) = b.call(reserve, vec![area, used, new_bytes]);
        let grown = grown.expect("reserve returns a pointer");
        let bytes = b.binary(BinaryOp::Mul, top, size);
        copy_bytes(b, data, grown, bytes);
        grown
    });
    module.add_function(f)
}

/// Copies `bytes` bytes from `from` to `to`, one at a time (growth is rare and element
/// sizes vary); leaves the builder after the loop.
fn copy_bytes(b: &mut FunctionBuilder<'_>, from: Value, to: Value, bytes: Value) {
    let header = b.create_block();
    let body = b.create_block();
    let done = b.create_block();
    let index = b.append_block_param(header, Type::I64);
    let zero = b.iconst(Type::I64, 0);
    b.jump(header, vec![zero]);
    b.switch_to_block(header);
    let more = b.icmp(IntCC::Ult, index, bytes);
    b.brif(more, BlockCall::new(body, Vec::new()), BlockCall::new(done, Vec::new()));
    b.switch_to_block(body);
    let source = b.ptradd(from, index);
    let byte = b.load(Type::I8, source, 1);
    let target = b.ptradd(to, index);
    b.store(byte, target, 1);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, index, one);
    b.jump(header, vec![next]);
    b.switch_to_block(done);
}

/// Replaces the pushes onto local tapes (whose capacity is exact, so they never grow) by
/// the reservation alone: `addr = data + top * size; top += 1`. The data pointer is then
/// only ever the local array, which ptxas can address as local memory, and a kernel
/// whose tapes are all local calls no allocator.
fn reserve_without_growth(f: &mut Function, push: FuncId, local_headers: &HashSet<Value>) {
    let pushes: Vec<(Inst, Value, Value)> = f
        .layout
        .insts()
        .filter_map(|(_, inst)| match &f.dfg.insts[inst] {
            InstructionData::Call { callee, args, .. } if *callee == push => match args[..] {
                [header, size] if local_headers.contains(&header) => Some((inst, header, size)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    for (call, header, size) in pushes {
        let mut insert = |data: InstructionData, ty: Option<Type>| {
            let inst = f.dfg.make_inst(data, ty);
            f.layout.insert_inst_before(inst, call);
            f.dfg.inst_result(inst)
        };
        let flags = InstFlags::empty();
        let load = |ptr, ty| InstructionData::Load { ty, ptr, align: 8, volatile: false };
        let int = |value: i128| InstructionData::Const {
            ty: Type::I64,
            value: Constant::Int(value as u128),
        };
        let data = insert(load(header, Type::PTR), Some(Type::PTR)).expect("a load has a result");
        let top_offset =
            insert(int(TAPE_TOP_OFFSET), Some(Type::I64)).expect("a constant has a result");
        let top_ptr = insert(
            InstructionData::PtrAdd { flags, ptr: header, offset: top_offset },
            Some(Type::PTR),
        )
        .expect("ptradd has a result");
        let top = insert(load(top_ptr, Type::I64), Some(Type::I64)).expect("a load has a result");
        let offset = insert(
            InstructionData::Binary { op: BinaryOp::Mul, flags, args: [top, size] },
            Some(Type::I64),
        )
        .expect("mul has a result");
        let addr = insert(InstructionData::PtrAdd { flags, ptr: data, offset }, Some(Type::PTR))
            .expect("ptradd has a result");
        let one = insert(int(1), Some(Type::I64)).expect("a constant has a result");
        let next = insert(
            InstructionData::Binary { op: BinaryOp::Add, flags, args: [top, one] },
            Some(Type::I64),
        )
        .expect("add has a result");
        insert(
            InstructionData::Store { value: next, ptr: top_ptr, align: 8, volatile: false },
            None,
        );
        if let Some(result) = f.dfg.inst_result(call) {
            f.dfg.replace_uses(result, addr);
        }
        f.layout.remove_inst(call);
    }
}

/// Whether a tape header is used only by tape code of this function (stores into it,
/// loads from it, offsets of it, pushes onto it), so that its buffer cannot reach code
/// that might free or grow it differently.
fn header_stays_local(
    f: &Function,
    uses: &HashMap<Value, Vec<Inst>>,
    header: Value,
    push: FuncId,
) -> bool {
    uses.get(&header).into_iter().flatten().all(|inst| match &f.dfg.insts[*inst] {
        InstructionData::Store { value, .. } => *value != header,
        InstructionData::Load { .. } | InstructionData::PtrAdd { .. } => true,
        InstructionData::Call { callee, args, .. } => {
            *callee == push && args.iter().skip(1).all(|a| *a != header)
        }
        _ => false,
    })
}

/// The laid-out instructions using each value.
fn value_uses(f: &Function) -> HashMap<Value, Vec<Inst>> {
    let mut uses: HashMap<Value, Vec<Inst>> = HashMap::new();
    for (_, inst) in f.layout.insts() {
        for arg in f.dfg.insts[inst].args() {
            uses.entry(arg).or_default().push(inst);
        }
    }
    uses
}

/// The value of an `i64` computed from constants by integer arithmetic (how the planner
/// writes a tape's size: trip counts plus one, multiplied, times the element size).
fn constant_value(f: &Function, value: Value, depth: usize) -> Option<u64> {
    if depth > 32 {
        return None;
    }
    let ValueDef::Result(inst) = f.dfg.value_def(value) else { return None };
    let as_signed = |v: u64| v as i64;
    match &f.dfg.insts[inst] {
        InstructionData::Const { value: Constant::Int(v), .. } => Some(*v as u64),
        InstructionData::Cast { op: CastOp::Zext | CastOp::Sext | CastOp::Trunc, arg, .. } => {
            constant_value(f, *arg, depth + 1)
        }
        InstructionData::Binary { op, args, .. } => {
            let a = constant_value(f, args[0], depth + 1)?;
            let b = constant_value(f, args[1], depth + 1)?;
            match op {
                BinaryOp::Add => a.checked_add(b),
                BinaryOp::Sub => a.checked_sub(b),
                BinaryOp::Mul => a.checked_mul(b),
                BinaryOp::Udiv => a.checked_div(b),
                BinaryOp::Sdiv => as_signed(a).checked_div(as_signed(b)).map(|v| v as u64),
                BinaryOp::Umax => Some(a.max(b)),
                BinaryOp::Umin => Some(a.min(b)),
                BinaryOp::Smax => Some(as_signed(a).max(as_signed(b)) as u64),
                BinaryOp::Smin => Some(as_signed(a).min(as_signed(b)) as u64),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Defines [`DEVICE_ALLOC`] (once): `malloc(bytes)`, trapping when the device heap
/// (`cudaLimitMallocHeapSize`, 8 MB unless the host raises it) cannot hold the block.
fn define_device_alloc(module: &mut Module, malloc: FuncId) -> FuncId {
    // Synthesis declares it; a second run finds it defined.
    let declared = module.function_by_name(DEVICE_ALLOC);
    if let Some(id) = declared.filter(|id| !module.functions[*id].is_declaration()) {
        return id;
    }
    let mut f = internal_function(DEVICE_ALLOC, vec![Type::I64], Some(Type::PTR));
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let exhausted = b.create_block();
    let done = b.create_block();
    let bytes = b.func.dfg.block_params(entry)[0];
    b.switch_to_block(entry);
    let (_, block) = b.call(malloc, vec![bytes]);
    let block = block.expect("malloc returns a pointer");
    let null = b.constant(Type::PTR, Constant::Int(0));
    let failed = b.icmp(IntCC::Eq, block, null);
    b.brif(failed, BlockCall::new(exhausted, Vec::new()), BlockCall::new(done, Vec::new()));
    b.switch_to_block(exhausted);
    b.ins(InstructionData::Unreachable);
    b.switch_to_block(done);
    b.ret(Some(block));
    match declared {
        Some(id) => {
            module.functions[id] = f;
            id
        }
        None => module.add_function(f),
    }
}

/// Gives the declared [`DEVICE_FREE`] its body, so that no declaration of it is left for
/// the linker (its calls are rewritten anyway): nothing for regions, `free` for the heap.
fn define_device_free(module: &mut Module, id: FuncId, free: FuncId, space: DeviceTapeSpace) {
    if !module.functions[id].is_declaration() {
        return;
    }
    let mut f = internal_function(DEVICE_FREE, vec![Type::PTR], None);
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let block = b.func.dfg.block_params(entry)[0];
    b.switch_to_block(entry);
    if space == DeviceTapeSpace::Heap {
        b.call(free, vec![block]);
    }
    b.ret(None);
    module.functions[id] = f;
}

/// Replaces the body of `__adc_tape_push(ptr %tape, i64 %size) -> ptr` by its device
/// version: same contract ([`build_tape_push`]), growth by allocate, copy and free.
fn define_device_push(module: &mut Module, push: FuncId, alloc: FuncId, free: FuncId) {
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let old = &module.functions[push];
    let mut f = Function::new(old.name.clone(), old.signature.clone());
    f.linkage = old.linkage;
    f.attrs = old.attrs;
    build_tape_push(&mut f, &lookup, |b, growth| {
        let TapeGrowth { data, top, size, new_bytes } = growth;
        let release = b.create_block();
        let free_old = b.create_block();
        let replace = b.create_block();
        let (_, grown) = b.call(alloc, vec![new_bytes]);
        let grown = grown.expect("the device allocator returns a pointer");
        let used = b.binary(BinaryOp::Mul, top, size);
        copy_bytes(b, data, grown, used);
        b.jump(release, Vec::new());

        b.switch_to_block(release);
        let null = b.constant(Type::PTR, Constant::Int(0));
        let had_buffer = b.icmp(IntCC::Ne, data, null);
        b.brif(
            had_buffer,
            BlockCall::new(free_old, Vec::new()),
            BlockCall::new(replace, Vec::new()),
        );
        b.switch_to_block(free_old);
        b.call(free, vec![data]);
        b.jump(replace, Vec::new());
        b.switch_to_block(replace);
        grown
    });
    module.functions[push] = f;
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::{parse_module, print_module};

    use crate::{lower_enzyme_calls, Differentiator};

    /// `Σ x[i]²` over a loop whose exit is `EXIT`, then `x[0] = 0`, so that the loaded
    /// `x[i]` must be taped (the reverse pass cannot reload it).
    fn sum_of_squares(name: &str, exit: &str) -> String {
        format!(
            "func @{name}(%x: ptr, %n: i64) -> f64 {{
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %eight = const i64 8
  %off = mul i64 %i, %eight
  %px = ptradd ptr %x, %off
  %a = load f64, %px, align 8
  %sq = fmul f64 %a, %a
  %acc1 = fadd f64 %acc, %sq
  %one = const i64 1
  %i1 = add nsw i64 %i, %one
{exit}
  brif %more, ^loop(%i1, %acc1), ^done
^done:
  %z = const f64 0.0
  store %z, %x, align 8
  ret %acc1
}}
func @grad_{name}(%x: ptr, %dx: ptr, %n: i64) {{
^entry:
  %fp = const ptr @{name}
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup, %x, %dx, %const, %n)
  ret
}}
"
        )
    }

    fn module() -> String {
        let mut text = String::from(
            "target \"nvptx64-nvidia-cuda\"\n\
             global @enzyme_dup: i32, align 4 = 0\n\
             global @enzyme_const: i32, align 4 = 0\n\
             declare @__enzyme_autodiff(ptr, ...) -> f64\n",
        );
        let counted = |bound: &str| {
            format!("  %bound = const i64 {bound}\n  %more = icmp slt i64 %i1, %bound")
        };
        // 5 loads (40 bytes): local memory.
        text.push_str(&sum_of_squares("fixed", &counted("5")));
        // 4000 loads (32 KB): over the local budget, on the device heap.
        text.push_str(&sum_of_squares("fixed_big", &counted("4000")));
        // n loads: known on entry, on the device heap.
        text.push_str(&sum_of_squares("counted", "  %more = icmp slt i64 %i1, %n"));
        // Until the sum passes 1000 or n elements: a growing tape.
        text.push_str(&sum_of_squares(
            "until",
            "  %limit = const f64 1000.0\n  %small = fcmp olt f64 %acc1, %limit\n  \
             %in = icmp slt i64 %i1, %n\n  %more = and i1 %small, %in",
        ));
        text
    }

    /// Lowers the test module's gradients with the tape layout on (`records`) or off, the
    /// tapes of run-time size in `space`.
    fn lowered(
        records: bool,
        space: crate::request::DeviceTapeSpace,
    ) -> (adc_ir::Module, super::DeviceTapes) {
        let text = module();
        let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
        let mut options = crate::DifferentiatorOptions::default();
        options.cache.records = records;
        options.device_tapes = space;
        let mut synth = Differentiator::new(options);
        let report = lower_enzyme_calls(&mut module, &mut synth).expect("lowered");
        adc_ir::verify::verify_module(&module)
            .unwrap_or_else(|d| panic!("{d}\n{}", print_module(&module)));
        (module, report.device_tapes)
    }

    /// The allocators and tape pushes the derivative of `name` calls.
    fn allocator_calls(module: &adc_ir::Module, name: &str) -> Vec<String> {
        let derivative =
            module.function_by_name(&format!("__adc_reverse_{name}")).expect("derivative");
        let f = &module.functions[derivative];
        let mut calls = Vec::new();
        let runtime = [
            "malloc",
            "free",
            crate::callees::TAPE_PUSH,
            super::DEVICE_ALLOC,
            super::REGION_RESERVE,
            super::REGION_PUSH,
        ];
        for (_, inst) in f.layout.insts() {
            if let adc_ir::InstructionData::Call { callee, .. } = &f.dfg.insts[inst] {
                let callee = &module.functions[*callee].name;
                if runtime.contains(&callee.as_str()) {
                    calls.push(callee.clone());
                }
            }
        }
        calls
    }

    /// One tape per value (`-cache-records`), by default: every tape of run-time size is
    /// pushed through the region push; nothing calls an allocator, no `realloc` remains,
    /// and a second run of the rewrite changes nothing.
    /// A region for `fixed_big`'s 32 KB tape (the default 4 KiB traps, see below).
    const BIG_REGION: crate::request::DeviceTapeSpace =
        crate::request::DeviceTapeSpace::Local(64 * 1024);

    #[test]
    fn per_value_tapes_grow_in_the_region() {
        let (mut module, tapes) = lowered(false, BIG_REGION);
        assert!(tapes.region_growing >= 1, "{tapes:?}");
        assert_eq!((tapes.heap, tapes.growing), (0, 0), "{tapes:?}");
        let printed = print_module(&module);
        assert!(!printed.contains("call @realloc"), "{printed}");
        for name in ["fixed", "fixed_big", "counted", "until"] {
            let calls = allocator_calls(&module, name);
            assert!(!calls.iter().any(|c| c == "malloc" || c == super::DEVICE_ALLOC), "{calls:?}");
        }
        let again = super::place_device_tapes(&mut module, BIG_REGION).expect("again");
        assert_eq!(again, super::DeviceTapes::default());
        assert_eq!(print_module(&module), printed);
        run_gradients(&module);
    }

    /// The default layout puts the small constant-size tape on the stack; tapes presized
    /// on entry reserve their buffer in the region, the growing tape grows there.
    #[test]
    fn record_tapes_use_the_stack_and_the_region() {
        let (module, tapes) = lowered(true, BIG_REGION);
        assert_eq!(tapes.heap + tapes.growing, 0, "{tapes:?}");
        assert!(tapes.region_presized >= 2 && tapes.region_growing >= 1, "{tapes:?}");
        assert_eq!(allocator_calls(&module, "fixed"), Vec::<String>::new());
        for presized in ["fixed_big", "counted"] {
            let calls = allocator_calls(&module, presized);
            assert!(calls.contains(&super::REGION_RESERVE.to_string()), "{presized}: {calls:?}");
            assert!(!calls.contains(&"malloc".to_string()), "{presized}: {calls:?}");
        }
        run_gradients(&module);
    }

    /// `--gpu-tapes=heap`: presized tapes come from the device heap and the growing one
    /// grows there, without `realloc`.
    #[test]
    fn heap_tapes_are_the_opt_in() {
        let (module, tapes) = lowered(true, crate::request::DeviceTapeSpace::Heap);
        assert_eq!(tapes.growing, 1, "{tapes:?}");
        assert_eq!(tapes.region_presized + tapes.region_growing, 0, "{tapes:?}");
        let printed = print_module(&module);
        assert!(!printed.contains("call @realloc"), "{printed}");
        for presized in ["fixed_big", "counted"] {
            let calls = allocator_calls(&module, presized);
            assert!(calls.contains(&super::DEVICE_ALLOC.to_string()), "{presized}: {calls:?}");
            assert!(!calls.contains(&crate::callees::TAPE_PUSH.to_string()), "{presized}");
        }
        run_gradients(&module);
    }

    /// A tape that cannot fit the region is a build error when its size is a constant
    /// (`fixed_big`'s 32 KB in the default 4 KiB), and stops the thread (a trap) when it
    /// is known only at run time (`counted`'s 37 values in 64 bytes): never a wrong result.
    #[test]
    fn a_full_region_traps() {
        let mut whole = parse_module(&module()).expect("parses");
        let mut synth = Differentiator::new(crate::DifferentiatorOptions::default());
        let error = lower_enzyme_calls(&mut whole, &mut synth).expect_err("32 KB in 4 KiB");
        let message = error.to_string();
        assert!(message.contains("32000 bytes per thread"), "{message}");
        assert!(message.contains("--gpu-tapes=local=BYTES"), "{message}");

        let mut text = module();
        text.truncate(text.find("func @fixed(").expect("the first function"));
        text.push_str(&sum_of_squares("counted", "  %more = icmp slt i64 %i1, %n"));
        let mut module = parse_module(&text).expect("parses");
        let options = crate::DifferentiatorOptions {
            device_tapes: crate::request::DeviceTapeSpace::Local(64),
            ..Default::default()
        };
        lower_enzyme_calls(&mut module, &mut Differentiator::new(options)).expect("lowered");
        let module = module;
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let xs = vec![Val::F64(0.5); 64];
        let x = interp.alloc(&adc_ir::Type::F64, &xs).expect("alloc");
        let dx = interp.alloc(&adc_ir::Type::F64, &vec![Val::F64(0.0); 64]).expect("alloc");
        let grad = module.function_by_name("grad_counted").expect("gradient");
        let error =
            interp.call(grad, &[x, dx, Val::Int(37)]).expect_err("37 values need 296 bytes");
        assert!(error.message().contains("unreachable"), "{}", error.message());
    }

    fn run_gradients(module: &adc_ir::Module) {
        // Each gradient runs (growth included: 300 elements pass 16, 32, ... 256) and
        // gives d/dx[i] Σ x² = 2 x[i] over the elements the loop read.
        let len = 4001usize;
        let xs: Vec<f64> = (0..len).map(|i| 0.25 + (i % 7) as f64 * 0.125).collect();
        for (name, n, read) in
            [("fixed", 0, 5), ("fixed_big", 0, 4000), ("counted", 37, 37), ("until", 300, 300)]
        {
            let mut interp = Interpreter::new(module).expect("interpreter");
            let vals: Vec<Val> = xs.iter().map(|x| Val::F64(*x)).collect();
            let x = interp.alloc(&adc_ir::Type::F64, &vals).expect("alloc");
            let dx = interp.alloc(&adc_ir::Type::F64, &vec![Val::F64(0.0); len]).expect("alloc");
            let grad = module.function_by_name(&format!("grad_{name}")).expect("gradient");
            interp
                .call(grad, &[x, dx.clone(), Val::Int(n)])
                .unwrap_or_else(|e| panic!("grad_{name}: {}", e.message()));
            let got = interp.read(&dx, &adc_ir::Type::F64, len).expect("read");
            for (i, (g, x)) in got.iter().zip(&xs).enumerate() {
                let expected = if i < read { 2.0 * x } else { 0.0 };
                assert_eq!(*g, Val::F64(expected), "grad_{name}: element {i}");
            }
        }
    }
}
