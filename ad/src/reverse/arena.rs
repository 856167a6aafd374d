//! Frame arenas: the heap frames of split calls come from a bump allocator owned by the
//! outermost derivative of the call tree instead of one `malloc` and `free` each.
//!
//! Every dynamic split call needs a frame that lives from its forward phase to its
//! reverse phase. Allocated one by one, a recursive callee (FFT's `fft_rec`: 2n - 1 calls
//! per gradient) spent about a third of the gradient in `malloc`/`free`. But all frames
//! of one call tree are released together: every forward phase of the tree runs before
//! any reverse phase reads a frame, and the tree's root outlives all of them. So:
//!
//! - **The arena** is a 24-byte header `{chunk, used, capacity}` over a list of chunks
//!   (`malloc`ed, 16-byte link header, doubling from 4 KiB); `__adc_arena_alloc(arena,
//!   bytes)` bumps `used` (16-byte granules) and starts a new chunk when one is full;
//!   `__adc_arena_release(arena)` frees the chunks and empties the header.
//! - **Who owns one**: a derivative that makes split calls keeps a header in an entry
//!   `alloca` and releases it at its final return; a split function keeps one as the
//!   last field of its frame (emptied where the frame of a root is made: `malloc`ed, or
//!   the caller's memory) and releases it at the end of its reverse phase, after the
//!   reverse phases of its callees. A frame from an arena is never a root, so it leaves
//!   that field out (FFT's leaves and inner calls: 64 bytes instead of 88) and releases
//!   null, which does nothing.
//! - **Who uses it**: split functions take the arena to allocate their frame from as a
//!   parameter (before the frame pointer). A call passes its own arena when it was given
//!   null (it is the root of its tree: a derivative, or a split function called by user
//!   code through `__enzyme_augmentfwd`), else the one it was given, so one tree shares
//!   the root's arena. A frame from an arena has ownership flag 0, so the reverse phase
//!   does not free it; a split function called with a null arena still `malloc`s its frame.
//!
//! Thread safety needs nothing: each root invocation has its own arena. Peak memory is
//! the same as with one allocation per frame, since every frame of the tree is live when
//! the forward phases end. Not used on GPUs (`nvptx` modules): split calls there keep
//! per-frame device-heap allocations.

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    AtomicRmwOp, BinaryOp, BlockCall, Constant, FuncAttrs, FuncId, Function, GlobalId, Inst,
    InstFlags, InstructionData, IntCC, Linkage, Module, Ordering, Signature, Symbol, Type, Value,
};

use super::Synth;

/// `__adc_arena_alloc(ptr arena, i64 bytes) -> ptr`: `bytes` from the arena, 16-aligned;
/// `malloc(bytes)` when the arena is null.
pub const ARENA_ALLOC: &str = "__adc_arena_alloc";
/// `__adc_arena_release(ptr arena)`: frees every chunk (or keeps the largest, see
/// [`ARENA_CACHE`]); the arena is empty again. Nothing for a null arena.
pub const ARENA_RELEASE: &str = "__adc_arena_release";
/// The module global (`ptr`, zero-initialised) holding a chunk kept for the next call
/// (with `tape-reuse`, as `tape_reuse` keeps tape buffers): an arena's
/// chunks outgrow `malloc`'s `mmap` threshold, and a chunk freed to the kernel is
/// faulted in afresh by every gradient.
pub const ARENA_CACHE: &str = "__adc_arena_cache";
/// Bytes of an arena header: the newest chunk, bytes used in it, its capacity.
pub(crate) const ARENA_HEADER_BYTES: u64 = 24;
/// Bytes before a chunk's data: the link to the previous chunk and the data capacity.
/// Capacities double along the list, so the newest chunk is the largest.
const CHUNK_HEADER_BYTES: i128 = 16;
/// Data bytes of the first chunk; later ones double.
const FIRST_CHUNK_BYTES: i128 = 4096;

/// The two helpers split calls use.
#[derive(Copy, Clone, Debug)]
pub(crate) struct FrameArena {
    pub alloc: FuncId,
    pub release: FuncId,
}

/// Defines `__adc_arena_alloc` and `__adc_arena_release` in `module` (once); with
/// `keep_chunk`, they keep one chunk across calls in [`ARENA_CACHE`].
pub(crate) fn define_frame_arena(
    module: &mut Module,
    malloc: FuncId,
    free: FuncId,
    keep_chunk: bool,
) -> FrameArena {
    if let (Some(alloc), Some(release)) =
        (module.function_by_name(ARENA_ALLOC), module.function_by_name(ARENA_RELEASE))
    {
        return FrameArena { alloc, release };
    }
    let cache = keep_chunk.then(|| {
        module
            .global_by_name(ARENA_CACHE)
            .unwrap_or_else(|| module.add_global(super::tape_reuse::pointer_slot(ARENA_CACHE)))
    });
    let f = arena_alloc_body(module, malloc, free, cache);
    let alloc = module.add_function(f);
    let f = arena_release_body(module, free, cache);
    let release = module.add_function(f);
    FrameArena { alloc, release }
}

