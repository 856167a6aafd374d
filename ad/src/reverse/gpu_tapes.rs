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
//! - a presized tape of a size known only on entry (trip counts from parameters), or one
//!   too large for local memory, is allocated by [`DEVICE_ALLOC`]: CUDA's device-side
//!   `malloc` (a system call ptxas resolves) that traps when the device heap is exhausted
//!   instead of handing out a null buffer;
//! - `__adc_tape_push` gets a device body: it grows a full tape by allocating twice the
//!   capacity with [`DEVICE_ALLOC`], copying the used bytes and freeing the old buffer
//!   (the header knows the capacity, so no `realloc` is needed).
//!
//! Every pointer a tape header holds is therefore either a thread's local array (never
//! grown: its capacity is exact, and never freed) or a device-heap block released with
//! `free`. The rewrite is idempotent and does nothing to modules for other targets.

use std::collections::{HashMap, HashSet};

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    BinaryOp, BlockCall, CastOp, Constant, FuncAttrs, FuncId, Function, Inst, InstFlags,
    InstructionData, IntCC, Linkage, Module, Signature, Type, Value, ValueDef,
};

use super::tape::{build_tape_push, TapeGrowth, TAPE_TOP_OFFSET};
use crate::callees::TAPE_PUSH;
use crate::error::{AdError, AdErrorKind, Site};

/// Bytes of tapes one derivative may keep in thread-local memory; larger tapes go to the
/// device heap. PTX allows 512 KiB of local memory per thread, but the driver reserves
/// local memory for every thread that may be resident, so big frames cost occupancy and
/// device memory: a few KiB per thread is what CUDA code commonly keeps there.
pub const LOCAL_TAPE_BUDGET: u64 = 16 * 1024;

/// `__adc_device_tape_alloc(i64 bytes) -> ptr`: device `malloc` that traps on failure.
pub const DEVICE_ALLOC: &str = "__adc_device_tape_alloc";

/// Alignment of a tape kept in local memory (what device `malloc` guarantees).
const LOCAL_TAPE_ALIGN: u32 = 16;

/// How one module's tapes were placed (for tests and reports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceTapes {
    /// Presized tapes turned into thread-local arrays, and their bytes in all.
    pub local: usize,
    pub local_bytes: u64,
    /// Presized tapes allocated on the device heap (size known only on entry, or too big).
    pub heap: usize,
    /// Tapes of unknown size, grown on the device heap by the device `__adc_tape_push`.
    pub growing: usize,
}

