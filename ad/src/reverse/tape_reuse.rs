//! Tape memory kept across calls (`tape-reuse`, on by default): a heap tape allocation
//! site of a derivative keeps its buffer for the next call instead of freeing it, so
//! repeated gradient calls stop paying `malloc`, page faults and `free` for their tapes
//! (glibc `mmap`s large blocks and unmaps them on `free`: every call faulted its tape in
//! afresh).
//!
//! - **Slots.** Each heap allocation of presized tapes (one per loop nest with records) has
//!   a module global `__adc_tape_cache_<derivative>_<n>` of type `ptr`, zero-initialised,
//!   that holds a kept block or null. A block is `malloc`ed with a 16-byte header holding
//!   its capacity in bytes; the tapes use the bytes after the header (16-aligned, as
//!   `malloc` guarantees).
//! - **Take.** `__adc_tape_take(ptr slot, i64 bytes) -> ptr` replaces the `malloc` of the
//!   setup block: it swaps null into the slot (`atomicrmw xchg`), reuses the block it got
//!   when its capacity suffices, else frees it and allocates a new one with an eighth more
//!   room (so a slightly larger later call reuses it), and returns the data address.
//! - **Give back.** `__adc_tape_give(ptr slot, ptr data)` replaces the early and final
//!   `free`s: null data (a buffer already given back early) does nothing; otherwise the
//!   block goes back into the slot with `cmpxchg null -> block`, and is freed when the slot
//!   is occupied again (recursion, or another thread that ran the same derivative at the
//!   same time).
//!
//! The process thus keeps at most one block per allocation site, reachable from its
//! slot: valgrind counts it as "still reachable", which the leak check of
//! `tests/reverse.rs` accepts (it fails on definite and indirect leaks only). Not done
//! for GPU modules (nvptx: `reverse::gpu_tapes` places tapes in thread-local arrays and
//! on the device heap), for split functions (their tapes grow, and the `__enzyme_augmentfwd`
//! tape belongs to the caller), or for growing tapes (`__adc_tape_push` grows them with
//! `realloc` from null; starting it from a kept block would need the block header there
//! too). The slots are numbered while the derivative is synthesized (`Synth` only reads
//! the module) and added to the module right after (`add_tape_slots`).

use adc_ir::{
    AtomicRmwOp, BinaryOp, BlockCall, Constant, FuncAttrs, FuncId, Function, Global, GlobalId,
    Inst, InstructionData, IntCC, Linkage, Module, Ordering, Signature, Symbol, Type, Value,
};

use super::Synth;
use crate::callees::{TAPE_GIVE, TAPE_SLOT_PREFIX, TAPE_TAKE};

/// Bytes before the data of a kept block: its capacity (an `i64`), padded to the
/// alignment of tapes.
const BLOCK_HEADER: i128 = 16;

/// The two helpers a derivative with kept tapes calls.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TapeReuse {
    pub take: FuncId,
    pub give: FuncId,
}

/// Defines `__adc_tape_take` and `__adc_tape_give` in `module` (once).
pub(crate) fn define_tape_reuse(module: &mut Module, malloc: FuncId, free: FuncId) -> TapeReuse {
    let take = match module.function_by_name(TAPE_TAKE) {
        Some(id) => id,
        None => {
            let f = tape_take_body(module, malloc, free);
            module.add_function(f)
        }
    };
    let give = match module.function_by_name(TAPE_GIVE) {
        Some(id) => id,
        None => {
            let f = tape_give_body(module, free);
            module.add_function(f)
        }
    };
    TapeReuse { take, give }
}

/// `noinline`: the helpers run once per call of a derivative, so inlining them gains
/// nothing, and the take's `noalias_return` (see [`take_attrs`]) holds only for a call.
fn helper_attrs() -> FuncAttrs {
    FuncAttrs::NOINLINE | FuncAttrs::NOUNWIND
}

/// The take hands out a block no other pointer reaches (a fresh `malloc`, or the kept
/// block, which the exchange removed from its slot), as `malloc` does: alias analysis
/// then tells tape reads from the shadows and primal memory the reverse pass writes, so
/// loop-invariant tape reads leave the reverse loops (licm) as they did with `malloc`.
fn take_attrs() -> FuncAttrs {
    helper_attrs() | FuncAttrs::NOALIAS_RETURN
}