fn helper(name: &str, sig: Signature) -> Function {
    let mut f = Function::new(name, sig);
    f.linkage = Linkage::Internal;
    f.attrs = FuncAttrs::NOINLINE | FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN;
    f
}

fn global_address(b: &mut FunctionBuilder<'_>, global: GlobalId) -> Value {
    b.constant(Type::PTR, Constant::Address { symbol: Symbol::Global(global), offset: 0 })
}

fn arena_alloc_body(
    module: &Module,
    malloc: FuncId,
    free: FuncId,
    cache: Option<GlobalId>,
) -> Function {
    let mut f = helper(ARENA_ALLOC, Signature::new(vec![Type::PTR, Type::I64], Some(Type::PTR)));
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let [heap, from_arena, grow, fresh, link, bump] = [(); 6].map(|_| b.create_block());
    let params = b.func.dfg.block_params(entry).to_vec();
    let (arena, bytes) = (params[0], params[1]);
    let linked = b.append_block_param(link, Type::PTR);
    let linked_cap = b.append_block_param(link, Type::I64);

    b.switch_to_block(entry);
    let null = b.constant(Type::PTR, Constant::Int(0));
    let no_arena = b.icmp(IntCC::Eq, arena, null);
    b.brif(no_arena, BlockCall::new(heap, Vec::new()), BlockCall::new(from_arena, Vec::new()));

    b.switch_to_block(heap);
    let (_, block) = b.call(malloc, vec![bytes]);
    b.ret(block);

    b.switch_to_block(from_arena);
    let eight = b.iconst(Type::I64, 8);
    let sixteen = b.iconst(Type::I64, 16);
    let used_ptr = b.ptradd(arena, eight);
    let cap_ptr = b.ptradd(arena, sixteen);
    let used = b.load(Type::I64, used_ptr, 8);
    let cap = b.load(Type::I64, cap_ptr, 8);
    let fifteen = b.iconst(Type::I64, 15);
    let padded = b.binary(BinaryOp::Add, bytes, fifteen);
    let mask = b.iconst(Type::I64, -16);
    let need = b.binary(BinaryOp::And, padded, mask);
    let end = b.binary(BinaryOp::Add, used, need);
    // An empty header has capacity 0, so the first request starts a chunk.
    let full = b.icmp(IntCC::Ugt, end, cap);
    b.brif(full, BlockCall::new(grow, Vec::new()), BlockCall::new(bump, Vec::new()));

    b.switch_to_block(grow);
    let two = b.iconst(Type::I64, 2);
    let doubled = b.binary(BinaryOp::Mul, cap, two);
    let first = b.iconst(Type::I64, FIRST_CHUNK_BYTES);
    let at_least = b.binary(BinaryOp::Umax, doubled, first);
    let new_cap = b.binary(BinaryOp::Umax, at_least, need);
    match cache {
        // The kept chunk when it is large enough (freed otherwise).
        Some(cache) => {
            let [check, take, drop] = [(); 3].map(|_| b.create_block());
            let slot = global_address(&mut b, cache);
            let (_, kept) = b.ins(InstructionData::AtomicRmw {
                op: AtomicRmwOp::Xchg,
                ptr: slot,
                value: null,
                ordering: Ordering::AcqRel,
                volatile: false,
            });
            let kept = kept.expect("atomicrmw has a result");
            let none = b.icmp(IntCC::Eq, kept, null);
            b.brif(none, BlockCall::new(fresh, Vec::new()), BlockCall::new(check, Vec::new()));
            b.switch_to_block(check);
            let kept_cap_ptr = b.ptradd(kept, eight);
            let kept_cap = b.load(Type::I64, kept_cap_ptr, 8);
            let fits = b.icmp(IntCC::Uge, kept_cap, new_cap);
            b.brif(fits, BlockCall::new(take, Vec::new()), BlockCall::new(drop, Vec::new()));
            b.switch_to_block(take);
            b.jump(link, vec![kept, kept_cap]);
            b.switch_to_block(drop);
            b.call(free, vec![kept]);
            b.jump(fresh, Vec::new());
        }
        None => {
            b.jump(fresh, Vec::new());
        }
    }

    b.switch_to_block(fresh);
    let header = b.iconst(Type::I64, CHUNK_HEADER_BYTES);
    let total = b.binary(BinaryOp::Add, new_cap, header);
    let (_, chunk) = b.call(malloc, vec![total]);
    let chunk = chunk.expect("malloc returns a pointer");
    b.jump(link, vec![chunk, new_cap]);

    b.switch_to_block(link);
    let previous = b.load(Type::PTR, arena, 8);
    b.store(previous, linked, 8);
    let linked_cap_ptr = b.ptradd(linked, eight);
    b.store(linked_cap, linked_cap_ptr, 8);
    b.store(linked, arena, 8);
    let zero = b.iconst(Type::I64, 0);
    b.store(zero, used_ptr, 8);
    b.store(linked_cap, cap_ptr, 8);
    b.jump(bump, Vec::new());

    b.switch_to_block(bump);
    let chunk = b.load(Type::PTR, arena, 8);
    let used = b.load(Type::I64, used_ptr, 8);
    let header = b.iconst(Type::I64, CHUNK_HEADER_BYTES);
    let offset = b.binary(BinaryOp::Add, used, header);
    let addr = b.ptradd(chunk, offset);
    let next = b.binary(BinaryOp::Add, used, need);
    b.store(next, used_ptr, 8);
    b.ret(Some(addr));
    f
}

