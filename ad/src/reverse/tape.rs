//! Tape storage: how values cached inside loops are kept from the forward pass to the
//! reverse pass.
//!
//! - **Records.** The values of one forward block taped by the reverse pass share one
//!   tape whose element is a record of those values: the forward pass pushes one record
//!   per execution of the block (before its terminator: every field is defined there),
//!   with one capacity check and one index update, not one per value; the reverse pass
//!   loads each field from the top record, and pops it at the end of the block's reverse
//!   region. Fields are discovered while the reverse pass is synthesized, so the record
//!   size is only known at the end: the constants holding it are patched in
//!   `finish_tapes`, which also emits the pushes.
//! - **Presized tapes.** When every loop around the block has a trip count known on entry
//!   (constant, or computed from the function's parameters), the number of records is
//!   bounded by the product of the header executions; the tapes of one loop nest share
//!   one allocation in the setup block (the sum of capacity × record size) and push
//!   without a capacity check. Otherwise a tape grows through `__adc_tape_push`
//!   (`define_tape_push`, the one growth path; GPU targets hook it).
//! - **Stack tapes.** Presized tapes whose sizes are compile-time constants are an
//!   entry-block `alloca` while the derivative's stack tapes stay within
//!   `STACK_TAPE_LIMIT` bytes; heap otherwise.
//! - **Early frees.** A heap buffer of a loop nest is freed when the reverse pass enters
//!   the reverse region of the nest's preheader (the reverse of the nest is then over);
//!   its header pointer is nulled, and every heap buffer is freed again (`free(null)`
//!   when already freed) before the derivative returns, so no path leaks. Split
//!   functions (whose reverse half runs in another invocation) keep growing tapes freed
//!   at the end.
//!
//! - **Kept buffers.** With `tape-reuse` (on by default, CPU only) a heap allocation site
//!   takes its buffer from a module global slot and gives it back there instead of
//!   freeing it, so the next call reuses it (`tape_reuse`).
//!
//! A tape is a `{ptr data, i64 top, i64 capacity}` header. The switch `cache-records`
//! (on by default) turns records, shared and stack allocations and early frees off: one
//! tape per value, its own `malloc` when presized, pushes through `__adc_tape_push`.

use std::collections::HashMap;

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    BinaryOp, Block, BlockCall, CastOp, Constant, FuncAttrs, FuncId, Function, GlobalId, Inst,
    InstFlags, InstructionData, IntCC, Linkage, Module, Signature, Type, Value, ValueDef,
};
use adc_passes::ivs::{Affine, TripCount};
use adc_passes::loops::LoopId;

use super::tape_reuse::TapeReuse;
use super::Synth;
use crate::cache::{TapeAllocation, TapeEntry, TapeRole, TapeStorage};
use crate::callees::{ENZYME_ITER, TAPE_PUSH};

/// Most bytes of presized, constant-size tapes one derivative keeps on its stack.
pub const STACK_TAPE_LIMIT: u64 = 4096;

/// Alignment of every tape in a shared allocation (what `malloc` guarantees).
const TAPE_ALIGN: u64 = 16;

/// Byte offsets of the fields of a tape header `{ptr data, i64 top, i64 capacity}`
/// (`data` is at 0); the GPU rewrite (`reverse::gpu_tapes`) reads the same header.
pub(crate) const TAPE_TOP_OFFSET: i128 = 8;
pub(crate) const TAPE_CAPACITY_OFFSET: i128 = 16;

/// A tape: its header and its index in `TapeStore::infos`.
#[derive(Clone, Debug)]
pub(crate) struct Tape {
    header: Value,
    id: usize,
}

/// What a tape holds, when tapes are kept apart by kind (`CacheOptions::tapes_by_kind`;
/// otherwise every tape is `Mixed`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum TapeKind {
    Mixed,
    /// Floats that carry a derivative.
    ActiveFloats,
    Pointers,
    /// Integers, and floats that carry no derivative.
    Passive,
}

#[derive(Clone, Debug)]
struct Field {
    value: Value,
    ty: Type,
    offset: u64,
}

/// Number of elements a tape receives, as a setup-block value, and as a constant when
/// every trip count is one.
#[derive(Copy, Clone, Debug)]
struct Capacity {
    value: Value,
    constant: Option<u64>,
}

#[derive(Clone, Debug)]
struct TapeInfo {
    header: Value,
    role: TapeRole,
    /// Record fields (records only).
    fields: Vec<Field>,
    /// The element of exit and control tapes.
    elem: Option<Type>,
    /// Element bytes before rounding to `align`.
    size: u64,
    align: u64,
    /// Constants holding the element size, patched when the record is complete.
    size_consts: Vec<Inst>,
    /// The forward block that pushes the record (records only).
    push_block: Option<Block>,
    /// The primal block whose executions the tape counts (innermost loop for reports).
    primal_block: Option<Block>,
    capacity: Option<Capacity>,
    /// The outermost loop around the primal block.
    nest: Option<LoopId>,
    storage: TapeStorage,
    /// Index in `TapeStore::allocations` of the shared allocation it lives in.
    allocation: Option<usize>,
    /// Tapes of different kinds never share a record or an allocation.
    kind: TapeKind,
}

impl TapeInfo {
    fn element_size(&self) -> u64 {
        self.size.max(1).div_ceil(self.align) * self.align
    }
}