fn tape_take_body(module: &Module, malloc: FuncId, free: FuncId) -> Function {
    let sig = Signature::new(vec![Type::PTR, Type::I64], Some(Type::PTR));
    let mut f = Function::new(TAPE_TAKE, sig);
    f.linkage = Linkage::Internal;
    f.attrs = take_attrs();
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = adc_ir::builder::FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let [check, hand_out, release, allocate, record, failed] = [(); 6].map(|_| b.create_block());
    let params = b.func.dfg.block_params(entry).to_vec();
    let (slot, bytes) = (params[0], params[1]);
    let handed = b.append_block_param(hand_out, Type::PTR);
    b.switch_to_block(entry);
    let null = b.iconst(Type::PTR, 0);
    let kept = b.ins(InstructionData::AtomicRmw {
        op: AtomicRmwOp::Xchg,
        ptr: slot,
        value: null,
        ordering: Ordering::AcqRel,
        volatile: false,
    });
    let kept = kept.1.expect("atomicrmw has a result");
    let empty = b.icmp(IntCC::Eq, kept, null);
    b.brif(empty, BlockCall::new(allocate, Vec::new()), BlockCall::new(check, Vec::new()));
    b.switch_to_block(check);
    let capacity = b.load(Type::I64, kept, 8);
    let fits = b.icmp(IntCC::Uge, capacity, bytes);
    b.brif(fits, BlockCall::new(hand_out, vec![kept]), BlockCall::new(release, Vec::new()));
    b.switch_to_block(release);
    b.call(free, vec![kept]);
    b.jump(allocate, Vec::new());
    b.switch_to_block(allocate);
    // An eighth more room, in whole 64-byte lines, so a slightly larger next call fits.
    let three = b.iconst(Type::I64, 3);
    let eighth = b.binary(BinaryOp::Lshr, bytes, three);
    let roomy = b.binary(BinaryOp::Add, bytes, eighth);
    let line = b.iconst(Type::I64, 63);
    let padded = b.binary(BinaryOp::Add, roomy, line);
    let lines = b.iconst(Type::I64, !63);
    let capacity = b.binary(BinaryOp::And, padded, lines);
    let header = b.iconst(Type::I64, BLOCK_HEADER);
    let total = b.binary(BinaryOp::Add, capacity, header);
    let (_, block) = b.call(malloc, vec![total]);
    let block = block.expect("malloc returns a pointer");
    let out_of_memory = b.icmp(IntCC::Eq, block, null);
    b.brif(out_of_memory, BlockCall::new(failed, Vec::new()), BlockCall::new(record, Vec::new()));
    b.switch_to_block(record);
    b.store(capacity, block, 8);
    b.jump(hand_out, vec![block]);
    b.switch_to_block(hand_out);
    let header = b.iconst(Type::I64, BLOCK_HEADER);
    let data = b.ptradd(handed, header);
    b.ret(Some(data));
    // Out of memory: null, as `malloc` gave before.
    b.switch_to_block(failed);
    b.ret(Some(null));
    f
}

fn tape_give_body(module: &Module, free: FuncId) -> Function {
    let sig = Signature::new(vec![Type::PTR, Type::PTR], None);
    let mut f = Function::new(TAPE_GIVE, sig);
    f.linkage = Linkage::Internal;
    f.attrs = helper_attrs();
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = adc_ir::builder::FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let (put, release, done) = (b.create_block(), b.create_block(), b.create_block());
    let params = b.func.dfg.block_params(entry).to_vec();
    let (slot, data) = (params[0], params[1]);
    b.switch_to_block(entry);
    let null = b.iconst(Type::PTR, 0);
    let freed = b.icmp(IntCC::Eq, data, null);
    b.brif(freed, BlockCall::new(done, Vec::new()), BlockCall::new(put, Vec::new()));
    b.switch_to_block(put);
    let back = b.iconst(Type::I64, -BLOCK_HEADER);
    let block = b.ptradd(data, back);
    let swapped = b.ins(InstructionData::CmpXchg {
        ptr: slot,
        expected: null,
        new: block,
        success: Ordering::AcqRel,
        failure: Ordering::Monotonic,
        weak: false,
        volatile: false,
    });
    let swapped = swapped.1.expect("cmpxchg has a result");
    let kept = b.ins(InstructionData::ExtractValue { aggregate: swapped, indices: vec![1] }).1;
    let kept = kept.expect("extractvalue has a result");
    b.brif(kept, BlockCall::new(done, Vec::new()), BlockCall::new(release, Vec::new()));
    b.switch_to_block(release);
    b.call(free, vec![block]);
    b.jump(done, Vec::new());
    b.switch_to_block(done);
    b.ret(None);
    f
}

/// Adds the `count` slot globals numbered while `derivative` was synthesized; they take
/// the next global ids, which the synthesized code names.
pub(crate) fn add_tape_slots(module: &mut Module, derivative: &str, count: usize) {
    for n in 0..count {
        module.add_global(pointer_slot(&format!("{TAPE_SLOT_PREFIX}{derivative}_{n}")));
    }
}

/// An internal, zero-initialised `ptr` global named `name`: a slot for memory kept across
/// calls (here and `reverse::arena`).
pub(crate) fn pointer_slot(name: &str) -> Global {
    Global {
        name: name.to_string(),
        ty: Type::PTR,
        linkage: Linkage::Internal,
        constant: false,
        align: 8,
        addr_space: Default::default(),
        init: Some(Constant::Zero),
    }
}