fn arena_release_body(module: &Module, free: FuncId, cache: Option<GlobalId>) -> Function {
    let mut f = helper(ARENA_RELEASE, Signature::new(vec![Type::PTR], None));
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let [start, walk, free_one, done, skip] = [(); 5].map(|_| b.create_block());
    let arena = b.func.dfg.block_params(entry)[0];
    let chunk = b.append_block_param(walk, Type::PTR);

    // A null header: a split function's frame from an arena, which has none.
    b.switch_to_block(entry);
    let null = b.constant(Type::PTR, Constant::Int(0));
    let no_header = b.icmp(IntCC::Eq, arena, null);
    b.brif(no_header, BlockCall::new(skip, Vec::new()), BlockCall::new(start, Vec::new()));
    b.switch_to_block(skip);
    b.ret(None);

    b.switch_to_block(start);
    let newest = b.load(Type::PTR, arena, 8);
    match cache {
        // The newest chunk is the largest: offered to the slot, the older ones freed.
        Some(cache) => {
            let [offer, release] = [(); 2].map(|_| b.create_block());
            let empty = b.icmp(IntCC::Eq, newest, null);
            b.brif(empty, BlockCall::new(done, Vec::new()), BlockCall::new(offer, Vec::new()));
            b.switch_to_block(offer);
            let older = b.load(Type::PTR, newest, 8);
            b.store(null, newest, 8);
            let slot = global_address(&mut b, cache);
            let (_, swapped) = b.ins(InstructionData::CmpXchg {
                ptr: slot,
                expected: null,
                new: newest,
                success: Ordering::AcqRel,
                failure: Ordering::Monotonic,
                weak: false,
                volatile: false,
            });
            let swapped = swapped.expect("cmpxchg has a result");
            let (_, kept) =
                b.ins(InstructionData::ExtractValue { aggregate: swapped, indices: vec![1] });
            let kept = kept.expect("extractvalue has a result");
            b.brif(kept, BlockCall::new(walk, vec![older]), BlockCall::new(release, Vec::new()));
            // Another thread's chunk is kept already.
            b.switch_to_block(release);
            b.call(free, vec![newest]);
            b.jump(walk, vec![older]);
        }
        None => {
            b.jump(walk, vec![newest]);
        }
    }

    b.switch_to_block(walk);
    let at_end = b.icmp(IntCC::Eq, chunk, null);
    b.brif(at_end, BlockCall::new(done, Vec::new()), BlockCall::new(free_one, Vec::new()));

    b.switch_to_block(free_one);
    let previous = b.load(Type::PTR, chunk, 8);
    b.call(free, vec![chunk]);
    b.jump(walk, vec![previous]);

    b.switch_to_block(done);
    let zero = b.iconst(Type::I64, 0);
    b.store(null, arena, 8);
    for offset in [8, 16] {
        let offset = b.iconst(Type::I64, offset);
        let ptr = b.ptradd(arena, offset);
        b.store(zero, ptr, 8);
    }
    b.ret(None);
    f
}

/// The arena a synthesis owns (see the module header).
#[derive(Copy, Clone, Debug)]
pub(crate) struct OwnArena {
    /// Its header: an entry `alloca`, or a slot of the split function's frame.
    pub header: Value,
    /// What this function's split calls allocate their frames from: its own arena, or
    /// (split functions) the one it was given.
    pub for_calls: Value,
}