/// How a heap tape buffer is released.
#[derive(Copy, Clone, Debug)]
enum Release {
    Free,
    /// Back to its slot (`tape_reuse`).
    Give(GlobalId, TapeReuse),
    /// A split function's presized buffer: from its frame's arena when the frame came
    /// from one (ownership flag `FRAME_IN_ARENA`), where the arena's root releases it;
    /// else from `malloc`.
    UnlessInArena,
}

/// The tapes of one derivative.
#[derive(Default)]
pub(crate) struct TapeStore {
    infos: Vec<TapeInfo>,
    /// The tape and field offset of each taped forward value.
    values: HashMap<Value, (Tape, u64)>,
    /// The record tape each forward block pushes (one per kind of value).
    records: HashMap<(Block, TapeKind), Tape>,
    control: Option<Tape>,
    /// The slot of each merge point outside loops (`None`: the forward exit).
    control_slots: HashMap<Option<Block>, Value>,
    /// (primal block whose reverse region pops, tape) for every record tape.
    pops: Vec<(Block, Tape)>,
    allocations: Vec<TapeAllocation>,
    /// The slot global of each heap allocation (by index in `allocations`) that keeps its
    /// buffer across calls (`tape_reuse`).
    slots: HashMap<usize, GlobalId>,
}

/// Defines `__adc_tape_push(ptr %tape, i64 %size) -> ptr` in `module` (once): reserves
/// one element of `size` bytes on the tape, growing its buffer geometrically, and returns
/// the element's address.
pub fn define_tape_push(module: &mut Module, realloc: FuncId) -> FuncId {
    if let Some(id) = module.function_by_name(TAPE_PUSH) {
        return id;
    }
    let sig = Signature::new(vec![Type::PTR, Type::I64], Some(Type::PTR));
    let mut f = Function::new(TAPE_PUSH, sig);
    f.linkage = Linkage::Internal;
    let signatures = module.signatures();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    build_tape_push(&mut f, &lookup, |b, growth| {
        let (_, grown) = b.call(realloc, vec![growth.data, growth.new_bytes]);
        grown.expect("realloc returns a pointer")
    });
    module.add_function(f)
}

/// What the growth path of a tape push works with.
pub(crate) struct TapeGrowth {
    /// The current buffer (null before the first push).
    pub data: Value,
    /// Elements in use, and the size of one.
    pub top: Value,
    pub size: Value,
    /// Bytes the grown buffer holds.
    pub new_bytes: Value,
}

/// Builds the body of a tape push into `f` (signature `(ptr %tape, i64 %size) -> ptr`):
/// reserve one element of `size` bytes in the tape `{data, top, capacity}`, doubling the
/// capacity (at least 16 elements) when it is full, and return the element's address.
/// `grow` emits how a buffer grows (CPU: `realloc`; GPU: allocate, copy, free): it starts
/// in the growth block, may add blocks, and returns the new buffer holding the old
/// elements from the block it ends in.
pub(crate) fn build_tape_push(
    f: &mut Function,
    lookup: &dyn Fn(FuncId) -> Option<Signature>,
    grow: impl FnOnce(&mut FunctionBuilder<'_>, TapeGrowth) -> Value,
) {
    let mut b = FunctionBuilder::new(f, lookup);
    let entry = b.create_entry_block();
    let grow_block = b.create_block();
    let reserve = b.create_block();
    let params = b.func.dfg.block_params(entry).to_vec();
    let (tape, size) = (params[0], params[1]);
    let buffer = b.append_block_param(reserve, Type::PTR);

    b.switch_to_block(entry);
    let data = b.load(Type::PTR, tape, 8);
    let top_offset = b.iconst(Type::I64, TAPE_TOP_OFFSET);
    let top_ptr = b.ptradd(tape, top_offset);
    let top = b.load(Type::I64, top_ptr, 8);
    let capacity_offset = b.iconst(Type::I64, TAPE_CAPACITY_OFFSET);
    let cap_ptr = b.ptradd(tape, capacity_offset);
    let cap = b.load(Type::I64, cap_ptr, 8);
    let full = b.icmp(IntCC::Uge, top, cap);
    b.brif(full, BlockCall::new(grow_block, Vec::new()), BlockCall::new(reserve, vec![data]));

    b.switch_to_block(grow_block);
    let two = b.iconst(Type::I64, 2);
    let doubled = b.binary(BinaryOp::Mul, cap, two);
    let minimum = b.iconst(Type::I64, 16);
    let new_cap = b.binary(BinaryOp::Umax, doubled, minimum);
    let new_bytes = b.binary(BinaryOp::Mul, new_cap, size);
    let grown = grow(&mut b, TapeGrowth { data, top, size, new_bytes });
    b.store(grown, tape, 8);
    b.store(new_cap, cap_ptr, 8);
    b.jump(reserve, vec![grown]);

    b.switch_to_block(reserve);
    let offset = b.binary(BinaryOp::Mul, top, size);
    let addr = b.ptradd(buffer, offset);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, top, one);
    b.store(next, top_ptr, 8);
    b.ret(Some(addr));
}