/// Rewrites the tape runtime of a GPU module for the device (see the module comment).
/// Does nothing for modules of other targets. A synthesized function that still grows a
/// buffer with `realloc` afterwards (a forward derivative of the CPU tape push; today
/// forward-over-reverse in a kernel already stops earlier, at the atomic adjoints) is an
/// error naming it: the device has no `realloc`.
pub fn place_device_tapes(module: &mut Module) -> Result<DeviceTapes, AdError> {
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
    if calls_realloc(module, push) {
        define_device_push(module, push, alloc, free);
    }
    let callers: Vec<FuncId> = module
        .functions
        .iter()
        .filter(|(id, f)| !f.is_declaration() && *id != push && *id != alloc)
        .map(|(id, _)| id)
        .collect();
    for id in callers {
        place_function_tapes(&mut module.functions[id], push, malloc, free, alloc, &mut report);
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

/// The presized tapes of one function: local arrays where the size is a constant and the
/// budget allows, device-heap blocks otherwise.
fn place_function_tapes(
    f: &mut Function,
    push: FuncId,
    malloc: FuncId,
    free: FuncId,
    alloc: FuncId,
    report: &mut DeviceTapes,
) {
    let headers: HashSet<Value> = f
        .layout
        .insts()
        .filter_map(|(_, inst)| match &f.dfg.insts[inst] {
            InstructionData::Call { callee, args, .. } if *callee == push => args.first().copied(),
            _ => None,
        })
        .collect();
    if headers.is_empty() {
        return;
    }
    let uses = value_uses(f);
    // (the malloc call, the header its buffer is stored into, the constant size if any)
    let mut buffers: Vec<(Inst, Value, Option<u64>)> = Vec::new();
    for (_, inst) in f.layout.insts() {
        let InstructionData::Store { value, ptr, .. } = f.dfg.insts[inst] else { continue };
        if !headers.contains(&ptr) {
            continue;
        }
        let ValueDef::Result(call) = f.dfg.value_def(value) else { continue };
        let InstructionData::Call { callee, ref args, .. } = f.dfg.insts[call] else { continue };
        // A buffer from `alloc` was placed on the heap by an earlier run: counted again.
        if (callee != malloc && callee != alloc) || uses.get(&value).map_or(0, Vec::len) != 1 {
            continue;
        }
        let bytes =
            args.first().and_then(|b| constant_value(f, *b, 0)).filter(|_| callee == malloc);
        buffers.push((call, ptr, bytes));
    }
    report.growing += headers.len().saturating_sub(buffers.len());
    let mut local_bytes = 0u64;
    let mut local_headers = HashSet::new();
    for (call, header, bytes) in buffers {
        let fits = bytes.is_some_and(|b| local_bytes + b <= LOCAL_TAPE_BUDGET);
        match bytes {
            Some(bytes) if fits && header_stays_local(f, &uses, header, push) => {
                let count = f.dfg.make_inst(
                    InstructionData::Const { ty: Type::I64, value: Constant::Int(bytes.into()) },
                    Some(Type::I64),
                );
                f.layout.insert_inst_before(count, call);
                let count = f.dfg.inst_result(count).expect("a constant has a result");
                let array = f.dfg.make_inst(
                    InstructionData::Alloca {
                        ty: Type::I8,
                        count: Some(count),
                        align: LOCAL_TAPE_ALIGN,
                    },
                    Some(Type::PTR),
                );
                f.layout.insert_inst_before(array, call);
                let array = f.dfg.inst_result(array).expect("an alloca has a result");
                let buffer = f.dfg.inst_result(call).expect("malloc returns a pointer");
                f.dfg.replace_uses(buffer, array);
                f.layout.remove_inst(call);
                local_bytes += bytes;
                local_headers.insert(header);
                report.local += 1;
            }
            _ => {
                if let InstructionData::Call { callee, .. } = &mut f.dfg.insts[call] {
                    *callee = alloc;
                }
                report.heap += 1;
            }
        }
    }
    report.local_bytes += local_bytes;
    reserve_without_growth(f, push, &local_headers);
    // The frees of local tapes: `free(load header)`.
    let frees: Vec<Inst> = f
        .layout
        .insts()
        .filter(|(_, inst)| match &f.dfg.insts[*inst] {
            InstructionData::Call { callee, args, .. } if *callee == free => {
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
    if let Some(id) = module.function_by_name(DEVICE_ALLOC) {
        return id;
    }
    let mut f = Function::new(DEVICE_ALLOC, Signature::new(vec![Type::I64], Some(Type::PTR)));
    f.linkage = Linkage::Internal;
    f.attrs = FuncAttrs::NOUNWIND;
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
    module.add_function(f)
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
        let copy = b.create_block();
        let copy_byte = b.create_block();
        let release = b.create_block();
        let free_old = b.create_block();
        let replace = b.create_block();
        let index = b.append_block_param(copy, Type::I64);
        let (_, grown) = b.call(alloc, vec![new_bytes]);
        let grown = grown.expect("the device allocator returns a pointer");
        let used = b.binary(BinaryOp::Mul, top, size);
        let zero = b.iconst(Type::I64, 0);
        b.jump(copy, vec![zero]);

        // Bytewise: growth is rare (geometric), and element sizes vary.
        b.switch_to_block(copy);
        let more = b.icmp(IntCC::Ult, index, used);
        b.brif(more, BlockCall::new(copy_byte, Vec::new()), BlockCall::new(release, Vec::new()));
        b.switch_to_block(copy_byte);
        let from = b.ptradd(data, index);
        let byte = b.load(Type::I8, from, 1);
        let to = b.ptradd(grown, index);
        b.store(byte, to, 1);
        let one = b.iconst(Type::I64, 1);
        let next = b.binary(BinaryOp::Add, index, one);
        b.jump(copy, vec![next]);

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

    /// Lowers the test module's gradients with the tape layout on (`records`) or off.
    fn lowered(records: bool) -> (adc_ir::Module, super::DeviceTapes) {
        let text = module();
        let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
        let mut options = crate::DifferentiatorOptions::default();
        options.cache.records = records;
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
        for (_, inst) in f.layout.insts() {
            if let adc_ir::InstructionData::Call { callee, .. } = &f.dfg.insts[inst] {
                let callee = &module.functions[*callee].name;
                if ["malloc", "free", crate::callees::TAPE_PUSH].contains(&callee.as_str()) {
                    calls.push(callee.clone());
                }
            }
        }
        calls
    }

    /// One tape per value (`-cache-records`): every tape is pushed through the tape
    /// runtime, which gets its device body; no `realloc` remains and a second run of the
    /// rewrite changes nothing.
    #[test]
    fn per_value_tapes_grow_without_realloc() {
        let (mut module, tapes) = lowered(false);
        assert!(tapes.growing >= 1, "{tapes:?}");
        let printed = print_module(&module);
        assert!(!printed.contains("call @realloc"), "{printed}");
        let again = super::place_device_tapes(&mut module).expect("placed again");
        assert_eq!((again.local, again.heap), (0, 0), "{again:?}");
        assert_eq!(print_module(&module), printed);
        run_gradients(&module);
    }

    /// The default layout already puts the small constant-size tape on the stack and
    /// presizes counted loops with one `malloc` (the device heap in PTX): the rewrite only
    /// gives the growing tape its device body.
    #[test]
    fn record_tapes_use_the_stack_the_device_heap_and_grow_without_realloc() {
        let (module, tapes) = lowered(true);
        assert_eq!(tapes.growing, 1, "{tapes:?}");
        let printed = print_module(&module);
        assert!(!printed.contains("call @realloc"), "{printed}");
        assert_eq!(allocator_calls(&module, "fixed"), Vec::<String>::new());
        for presized in ["fixed_big", "counted"] {
            let calls = allocator_calls(&module, presized);
            assert!(calls.contains(&"malloc".to_string()), "{presized}: {calls:?}");
            assert!(
                !calls.contains(&crate::callees::TAPE_PUSH.to_string()),
                "{presized}: {calls:?}"
            );
        }
        run_gradients(&module);
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