impl<'a> Synth<'a> {
    /// The arena argument of a split call's forward phase (null without arenas: GPU
    /// modules). Creates this function's own arena on first use.
    pub(super) fn arena_for_calls(&mut self) -> Value {
        if let Some(own) = self.own_arena {
            return own.for_calls;
        }
        if self.runtime.arena.is_none() {
            return self.constant(Type::PTR, Constant::Int(0));
        }
        let header = match self.split {
            // A split function: the last field of its frame, emptied where the frame of a
            // root is made (frames from an arena leave it out).
            Some(_) => {
                let (header, at_roots) = self.root_frame_slot(ARENA_HEADER_BYTES);
                for (before, root_header) in at_roots {
                    self.empty_arena_header(Some(before), root_header);
                }
                header
            }
            // A derivative: an entry `alloca`, emptied in the setup block.
            None => {
                let header_ty = Type::array(Type::I64, ARENA_HEADER_BYTES / 8);
                let header = self.new_slot(header_ty);
                self.empty_arena_header(None, header);
                header
            }
        };
        let null = self.setup_constant(Type::PTR, Constant::Int(0));
        let for_calls = match self.split.as_ref().map(|s| s.arena) {
            // The arena given, or this one when none was (the root of its call tree).
            Some(given) => {
                let none = self
                    .ins_tape_init(InstructionData::Icmp { cond: IntCC::Eq, args: [given, null] })
                    .expect("icmp has a result");
                self.ins_tape_init(InstructionData::Select {
                    flags: InstFlags::empty(),
                    args: [none, header, given],
                })
                .expect("select has a result")
            }
            None => header,
        };
        self.own_arena = Some(OwnArena { header, for_calls });
        for_calls
    }

    /// Stores an empty arena header `{null, 0, 0}` at `header`, before `before` or in the
    /// setup block.
    fn empty_arena_header(&mut self, before: Option<Inst>, header: Value) {
        let emit = |synth: &mut Self, data: InstructionData| match before {
            Some(at) => synth.ins_before(at, data),
            None => synth.ins_setup(data),
        };
        let null = emit(self, InstructionData::Const { ty: Type::PTR, value: Constant::Int(0) })
            .expect("const has a result");
        let zero = emit(self, InstructionData::Const { ty: Type::I64, value: Constant::Int(0) })
            .expect("const has a result");
        for (offset, value) in [(0, null), (8, zero), (16, zero)] {
            let ptr = if offset == 0 {
                header
            } else {
                let offset = emit(
                    self,
                    InstructionData::Const { ty: Type::I64, value: Constant::Int(offset) },
                )
                .expect("const has a result");
                emit(
                    self,
                    InstructionData::PtrAdd { flags: InstFlags::empty(), ptr: header, offset },
                )
                .expect("ptradd has a result")
            };
            emit(self, InstructionData::Store { value, ptr, align: 8, volatile: false });
        }
    }