impl<'a> Synth<'a> {
    /// Setup-block code computing the number of elements a tape for a value of `block`
    /// receives, when every enclosing loop has a trip count that is constant or computed
    /// from the function's parameters: the product of the header executions (trips + 1).
    /// `None` when some loop's count is unknown before the function runs.
    fn capacity_in_setup(&mut self, block: Block) -> Option<Capacity> {
        let mut factors = Vec::new();
        let mut current = self.plan.info.loops.loop_of(block);
        while let Some(id) = current {
            factors.push(self.plan.info.ivs.loops.get(id)?.max_trip_count.clone()?);
            current = self.plan.info.loops.loops[id].parent;
        }
        let available = |a: &Affine| a.base.is_none_or(|b| self.computable_on_entry(b, 0));
        // An unsigned count up from a start known only in the loop nest (the remainder
        // loop after a vectorized one starts at 0 or where the vector loop stopped) runs
        // at most as often as from 0: every unsigned start is at least 0.
        for factor in &mut factors {
            if let TripCount::Symbolic { start, signed: false, step, .. } = factor {
                if *step > 0 && !available(start) {
                    *start = Affine { base: None, offset: 0 };
                }
            }
        }
        // Check availability before emitting anything.
        for factor in &factors {
            if let TripCount::Symbolic { start, bound, .. } = factor {
                if !available(start) || !available(bound) {
                    return None;
                }
            }
        }
        let mut capacity = self.setup_const(Type::I64, 1);
        let mut constant = Some(1u64);
        for factor in factors {
            let trips = match factor {
                TripCount::Constant(n) => {
                    constant = constant
                        .zip(u64::try_from(n).ok())
                        .and_then(|(c, n)| c.checked_mul(n.checked_add(1)?));
                    self.setup_const(Type::I64, i128::try_from(n).ok()?)
                }
                TripCount::Symbolic { start, bound, step, inclusive, signed } => {
                    constant = None;
                    let start = self.setup_affine(&start, signed);
                    let bound = self.setup_affine(&bound, signed);
                    let (from, to) = if step > 0 { (start, bound) } else { (bound, start) };
                    let distance = self.setup_binary(BinaryOp::Sub, to, from);
                    let adjust =
                        self.setup_const(Type::I64, i128::from(inclusive) + step.abs() - 1);
                    let rounded = self.setup_binary(BinaryOp::Add, distance, adjust);
                    let magnitude = self.setup_const(Type::I64, step.abs());
                    let trips = self.setup_binary(BinaryOp::Sdiv, rounded, magnitude);
                    let zero = self.setup_const(Type::I64, 0);
                    self.setup_binary(BinaryOp::Smax, trips, zero)
                }
            };
            let one = self.setup_const(Type::I64, 1);
            let headers = self.setup_binary(BinaryOp::Add, trips, one);
            capacity = self.setup_binary(BinaryOp::Mul, capacity, headers);
        }
        Some(Capacity { value: capacity, constant })
    }

    /// Whether a primal value is a pure, non-trapping function of the parameters (a
    /// parameter, or casts and arithmetic of them, as `sext i32 %n` of a loop bound), so
    /// the setup block can compute it before the function body runs.
    fn computable_on_entry(&self, value: Value, depth: usize) -> bool {
        const MAX_DEPTH: usize = 8;
        match self.primal.dfg.value_def(value) {
            ValueDef::Param(block, _) => Some(block) == self.primal.entry_block(),
            ValueDef::Result(inst) => {
                let data = &self.primal.dfg.insts[inst];
                let pure = data.is_pure_non_trapping()
                    || self.is_iteration_count(data)
                    || matches!(data, InstructionData::Binary { op, args: [_, divisor], .. }
                        if !matches!(
                            op,
                            BinaryOp::Udiv | BinaryOp::Sdiv | BinaryOp::Urem | BinaryOp::Srem
                        ) || self.safe_divisor(*divisor));
                pure && depth < MAX_DEPTH
                    && data.args().into_iter().all(|a| self.computable_on_entry(a, depth + 1))
            }
        }
    }

    /// A call of `__enzyme_iter(n, step)`: pure (the lowering makes it `n`, raised by each
    /// derivative), so a loop running to it has a trip count known on entry and its tape
    /// is presized instead of growing through `__adc_tape_push`, which a derivative of this
    /// derivative (reverse over reverse) cannot differentiate.
    fn is_iteration_count(&self, data: &InstructionData) -> bool {
        matches!(data, InstructionData::Call { callee, .. }
            if self.module.functions.get(*callee).is_some_and(|f| f.name == ENZYME_ITER && f.is_declaration()))
    }

    /// Whether dividing by `divisor` cannot trap: a constant other than 0 and -1 (the
    /// `d * (d + 1) / 2` of triangular storage).
    fn safe_divisor(&self, divisor: Value) -> bool {
        let ValueDef::Result(inst) = self.primal.dfg.value_def(divisor) else { return false };
        let InstructionData::Const { value: Constant::Int(x), ty } = &self.primal.dfg.insts[inst]
        else {
            return false;
        };
        let bits = ty.int_bits().unwrap_or(64);
        !matches!(adc_ir::constant::sign_extend(*x, bits), 0 | -1)
    }

    /// A primal value accepted by `computable_on_entry`, computed in the setup block.
    fn setup_value(&mut self, value: Value) -> Value {
        let ValueDef::Result(inst) = self.primal.dfg.value_def(value) else {
            return self.fwd(value);
        };
        let mut data = self.primal.dfg.insts[inst].clone();
        let operands: Vec<Value> = data.args().into_iter().map(|a| self.setup_value(a)).collect();
        let mut operands = operands.into_iter();
        data.map_args(|old| operands.next().unwrap_or(old));
        self.ins_setup(data).expect("a pure instruction has a result")
    }