impl Synth<'_> {
    /// The helpers when this derivative keeps its heap tapes across calls.
    pub(super) fn tape_reuse(&self) -> Option<TapeReuse> {
        let enabled = self.plan.options.tape_reuse && self.split.is_none();
        self.runtime.tape_reuse.filter(|_| enabled)
    }

    /// A new slot global for one heap allocation site: its id is the next after the
    /// module's globals and the slots numbered before it (see `add_tape_slots`).
    pub(super) fn new_tape_slot(&mut self) -> GlobalId {
        let n = self.cache.stats.tape_slots;
        self.cache.stats.tape_slots += 1;
        let index = u32::try_from(self.module.globals.len() + n).expect("fewer than 2^32 globals");
        GlobalId::from_u32(index)
    }

    /// `take(slot, bytes)` in the setup block: the buffer of a kept allocation site.
    pub(super) fn take_tape_buffer(
        &mut self,
        reuse: TapeReuse,
        slot: GlobalId,
        bytes: Value,
    ) -> Value {
        let address = Constant::Address { symbol: Symbol::Global(slot), offset: 0 };
        let slot = self.setup_constant(Type::PTR, address);
        self.ins_setup(InstructionData::Call {
            callee: reuse.take,
            args: vec![slot, bytes],
            attrs: FuncAttrs::empty(),
        })
        .expect("the take helper returns a pointer")
    }

    /// `give(slot, data)` before `before`, or at `self.cur` when `None`.
    pub(super) fn give_tape_buffer(
        &mut self,
        reuse: TapeReuse,
        slot: GlobalId,
        data: Value,
        before: Option<Inst>,
    ) {
        let address = Constant::Address { symbol: Symbol::Global(slot), offset: 0 };
        let slot = InstructionData::Const { ty: Type::PTR, value: address };
        let slot = match before {
            Some(at) => self.ins_before(at, slot),
            None => self.ins(slot),
        };
        let Some(slot) = slot else { return };
        let call = InstructionData::Call {
            callee: reuse.give,
            args: vec![slot, data],
            attrs: FuncAttrs::empty(),
        };
        match before {
            Some(at) => self.ins_before(at, call),
            None => self.ins(call),
        };
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::{FuncId, GlobalId, Module, Signature, Type};

    use super::{add_tape_slots, define_tape_reuse, TapeReuse};

    /// A module with the two helpers and one slot.
    fn helpers() -> (Module, TapeReuse, GlobalId) {
        let mut module = Module::new();
        let mut declare = |name: &str, params: Vec<Type>, ret: Option<Type>| -> FuncId {
            module.add_function(adc_ir::Function::new(name, Signature::new(params, ret)))
        };
        let malloc = declare("malloc", vec![Type::I64], Some(Type::PTR));
        let free = declare("free", vec![Type::PTR], None);
        let reuse = define_tape_reuse(&mut module, malloc, free);
        add_tape_slots(&mut module, "d", 1);
        adc_ir::verify::verify_module(&module).expect("the helpers verify");
        (module, reuse, GlobalId::from_u32(0))
    }

    fn address(v: Option<Val>) -> u64 {
        match v {
            Some(Val::Ptr(p)) => p,
            other => panic!("expected a pointer, got {other:?}"),
        }
    }

    #[test]
    fn a_given_back_buffer_is_reused_while_big_enough_and_one_is_kept_per_slot() {
        let (module, reuse, slot) = helpers();
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let slot = interp.global_address(slot).expect("the slot has an address");
        let kept = |interp: &Interpreter| match interp.read(&slot, &Type::PTR, 1).unwrap()[0] {
            Val::Ptr(p) => p,
            ref other => panic!("slot holds {other:?}"),
        };
        let take = |interp: &mut Interpreter, bytes: u128| {
            address(interp.call(reuse.take, &[slot.clone(), Val::Int(bytes)]).unwrap())
        };
        let give = |interp: &mut Interpreter, data: u64| {
            interp.call(reuse.give, &[slot.clone(), Val::Ptr(data)]).unwrap();
        };
        let first = take(&mut interp, 100);
        assert_ne!(first, 0);
        assert_eq!(kept(&interp), 0, "taken blocks leave the slot empty");
        give(&mut interp, first);
        assert_eq!(kept(&interp), first - 16, "the block goes back to the slot");
        // 100 bytes got an eighth more room, in 64-byte lines: 128.
        let capacity = interp.read(&Val::Ptr(first - 16), &Type::I64, 1).unwrap();
        assert_eq!(capacity, vec![Val::Int(128)]);
        assert_eq!(take(&mut interp, 128), first, "a call that fits reuses the block");
        // A second taker while the block is out gets a new block; giving both back keeps
        // one and frees the other (reading it again is a use after free).
        let second = take(&mut interp, 64);
        assert_ne!(second, first);
        give(&mut interp, first);
        give(&mut interp, second);
        assert_eq!(kept(&interp), first - 16);
        assert!(interp.read(&Val::Ptr(second - 16), &Type::I64, 1).is_err());
        // Null data (a buffer given back early) does nothing.
        give(&mut interp, 0);
        assert_eq!(kept(&interp), first - 16);
        // Too small: the kept block is freed and a larger one handed out.
        let larger = take(&mut interp, 4096);
        assert_eq!(kept(&interp), 0);
        assert!(interp.read(&Val::Ptr(first - 16), &Type::I64, 1).is_err());
        let capacity = interp.read(&Val::Ptr(larger - 16), &Type::I64, 1).unwrap();
        assert_eq!(capacity, vec![Val::Int(4608)]);
    }
}