    /// Before the final return: releases this function's own arena, after the reverse
    /// phases of the calls that allocated from it (empty when it was not their root). A
    /// split function's frame from an arena has no own header: it passes null, which the
    /// release ignores.
    pub(super) fn release_own_arena(&mut self) {
        let (Some(own), Some(arena)) = (self.own_arena, self.runtime.arena) else { return };
        let Some(ret) = self.cache.final_return else { return };
        if self.f.layout.inst_block(ret).is_none() {
            return;
        }
        let header = match self.split {
            Some(_) => self.root_only(own.header, ret),
            None => own.header,
        };
        self.ins_before(
            ret,
            InstructionData::Call {
                callee: arena.release,
                args: vec![header],
                attrs: FuncAttrs::empty(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::{FuncId, Module, Signature, Type};

    use super::{define_frame_arena, FrameArena, ARENA_CACHE, FIRST_CHUNK_BYTES};

    fn helpers(keep_chunk: bool) -> (Module, FrameArena) {
        let mut module = Module::new();
        let mut declare = |name: &str, params: Vec<Type>, ret: Option<Type>| -> FuncId {
            module.add_function(adc_ir::Function::new(name, Signature::new(params, ret)))
        };
        let malloc = declare("malloc", vec![Type::I64], Some(Type::PTR));
        let free = declare("free", vec![Type::PTR], None);
        let arena = define_frame_arena(&mut module, malloc, free, keep_chunk);
        adc_ir::verify::verify_module(&module).expect("the helpers verify");
        (module, arena)
    }

    fn address(v: Option<Val>) -> u64 {
        match v {
            Some(Val::Ptr(p)) => p,
            other => panic!("expected a pointer, got {other:?}"),
        }
    }

    fn words(interp: &Interpreter, at: u64, count: usize) -> Vec<Val> {
        interp.read(&Val::Ptr(at), &Type::I64, count).expect("readable")
    }

    #[test]
    fn bumps_in_granules_chains_doubling_chunks_and_frees_them_all() {
        let (module, arena) = helpers(false);
        assert!(module.global_by_name(ARENA_CACHE).is_none());
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let header =
            interp.alloc(&Type::I64, &[Val::Int(0), Val::Int(0), Val::Int(0)]).expect("header");
        let Val::Ptr(at) = header else { panic!("a pointer") };
        let alloc = |interp: &mut Interpreter, bytes: u128| {
            address(interp.call(arena.alloc, &[header.clone(), Val::Int(bytes)]).unwrap())
        };
        let a = alloc(&mut interp, 24);
        let b = alloc(&mut interp, 8);
        assert_eq!(b, a + 32, "24 bytes take two 16-byte granules");
        assert_eq!(a % 16, 0);
        let first_chunk = a - 16;
        assert_eq!(
            words(&interp, at, 3),
            vec![Val::Int(first_chunk as u128), Val::Int(48), Val::Int(FIRST_CHUNK_BYTES as u128)]
        );
        // More than the rest of the chunk: a second one, twice as large, linked to the first.
        let c = alloc(&mut interp, 4090);
        let second_chunk = c - 16;
        assert_ne!(second_chunk, first_chunk);
        assert_eq!(
            words(&interp, second_chunk, 2),
            vec![Val::Int(first_chunk as u128), Val::Int(8192)]
        );
        interp.call(arena.release, std::slice::from_ref(&header)).unwrap();
        let empty = vec![Val::Int(0), Val::Int(0), Val::Int(0)];
        assert_eq!(words(&interp, at, 3), empty, "the header is empty again");
        assert!(interp.read(&Val::Ptr(first_chunk), &Type::I64, 1).is_err(), "freed");
        assert!(interp.read(&Val::Ptr(second_chunk), &Type::I64, 1).is_err(), "freed");
        // A null arena is `malloc`.
        let plain = address(interp.call(arena.alloc, &[Val::Ptr(0), Val::Int(40)]).unwrap());
        assert!(plain != 0 && plain != first_chunk && plain != second_chunk);
    }

    #[test]
    fn the_newest_chunk_is_kept_for_the_next_arena_while_large_enough() {
        let (module, arena) = helpers(true);
        let cache = module.global_by_name(ARENA_CACHE).expect("the cache global");
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let cache = interp.global_address(cache).expect("an address");
        let kept = |interp: &Interpreter| match interp.read(&cache, &Type::PTR, 1).unwrap()[0] {
            Val::Ptr(p) => p,
            ref other => panic!("the cache holds {other:?}"),
        };
        let header =
            interp.alloc(&Type::I64, &[Val::Int(0), Val::Int(0), Val::Int(0)]).expect("header");
        let alloc = |interp: &mut Interpreter, bytes: u128| {
            address(interp.call(arena.alloc, &[header.clone(), Val::Int(bytes)]).unwrap())
        };
        let first = alloc(&mut interp, 4096) - 16;
        let second = alloc(&mut interp, 16) - 16;
        interp.call(arena.release, std::slice::from_ref(&header)).unwrap();
        assert_eq!(kept(&interp), second, "the newest (largest) chunk is kept");
        assert!(interp.read(&Val::Ptr(first), &Type::I64, 1).is_err(), "the older one is freed");
        // The next arena starts in the kept chunk (8192 bytes)...
        let again = alloc(&mut interp, 100);
        assert_eq!(again, second + 16);
        assert_eq!(kept(&interp), 0, "taken out of the cache");
        interp.call(arena.release, std::slice::from_ref(&header)).unwrap();
        assert_eq!(kept(&interp), second);
        // ...but not when its first request does not fit: freed, and a fresh chunk.
        let big = alloc(&mut interp, 10_000) - 16;
        assert_ne!(big, second);
        assert!(interp.read(&Val::Ptr(second), &Type::I64, 1).is_err());
    }

    #[test]
    fn releasing_a_null_arena_does_nothing() {
        // A split function's frame from an arena has no own header and passes null.
        for keep_chunk in [false, true] {
            let (module, arena) = helpers(keep_chunk);
            let mut interp = Interpreter::new(&module).expect("interpreter");
            let result = interp.call(arena.release, &[Val::Ptr(0)]);
            assert!(result.is_ok(), "release(null) must not touch memory: {result:?}");
        }
    }
}