    /// `base + offset` as an `i64` in the setup block (`base` computable on entry).
    fn setup_affine(&mut self, affine: &Affine, signed: bool) -> Value {
        let offset = self.setup_const(Type::I64, affine.offset);
        let Some(base) = affine.base else { return offset };
        let value = self.setup_value(base);
        let wide = match self.ty(value) {
            Type::I64 => value,
            Type::I128 => self
                .ins_setup(InstructionData::Cast { op: CastOp::Trunc, arg: value, ty: Type::I64 })
                .expect("cast has a result"),
            _ => {
                let op = if signed { CastOp::Sext } else { CastOp::Zext };
                self.ins_setup(InstructionData::Cast { op, arg: value, ty: Type::I64 })
                    .expect("cast has a result")
            }
        };
        self.setup_binary(BinaryOp::Add, wide, offset)
    }

    fn setup_binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.ins_setup(InstructionData::Binary { op, flags: InstFlags::empty(), args: [a, b] })
            .expect("binary has a result")
    }

    fn setup_const(&mut self, ty: Type, value: i128) -> Value {
        let c = Constant::int(&ty, value);
        self.setup_constant(ty, c)
    }

    pub(crate) fn setup_constant(&mut self, ty: Type, value: Constant) -> Value {
        self.ins_setup(InstructionData::Const { ty, value }).expect("const has a result")
    }

    fn setup_ptradd(&mut self, ptr: Value, offset: Value) -> Value {
        self.ins_setup(InstructionData::PtrAdd { flags: InstFlags::empty(), ptr, offset })
            .expect("ptradd has a result")
    }

    /// The outermost loop around `block`.
    fn outermost_loop(&self, block: Block) -> Option<LoopId> {
        let mut current = self.plan.info.loops.loop_of(block)?;
        while let Some(parent) = self.plan.info.loops.loops[current].parent {
            current = parent;
        }
        Some(current)
    }

    /// A new, empty tape header (buffer null, capacity 0). A tape counting executions of
    /// the primal `block` is presized when the trip counts around it are known on entry
    /// (its buffer is set in `finish_tapes`); `elem` is the element of exit and control
    /// tapes (records grow field by field).
    fn new_tape(
        &mut self,
        role: TapeRole,
        elem: Option<&Type>,
        block: Option<Block>,
        kind: TapeKind,
    ) -> Tape {
        let header_ty = Type::structure(vec![Type::PTR, Type::I64, Type::I64], false);
        let header = self.new_slot(header_ty);
        let capacity = block.and_then(|b| self.capacity_in_setup(b));
        let null = self.setup_constant(Type::PTR, Constant::Int(0));
        let zero = self.setup_const(Type::I64, 0);
        let top_offset = self.setup_const(Type::I64, TAPE_TOP_OFFSET);
        let capacity_offset = self.setup_const(Type::I64, TAPE_CAPACITY_OFFSET);
        let top_ptr = self.setup_ptradd(header, top_offset);
        let cap_ptr = self.setup_ptradd(header, capacity_offset);
        for (value, ptr) in [(null, header), (zero, top_ptr), (zero, cap_ptr)] {
            self.ins_tape_init(InstructionData::Store { value, ptr, align: 8, volatile: false });
        }
        if capacity.is_some() {
            self.cache.stats.presized_tapes += 1;
        }
        let nest = block.and_then(|b| self.outermost_loop(b));
        let store = &mut self.cache.tape_store;
        let id = store.infos.len();
        store.infos.push(TapeInfo {
            header,
            role,
            fields: Vec::new(),
            elem: elem.cloned(),
            size: elem.map_or(0, Type::size),
            align: elem.map_or(1, Type::align).max(1),
            size_consts: Vec::new(),
            push_block: None,
            primal_block: block,
            capacity,
            nest,
            storage: if capacity.is_some() { TapeStorage::Heap } else { TapeStorage::Growing },
            allocation: None,
            kind,
        });
        Tape { header, id }
    }

    /// The exit tape of an inner loop's counted value: one entry per execution of the
    /// parent loop's `header`.
    pub(crate) fn new_exit_tape(&mut self, ty: &Type, header: Block) -> Tape {
        let kind = self.integer_tape_kind();
        self.new_tape(TapeRole::Exit, Some(ty), Some(header), kind)
    }

    /// The kind of the exit and control tapes (integers).
    fn integer_tape_kind(&self) -> TapeKind {
        if self.plan.options.tapes_by_kind {
            TapeKind::Passive
        } else {
            TapeKind::Mixed
        }
    }

    /// Which tape kind a forward value goes to. A value without a primal (synthesized
    /// code) counts as an active float unless it is a pointer: the next level then
    /// shadows it, which is never wrong.
    fn tape_kind(&self, value: Value) -> TapeKind {
        if !self.plan.options.tapes_by_kind {
            return TapeKind::Mixed;
        }
        let ty = self.ty(value);
        if ty.lane_type().is_ptr() {
            return TapeKind::Pointers;
        }
        match self.primal_of(value) {
            Some(primal) if !self.activity.is_active_value(primal) => TapeKind::Passive,
            _ => TapeKind::ActiveFloats,
        }
    }

    /// The tape (and field offset in its record) holding a forward value of a loop.
    pub(super) fn tape_of(&mut self, value: Value) -> (Tape, u64) {
        if let Some(found) = self.cache.tape_store.values.get(&value) {
            return found.clone();
        }
        let block = self.defining_primal_block(value).expect("taped values live in loops");
        let forward_block = match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => self.f.layout.inst_block(inst),
            ValueDef::Param(b, _) => Some(b),
        }
        .expect("a taped value is defined in a laid-out block");
        let shared = self.plan.options.records;
        let kind = self.tape_kind(value);
        let tape = match self.cache.tape_store.records.get(&(forward_block, kind)) {
            Some(tape) if shared => tape.clone(),
            _ => {
                let tape = self.new_tape(TapeRole::Record, None, Some(block), kind);
                self.cache.tape_store.infos[tape.id].push_block = Some(forward_block);
                self.cache.tape_store.records.insert((forward_block, kind), tape.clone());
                self.cache.tape_store.pops.push((block, tape.clone()));
                self.cache.stats.tapes += 1;
                tape
            }
        };
        let ty = self.ty(value);
        let info = &mut self.cache.tape_store.infos[tape.id];
        let align = ty.align().max(1);
        let offset = info.size.div_ceil(align) * align;
        info.size = offset + ty.size().max(1);
        info.align = info.align.max(align);
        info.fields.push(Field { value, ty, offset });
        self.cache.stats.taped_values += 1;
        self.cache.tape_store.values.insert(value, (tape.clone(), offset));
        (tape, offset)
    }

    /// An `i64` constant at `self.cur` holding the element size of `tape` (patched in
    /// `finish_tapes` when records grow).
    fn element_size_const(&mut self, tape: &Tape) -> Value {
        let size = self.iconst(Type::I64, 0);
        if let ValueDef::Result(inst) = self.f.dfg.value_def(size) {
            self.cache.tape_store.infos[tape.id].size_consts.push(inst);
        }
        size
    }

    /// Forward code before `at`: pushes `value` onto an exit or control tape.
    pub(crate) fn push_before(&mut self, at: Inst, tape: &Tape, value: Value) {
        self.emit_before(at, |s| {
            let addr = s.push_element(tape);
            s.store(value, addr);
        });
    }

    /// Forward code at `self.cur`: reserves the next element of a tape, returns its
    /// address. Presized tapes (records on) need no capacity check.
    fn push_element(&mut self, tape: &Tape) -> Value {
        let presized = self.plan.options.records
            && self.cache.tape_store.infos[tape.id].storage != TapeStorage::Growing;
        let size = self.element_size_const(tape);
        if !presized {
            return self.val(InstructionData::Call {
                callee: self.runtime.tape_push,
                args: vec![tape.header, size],
                attrs: FuncAttrs::empty(),
            });
        }
        let data = self.load(&Type::PTR, tape.header);
        let top_offset = self.iconst(Type::I64, TAPE_TOP_OFFSET);
        let top_ptr = self.ptradd(tape.header, top_offset);
        let top = self.load(&Type::I64, top_ptr);
        let offset = self.binary(BinaryOp::Mul, top, size);
        let addr = self.ptradd(data, offset);
        let one = self.iconst(Type::I64, 1);
        let next = self.binary(BinaryOp::Add, top, one);
        self.store(next, top_ptr);
        addr
    }

    /// Reverse code at `self.cur`: the field at `offset` of the top element of a tape.
    pub(super) fn peek_field(&mut self, tape: &Tape, ty: &Type, offset: u64) -> Value {
        let data = self.load(&Type::PTR, tape.header);
        let top_offset = self.iconst(Type::I64, TAPE_TOP_OFFSET);
        let top_ptr = self.ptradd(tape.header, top_offset);
        let top = self.load(&Type::I64, top_ptr);
        let one = self.iconst(Type::I64, 1);
        let last = self.binary(BinaryOp::Sub, top, one);
        let size = self.element_size_const(tape);
        let mut offset_value = self.binary(BinaryOp::Mul, last, size);
        if offset > 0 {
            let field = self.iconst(Type::I64, offset as i128);
            offset_value = self.binary(BinaryOp::Add, offset_value, field);
        }
        let addr = self.ptradd(data, offset_value);
        self.load(ty, addr)
    }

    /// Reverse code at `self.cur`: the top element of an exit or control tape.
    pub(crate) fn peek(&mut self, tape: &Tape) -> Value {
        let ty = self.cache.tape_store.infos[tape.id].elem.clone().unwrap_or(Type::I64);
        self.peek_field(tape, &ty, 0)
    }

    /// Reverse code at `self.cur`: drops the top element of a tape.
    pub(crate) fn pop(&mut self, tape: &Tape) {
        let top_offset = self.iconst(Type::I64, TAPE_TOP_OFFSET);
        let top_ptr = self.ptradd(tape.header, top_offset);
        let top = self.load(&Type::I64, top_ptr);
        let one = self.iconst(Type::I64, 1);
        let last = self.binary(BinaryOp::Sub, top, one);
        self.store(last, top_ptr);
    }

    fn control_tape(&mut self) -> Tape {
        if let Some(tape) = &self.cache.tape_store.control {
            return tape.clone();
        }
        let kind = self.integer_tape_kind();
        let tape = self.new_tape(TapeRole::Control, Some(&Type::I64), None, kind);
        self.cache.tape_store.control = Some(tape.clone());
        tape
    }

    /// The `i64` slot recording the incoming edge of a merge point outside every loop
    /// (`merge`: its primal block, `None` for the forward exit), or `None` for one inside a
    /// loop. Such a point is reached at most once per call (the rule that puts forward
    /// values outside loops in slots), so one slot holds its choice where the control tape
    /// would cost a heap buffer per call, which a split function called in a loop or
    /// recursively pays again on every call.
    fn control_slot(&mut self, merge: Option<Block>) -> Option<Value> {
        if merge.is_some_and(|b| self.plan.info.loops.depth(b) > 0) {
            return None;
        }
        if let Some(&slot) = self.cache.tape_store.control_slots.get(&merge) {
            return Some(slot);
        }
        let slot = self.new_slot(Type::I64);
        self.cache.tape_store.control_slots.insert(merge, slot);
        self.cache.stats.control_slots += 1;
        Some(slot)
    }

    /// Forward code at `self.cur`: records which incoming edge of the merge point `merge`
    /// (a primal block, `None` for the forward exit) was taken.
    pub fn push_control(&mut self, merge: Option<Block>, index: i128) {
        let value = self.iconst(Type::I64, index);
        let addr = match self.control_slot(merge) {
            Some(slot) => slot,
            None => {
                let tape = self.control_tape();
                self.push_element(&tape)
            }
        };
        self.store(value, addr);
    }

    /// Reverse code at `self.cur`: the edge index the forward pass recorded last at
    /// `merge`.
    pub fn pop_control(&mut self, merge: Option<Block>) -> Value {
        if let Some(slot) = self.control_slot(merge) {
            return self.load(&Type::I64, slot);
        }
        let tape = self.control_tape();
        let index = self.peek(&tape);
        self.pop(&tape);
        index
    }

    /// Completes the tapes once the reverse pass is synthesized: pops at the end of the
    /// reverse region of their blocks, record sizes, record pushes, buffers (shared per
    /// loop nest, stack when small), early and final frees.
    pub fn finish_tapes(&mut self) {
        let saved = self.cur;
        for (block, tape) in std::mem::take(&mut self.cache.tape_store.pops) {
            let Some(&last) = self.rev_last.get(&block) else { continue };
            self.at_end_of(last, |s| s.pop(&tape));
        }
        self.push_records();
        for info in &self.cache.tape_store.infos {
            let size = Constant::int(&Type::I64, info.element_size() as i128);
            for &inst in &info.size_consts {
                self.f.dfg.insts[inst] =
                    InstructionData::Const { ty: Type::I64, value: size.clone() };
            }
        }
        self.allocate_tapes();
        self.free_tapes();
        self.report_tapes();
        self.cur = saved;
    }

    /// One push per record, before the terminator of the forward block defining it.
    fn push_records(&mut self) {
        for id in 0..self.cache.tape_store.infos.len() {
            let info = &self.cache.tape_store.infos[id];
            let Some(block) = info.push_block else { continue };
            let tape = Tape { header: info.header, id };
            let fields = info.fields.clone();
            self.at_end_of(block, |s| {
                let addr = s.push_element(&tape);
                for field in fields {
                    let ptr = if field.offset == 0 {
                        addr
                    } else {
                        let offset = s.iconst(Type::I64, field.offset as i128);
                        s.ptradd(addr, offset)
                    };
                    let align = field.ty.align() as u32;
                    s.ins(InstructionData::Store {
                        value: field.value,
                        ptr,
                        align,
                        volatile: false,
                    });
                }
            });
        }
    }

    /// Buffers of presized tapes, in the setup block: one per loop nest (records on) or
    /// one per tape; a stack array when the bytes are a small constant.
    fn allocate_tapes(&mut self) {
        // Tapes of one loop nest and kind share an allocation.
        type Group = (Option<LoopId>, TapeKind);
        let mut groups: Vec<(Group, Vec<usize>)> = Vec::new();
        for (id, info) in self.cache.tape_store.infos.iter().enumerate() {
            if info.storage == TapeStorage::Growing {
                continue;
            }
            let key = (info.nest, info.kind);
            match groups.iter_mut().find(|(k, _)| *k == key && self.plan.options.records) {
                Some((_, members)) => members.push(id),
                None => groups.push((key, vec![id])),
            }
        }
        let mut stack_bytes = 0u64;
        for ((nest, _), members) in groups {
            let infos = &self.cache.tape_store.infos;
            let constant_bytes: Option<u64> = members.iter().try_fold(0u64, |total, &id| {
                let info = &infos[id];
                let bytes = info.capacity?.constant?.checked_mul(info.element_size())?;
                total.checked_add(bytes.div_ceil(TAPE_ALIGN) * TAPE_ALIGN)
            });
            // A split function's forward phase returns before its tapes are read.
            let on_stack = self.plan.options.records
                && self.split.is_none()
                && constant_bytes.is_some_and(|b| stack_bytes + b <= STACK_TAPE_LIMIT);
            let at = self.split_allocation_point(nest);
            // Offsets of each member, as setup-block values, and the total.
            let mut offsets = Vec::new();
            let mut total = self.setup_const(Type::I64, 0);
            for &id in &members {
                offsets.push(total);
                let info = &self.cache.tape_store.infos[id];
                let (capacity, size) =
                    (info.capacity.expect("presized").value, info.element_size());
                let size = self.setup_const(Type::I64, size as i128);
                let bytes = self.setup_binary(BinaryOp::Mul, capacity, size);
                let pad = self.setup_const(Type::I64, TAPE_ALIGN as i128 - 1);
                let padded = self.setup_binary(BinaryOp::Add, bytes, pad);
                let align = self.setup_const(Type::I64, TAPE_ALIGN as i128);
                let units = self.setup_binary(BinaryOp::Udiv, padded, align);
                let rounded = self.setup_binary(BinaryOp::Mul, units, align);
                total = self.setup_binary(BinaryOp::Add, total, rounded);
            }
            let (base, storage) = match constant_bytes.filter(|_| on_stack) {
                Some(bytes) => {
                    stack_bytes += bytes;
                    let ty = Type::array(Type::I8, bytes.max(1));
                    let base = self
                        .ins_setup(InstructionData::Alloca {
                            ty,
                            count: None,
                            align: TAPE_ALIGN as u32,
                        })
                        .expect("alloca has a result");
                    (base, TapeStorage::Stack)
                }
                None => {
                    let base = match self.tape_reuse() {
                        Some(reuse) => {
                            let slot = self.new_tape_slot();
                            let allocation = self.cache.tape_store.allocations.len();
                            self.cache.tape_store.slots.insert(allocation, slot);
                            self.take_tape_buffer(reuse, slot, total)
                        }
                        None => {
                            let call = match self.split {
                                Some(_) => self.split_allocation(total),
                                None => InstructionData::Call {
                                    callee: self.runtime.tape_alloc,
                                    args: vec![total],
                                    attrs: FuncAttrs::empty(),
                                },
                            };
                            self.ins_allocation(at, call).expect("an allocation returns a pointer")
                        }
                    };
                    (base, TapeStorage::Heap)
                }
            };
            for (index, (&id, offset)) in members.iter().zip(offsets).enumerate() {
                let first = index == 0;
                let (header, capacity) = {
                    let info = &self.cache.tape_store.infos[id];
                    (info.header, info.capacity.expect("presized").value)
                };
                let capacity_offset = self.setup_const(Type::I64, TAPE_CAPACITY_OFFSET);
                let cap_ptr = self.setup_ptradd(header, capacity_offset);
                // The first member starts at the block itself: a derivative of this one
                // then sees the allocation's own pointer reach `__adc_tape_push`'s
                // `realloc` (records off), not an offset from it.
                let data = if first {
                    base
                } else {
                    self.ins_allocation(
                        at,
                        InstructionData::PtrAdd { flags: InstFlags::empty(), ptr: base, offset },
                    )
                    .expect("ptradd has a result")
                };
                for (value, ptr) in [(data, header), (capacity, cap_ptr)] {
                    self.ins_allocation(
                        at,
                        InstructionData::Store { value, ptr, align: 8, volatile: false },
                    );
                }
                let info = &mut self.cache.tape_store.infos[id];
                info.storage = storage;
                info.allocation = Some(self.cache.tape_store.allocations.len());
            }
            match storage {
                TapeStorage::Stack => self.cache.stats.stack_tapes += members.len(),
                _ => self.cache.stats.tape_allocations += 1,
            }
            let freed_early = self.early_free_block(nest, storage).is_some();
            let name = nest.map(|l| self.block_label(self.plan.info.loops.loops[l].header));
            let arena = storage == TapeStorage::Heap
                && self.split.is_some()
                && self.runtime.arena.is_some();
            self.cache.tape_store.allocations.push(TapeAllocation {
                nest: name,
                stack: storage == TapeStorage::Stack,
                arena,
                bytes: constant_bytes,
                tapes: members.len(),
                freed_early,
            });
        }
    }

    /// Where a split function allocates the buffer of loop `nest`'s presized tapes: the
    /// start of the forward clone of the nest's preheader, reached at most once per call and
    /// only when the loop is (the setup block runs in both phases, and a call that skips
    /// the loop, as a recursion's base case does, allocates nothing); the end of the
    /// forward-only init block when the nest has no preheader outside loops. `None`
    /// outside split mode: the setup block.
    fn split_allocation_point(&mut self, nest: Option<LoopId>) -> Option<Inst> {
        let fwd_init = self.split.as_ref()?.fwd_init;
        let preheader = nest
            .and_then(|n| self.plan.info.loops.loops[n].preheader)
            .filter(|p| self.plan.info.loops.loop_of(*p).is_none())
            .and_then(|p| self.bmap.get(&p).copied());
        let start = preheader.and_then(|b| self.f.layout.first_inst(b));
        start.or_else(|| self.f.layout.last_inst(fwd_init))
    }

    /// Emits allocation code before `at` (see [`Self::split_allocation_point`]), or in the
    /// setup block.
    fn ins_allocation(&mut self, at: Option<Inst>, data: InstructionData) -> Option<Value> {
        match at {
            Some(at) => self.ins_before(at, data),
            None => self.ins_setup(data),
        }
    }

    /// The reverse region where the buffers of loop `nest` are freed early: that of its
    /// preheader, entered once the reverse of the nest is over (in a split function, in
    /// its reverse phase). `None` for stack storage, with `-cache-records`, or without a
    /// preheader.
    fn early_free_block(&self, nest: Option<LoopId>, storage: TapeStorage) -> Option<Block> {
        if storage == TapeStorage::Stack || !self.plan.options.records {
            return None;
        }
        let preheader = self.plan.info.loops.loops[nest?].preheader?;
        if self.plan.info.loops.loop_of(preheader).is_some() {
            return None;
        }
        self.rev_entry.get(&preheader).copied()
    }

    /// Frees heap buffers early (after the reverse of their loop nest) and before the
    /// derivative returns (the pointer is null by then when freed early); a buffer with a
    /// slot (`tape_reuse`) is given back to it instead.
    fn free_tapes(&mut self) {
        // (header, early-free region, how)
        let mut owners: Vec<(Value, Option<Block>, Release)> = Vec::new();
        let mut shared_seen = std::collections::HashSet::new();
        let reuse = self.tape_reuse();
        for info in &self.cache.tape_store.infos {
            let owns = match (info.storage, info.allocation) {
                (TapeStorage::Stack, _) => false,
                // The first member's data is the start of a shared allocation.
                (TapeStorage::Heap, Some(a)) => shared_seen.insert(a),
                _ => true,
            };
            if !owns {
                continue;
            }
            let nest = if info.role == TapeRole::Control { None } else { info.nest };
            let release = match (info.storage, info.allocation) {
                (TapeStorage::Heap, Some(a)) => {
                    match (self.cache.tape_store.slots.get(&a).copied().zip(reuse), &self.split) {
                        (Some((slot, reuse)), _) => Release::Give(slot, reuse),
                        (None, Some(_)) if self.runtime.arena.is_some() => Release::UnlessInArena,
                        (None, _) => Release::Free,
                    }
                }
                _ => Release::Free,
            };
            owners.push((
                info.header,
                nest.and_then(|n| self.early_free_block(Some(n), info.storage)),
                release,
            ));
        }
        for &(header, early, release) in &owners {
            let Some(region) = early else { continue };
            let Some(first) = self.f.layout.first_inst(region) else { continue };
            let data = self.ins_before(
                first,
                InstructionData::Load { ty: Type::PTR, ptr: header, align: 8, volatile: false },
            );
            let null = self.ins_before(
                first,
                InstructionData::Const { ty: Type::PTR, value: Constant::Int(0) },
            );
            let (Some(data), Some(null)) = (data, null) else { continue };
            self.release_buffer(data, release, Some(first));
            self.ins_before(
                first,
                InstructionData::Store { value: null, ptr: header, align: 8, volatile: false },
            );
            self.cache.stats.early_frees += 1;
        }
        let Some(ret) = self.cache.final_return else { return };
        let Some(block) = self.f.layout.inst_block(ret) else { return };
        self.f.layout.remove_inst(ret);
        let saved = std::mem::replace(&mut self.cur, block);
        for (header, _, release) in owners {
            let data = self.load(&Type::PTR, header);
            self.release_buffer(data, release, None);
        }
        self.cur = saved;
        self.f.layout.append_inst(ret, block);
    }

    /// Releases a tape buffer (see [`Release`]) before `before`, or at `self.cur`.
    fn release_buffer(&mut self, data: Value, release: Release, before: Option<Inst>) {
        match release {
            Release::Give(slot, reuse) => self.give_tape_buffer(reuse, slot, data, before),
            Release::UnlessInArena => self.free_split_allocation(data, before),
            // Buffers of whole derivatives came from the tape allocator (or grew through
            // the tape push, which uses it); split functions' from `malloc`.
            Release::Free if self.split.is_none() => {
                self.release_with(self.runtime.tape_free, data, before)
            }
            Release::Free => self.free_before(data, before),
        }
    }

    fn block_label(&self, block: Block) -> String {
        match self.primal.dfg.block_name(block) {
            Some(n) => n.to_string(),
            None => format!("{block}"),
        }
    }

    /// Adds the tapes and allocation sites to the cache-plan report.
    fn report_tapes(&mut self) {
        let mut entries = Vec::new();
        for info in &self.cache.tape_store.infos {
            let fields = info
                .fields
                .iter()
                .map(|f| {
                    let name = self.primal_of(f.value).and_then(|p| self.primal.dfg.value_name(p));
                    let name = match name {
                        Some(n) => format!("%{n}"),
                        None => format!("%{}", f.value),
                    };
                    format!("{name}: {} @{}", f.ty, f.offset)
                })
                .collect();
            let innermost = info
                .primal_block
                .and_then(|b| self.plan.info.loops.loop_of(b))
                .map(|l| self.block_label(self.plan.info.loops.loops[l].header));
            entries.push(TapeEntry {
                role: info.role,
                fields,
                bytes: info.element_size(),
                innermost_loop: innermost,
                storage: info.storage,
                allocation: info.allocation,
                freed_early: info.role != TapeRole::Control
                    && self.early_free_block(info.nest, info.storage).is_some(),
            });
        }
        let plan = &mut self.cache.stats.plan;
        plan.tapes = entries;
        plan.allocations = std::mem::take(&mut self.cache.tape_store.allocations);
    }
}
