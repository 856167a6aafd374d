//! Cache planning: how the reverse pass gets the forward values it needs.
//!
//! For each forward value `v` requested at a point of the reverse pass, in this order:
//!
//! 1. **Direct use** when `v` is defined in the derivative's setup block, or in a primal
//!    block outside every loop that dominates every `ret`: it is computed exactly once and
//!    its definition dominates all reverse code.
//! 2. **Recompute** when `v` is a pure instruction (arithmetic, compares, casts, `ptradd`,
//!    lane and aggregate operations, constants): its operands are requested recursively
//!    and the instruction is re-emitted. Division cannot trap here: the forward pass ran
//!    it on the same operands. A load is recomputed when alias analysis proves that no
//!    instruction of the function may write its location (a store, copy, set, or call
//!    that may write it, `free` included), so the memory still holds the loaded value
//!    when the reverse pass runs; other loads are cached.
//! 3. **Cache** otherwise (block parameters, loads, call results):
//!    - outside loops, a **slot**: a stack slot in the setup block, stored right after the
//!      definition, loaded in the reverse pass (the definition dominates every reverse
//!      use, so the slot is written before it is read);
//!    - inside loops, a **tape** (chosen design: one push/pop stack per value): the
//!      forward pass pushes each dynamic instance right after the definition; the reverse
//!      pass reads the top of the tape and pops it at the end of the reverse region of the
//!      defining block. Because the reverse pass replays the forward trace backwards, the
//!      top is always the instance the use saw, for nested loops, while loops and any CFG.
//!      A tape is a `{ptr data, i64 top, i64 capacity}` header in the setup block. When
//!      every enclosing loop has a trip count that is constant or computed from the
//!      function's parameters (`adc_passes::ivs`), the buffer is allocated once in the
//!      setup block with the exact capacity; otherwise (while loops, bounds computed in
//!      the body) it starts empty and
//!      `__adc_tape_push` grows it geometrically (doubling, at least 16 elements) with
//!      `realloc`. Every tape buffer is freed before the derivative returns.
//!
//! The control tape (which edge entered a merge block) uses the same machinery.
//!
//! Induction variables of counted loops are not taped but counted backwards in one slot
//! each, and loop headers are reversed without control-tape entries (`loop_ivs`).
//!
//! Within one reverse region each requested value is materialized once (memoised); the
//! memo is cleared at every region start.

mod loop_ivs;
mod mincut;
mod options;
mod report;

pub(crate) use loop_ivs::{LoopDecider, LoopIvState};
pub use options::{CacheOptions, Planner, TOGGLES};
pub use report::{PlanEntry, PlanReport};

use std::collections::{HashMap, HashSet};

use adc_ir::{
    BinaryOp, Block, CastOp, Constant, FuncId, Function, Inst, InstFlags, InstructionData, IntCC,
    Linkage, Module, Signature, Type, Value, ValueDef,
};

use adc_passes::ivs::{Affine, TripCount};

use crate::reverse::Synth;

/// How a forward value reaches the reverse pass.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Strategy {
    Direct,
    Recompute,
    Slot,
    Tape,
    /// An induction variable read from its IV slot (see `loop_ivs`).
    IvSlot,
    /// A loop-invariant load saved once per loop execution (cache LICM, `loop_ivs`).
    Invariant,
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub recomputed: usize,
    pub slots: usize,
    pub tapes: usize,
    /// Tapes whose capacity is known in advance (constant trip counts).
    pub presized_tapes: usize,
    /// Split functions: the size of the frame (the tape of `__enzyme_augmentfwd`), fixed
    /// at synthesis; 0 for other derivatives.
    pub frame_bytes: u64,
    /// Induction variables counted backwards in a slot instead of taped.
    pub counted_ivs: usize,
    /// Loop-invariant loads saved once per loop execution (cache LICM).
    pub invariant_slots: usize,
    /// Values the min-cut planner stores although they could be recomputed.
    pub stored_by_min_cut: usize,
    /// What the planner decided for each value the reverse pass read.
    pub plan: PlanReport,
}

#[derive(Clone, Debug)]
pub(crate) struct Tape {
    header: Value,
    elem: Type,
}

#[derive(Default)]
pub(crate) struct Cache {
    memo: HashMap<Value, Value>,
    slots: HashMap<Value, Value>,
    tapes: HashMap<Value, Tape>,
    control: Option<Tape>,
    /// (primal block whose reverse region pops, tape) for every value tape.
    pops: Vec<(Block, Tape)>,
    headers: Vec<Value>,
    pub final_return: Option<Inst>,
    pub stats: CacheStats,
    pub options: CacheOptions,
    pub loop_ivs: LoopIvState,
    /// Primal values the reverse pass asked for directly (not as operands of a
    /// recomputed primal value; operands of a recomputed shadow count): the roots of the
    /// min-cut.
    pub roots: HashSet<Value>,
    recompute_depth: usize,
    /// Primal values stored although recomputable (the min-cut's decision).
    pub store_instead: HashSet<Value>,
    /// Forward values already entered in the plan report.
    reported: HashSet<Value>,
}

impl Cache {
    pub fn new(options: CacheOptions) -> Cache {
        Cache { options, ..Cache::default() }
    }

    /// Starts a new reverse region: materialized values of the previous one do not
    /// dominate it.
    pub fn enter_region(&mut self) {
        self.memo.clear();
    }

    /// Values materialized so far in this region (to restore after emitting a loop body,
    /// whose definitions do not dominate the code after the loop).
    pub fn snapshot(&self) -> HashMap<Value, Value> {
        self.memo.clone()
    }

    pub fn restore(&mut self, memo: HashMap<Value, Value>) {
        self.memo = memo;
    }
}

/// Whether an instruction can be re-executed in the reverse pass with the same result.
pub(crate) fn recomputable(data: &InstructionData) -> bool {
    use InstructionData as I;
    data.is_pure_non_trapping()
        || matches!(data, I::Binary { .. } | I::ExtractLane { .. } | I::InsertLane { .. })
}

/// Name of the tape helper the synthesized code calls.
pub const TAPE_PUSH: &str = "__adc_tape_push";

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
    let signatures: HashMap<FuncId, Signature> =
        module.functions.iter().map(|(id, f)| (id, f.signature.clone())).collect();
    let lookup = |id: FuncId| signatures.get(&id).cloned();
    let mut b = adc_ir::builder::FunctionBuilder::new(&mut f, &lookup);
    let entry = b.create_entry_block();
    let grow = b.create_block();
    let store = b.create_block();
    let params = b.func.dfg.block_params(entry).to_vec();
    let (tape, size) = (params[0], params[1]);
    let data_param = b.append_block_param(store, Type::PTR);
    b.switch_to_block(entry);
    let data = b.load(Type::PTR, tape, 8);
    let eight = b.iconst(Type::I64, 8);
    let top_ptr = b.ptradd(tape, eight);
    let top = b.load(Type::I64, top_ptr, 8);
    let sixteen = b.iconst(Type::I64, 16);
    let cap_ptr = b.ptradd(tape, sixteen);
    let cap = b.load(Type::I64, cap_ptr, 8);
    let full = b.icmp(IntCC::Uge, top, cap);
    b.brif(
        full,
        adc_ir::BlockCall::new(grow, Vec::new()),
        adc_ir::BlockCall::new(store, vec![data]),
    );
    b.switch_to_block(grow);
    let two = b.iconst(Type::I64, 2);
    let doubled = b.binary(BinaryOp::Mul, cap, two);
    let minimum = b.iconst(Type::I64, 16);
    let new_cap = b.binary(BinaryOp::Umax, doubled, minimum);
    let bytes = b.binary(BinaryOp::Mul, new_cap, size);
    let (_, grown) = b.call(realloc, vec![data, bytes]);
    let grown = grown.expect("realloc returns a pointer");
    b.store(grown, tape, 8);
    b.store(new_cap, cap_ptr, 8);
    b.jump(store, vec![grown]);
    b.switch_to_block(store);
    let offset = b.binary(BinaryOp::Mul, top, size);
    let addr = b.ptradd(data_param, offset);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, top, one);
    b.store(next, top_ptr, 8);
    b.ret(Some(addr));
    module.add_function(f)
}

impl<'a> Synth<'a> {
    /// The primal block a forward value is defined in; `None` for the setup block.
    fn defining_primal_block(&self, value: Value) -> Option<Block> {
        let block = match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => self.f.layout.inst_block(inst)?,
            ValueDef::Param(block, _) => block,
        };
        self.origin.get(&block).copied()
    }

    /// The primal value a forward value clones (`None` for shadows and synthesized code).
    pub(crate) fn primal_of(&self, forward: Value) -> Option<Value> {
        match self.f.dfg.value_def(forward) {
            ValueDef::Result(inst) => {
                let clone_of = *self.inst_origin.get(&inst)?;
                let primal = self.primal.dfg.inst_result(clone_of)?;
                (self.vmap.get(&primal) == Some(&forward)).then_some(primal)
            }
            ValueDef::Param(block, index) => {
                let primal_block = *self.origin.get(&block)?;
                let primal = *self.primal.dfg.block_params(primal_block).get(index as usize)?;
                (self.vmap.get(&primal) == Some(&forward)).then_some(primal)
            }
        }
    }

    /// How `value` (a forward value) reaches the reverse pass.
    pub fn plan(&self, value: Value) -> Strategy {
        let Some(block) = self.defining_primal_block(value) else { return Strategy::Direct };
        if let ValueDef::Result(inst) = self.f.dfg.value_def(value) {
            if matches!(self.f.dfg.insts[inst], InstructionData::Const { .. }) {
                return Strategy::Recompute;
            }
            // A split function's reverse phase runs in another invocation: forward values
            // are never used directly, and memory may have changed in between.
            let split = self.split.is_some();
            if !split && self.info.defined_once_before_exit(block) {
                return Strategy::Direct;
            }
            if let Some(iv) = self.iv_slot_here(value) {
                return if iv.step == 0 { Strategy::Invariant } else { Strategy::IvSlot };
            }
            let stored =
                self.primal_of(value).is_some_and(|p| self.cache.store_instead.contains(&p));
            if recomputable(&self.f.dfg.insts[inst]) && !stored {
                return Strategy::Recompute;
            }
            let unwritten =
                self.inst_origin.get(&inst).is_some_and(|p| self.unwritten_loads.contains(p));
            if unwritten && !split && !stored {
                return Strategy::Recompute;
            }
        } else if self.split.is_none() && self.info.defined_once_before_exit(block) {
            return Strategy::Direct;
        } else if self.iv_slot_here(value).is_some() {
            return Strategy::IvSlot;
        }
        if self.info.loops.depth(block) == 0 {
            Strategy::Slot
        } else {
            Strategy::Tape
        }
    }

    /// `value` (a forward value) as usable at the current point of the reverse pass.
    pub fn avail(&mut self, value: Value) -> Value {
        // A root even when an earlier recomputation already made it available.
        let primal = self.primal_of(value);
        if self.cache.recompute_depth == 0 {
            if let Some(p) = primal {
                self.cache.roots.insert(p);
            }
        }
        if let Some(v) = self.cache.memo.get(&value) {
            return *v;
        }
        let strategy = self.plan(value);
        if self.cache.reported.insert(value) {
            self.report_plan(value, primal, strategy);
        }
        let result = match strategy {
            Strategy::Direct => return value,
            Strategy::Recompute => self.recompute(value),
            Strategy::Slot => {
                let slot = self.slot_of(value);
                let ty = self.ty(value);
                self.load(&ty, slot)
            }
            Strategy::Tape => {
                let tape = self.tape_of(value);
                self.peek(&tape)
            }
            Strategy::IvSlot | Strategy::Invariant => {
                let slot = self.iv_slot_here(value).expect("planned as a loop slot").slot;
                let ty = self.ty(value);
                self.load(&ty, slot)
            }
        };
        self.cache.memo.insert(value, result);
        result
    }

    fn recompute(&mut self, value: Value) -> Value {
        let ValueDef::Result(inst) = self.f.dfg.value_def(value) else {
            unreachable!("only instruction results are recomputed")
        };
        let mut data = self.f.dfg.insts[inst].clone();
        // The operands of a recomputed shadow (an address the reverse pass accumulates
        // into) are asked for as directly as the shadow itself: they are roots of the
        // min-cut; those of a recomputed primal value are not.
        let nested = usize::from(self.primal_of(value).is_some());
        self.cache.recompute_depth += nested;
        let operands: Vec<Value> = data.args().into_iter().map(|a| self.avail(a)).collect();
        self.cache.recompute_depth -= nested;
        let mut operands = operands.into_iter();
        data.map_args(|old| operands.next().unwrap_or(old));
        if !matches!(data, InstructionData::Const { .. }) {
            self.cache.stats.recomputed += 1;
        }
        self.val(data)
    }

    /// Where the forward pass must insert code right after `value` is defined.
    fn after_definition(&self, value: Value) -> Inst {
        match self.f.dfg.value_def(value) {
            ValueDef::Result(inst) => {
                let block = self.f.layout.inst_block(inst).expect("defined in a laid-out block");
                let insts = self.f.layout.block_insts(block);
                let index = self.f.layout.inst_index(inst).unwrap_or(0);
                insts[(index + 1).min(insts.len() - 1)]
            }
            ValueDef::Param(block, _) => {
                self.f.layout.first_inst(block).expect("a cloned block has a terminator")
            }
        }
    }

    fn slot_of(&mut self, value: Value) -> Value {
        if let Some(slot) = self.cache.slots.get(&value) {
            return *slot;
        }
        let ty = self.ty(value);
        let align = ty.align() as u32;
        let slot = match self.frame_slot(ty.size(), ty.align()) {
            Some(slot) => slot,
            None => self
                .ins_setup(InstructionData::Alloca { ty, count: None, align })
                .expect("alloca has a result"),
        };
        let at = self.after_definition(value);
        self.ins_before(at, InstructionData::Store { value, ptr: slot, align, volatile: false });
        self.cache.slots.insert(value, slot);
        self.cache.stats.slots += 1;
        slot
    }

    /// Setup-block code computing the number of elements a tape for a value of `block`
    /// receives, when every enclosing loop has a trip count that is constant or computed
    /// from the function's parameters: the product of the header executions (trips + 1).
    /// `None` when some loop's count is unknown before the function runs.
    fn capacity_in_setup(&mut self, block: Block) -> Option<Value> {
        let mut factors = Vec::new();
        let mut current = self.info.loops.loop_of(block);
        while let Some(id) = current {
            factors.push(self.info.ivs.loops.get(id)?.trip_count.clone()?);
            current = self.info.loops.loops[id].parent;
        }
        // Check availability before emitting anything.
        let params = self.primal.params().to_vec();
        let available = |a: &Affine| a.base.is_none_or(|b| params.contains(&b));
        for factor in &factors {
            if let TripCount::Symbolic { start, bound, .. } = factor {
                if !available(start) || !available(bound) {
                    return None;
                }
            }
        }
        let mut capacity = self.setup_const(Type::I64, 1);
        for factor in factors {
            let trips = match factor {
                TripCount::Constant(n) => self.setup_const(Type::I64, i128::try_from(n).ok()?),
                TripCount::Symbolic { start, bound, step, inclusive, signed } => {
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
        Some(capacity)
    }

    /// `base + offset` as an `i64` in the setup block (`base` is a function parameter).
    fn setup_affine(&mut self, affine: &Affine, signed: bool) -> Value {
        let offset = self.setup_const(Type::I64, affine.offset);
        let Some(base) = affine.base else { return offset };
        let value = self.fwd(base);
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

    /// A new tape header in the setup block; its buffer is allocated there when the
    /// number of elements (`capacity`, a setup-block value) is known.
    fn new_tape(&mut self, elem: Type, capacity: Option<Value>) -> Tape {
        let header_ty = Type::structure(vec![Type::PTR, Type::I64, Type::I64], false);
        let header = match self.frame_slot(header_ty.size(), 8) {
            Some(header) => header,
            None => self
                .ins_setup(InstructionData::Alloca { ty: header_ty, count: None, align: 8 })
                .expect("alloca has a result"),
        };
        let size = elem.size().max(1);
        // Split functions allocate tapes lazily: the setup block runs in both phases.
        let capacity = if self.split.is_some() { None } else { capacity };
        let (data, cap) = match capacity {
            Some(n) => {
                let size = self.setup_const(Type::I64, size as i128);
                let bytes = self.setup_binary(BinaryOp::Mul, n, size);
                let data = self
                    .ins_setup(InstructionData::Call {
                        callee: self.runtime.malloc,
                        args: vec![bytes],
                        attrs: adc_ir::FuncAttrs::empty(),
                    })
                    .expect("malloc returns a pointer");
                self.cache.stats.presized_tapes += 1;
                (data, n)
            }
            None => {
                let null = self.setup_constant(Type::PTR, Constant::Int(0));
                (null, self.setup_const(Type::I64, 0))
            }
        };
        let zero = self.setup_const(Type::I64, 0);
        let eight = self.setup_const(Type::I64, 8);
        let sixteen = self.setup_const(Type::I64, 16);
        let top_ptr = self.setup_ptradd(header, eight);
        let cap_ptr = self.setup_ptradd(header, sixteen);
        for (value, ptr) in [(data, header), (zero, top_ptr), (cap, cap_ptr)] {
            self.ins_tape_init(InstructionData::Store { value, ptr, align: 8, volatile: false });
        }
        self.cache.headers.push(header);
        Tape { header, elem }
    }

    fn setup_const(&mut self, ty: Type, value: i128) -> Value {
        let c = Constant::int(&ty, value);
        self.setup_constant(ty, c)
    }

    fn setup_constant(&mut self, ty: Type, value: Constant) -> Value {
        self.ins_setup(InstructionData::Const { ty, value }).expect("const has a result")
    }

    fn setup_ptradd(&mut self, ptr: Value, offset: Value) -> Value {
        self.ins_setup(InstructionData::PtrAdd { flags: InstFlags::empty(), ptr, offset })
            .expect("ptradd has a result")
    }

    fn tape_of(&mut self, value: Value) -> Tape {
        if let Some(tape) = self.cache.tapes.get(&value) {
            return tape.clone();
        }
        let block = self.defining_primal_block(value).expect("taped values live in loops");
        let capacity = if self.split.is_some() { None } else { self.capacity_in_setup(block) };
        let tape = self.new_tape(self.ty(value), capacity);
        let at = self.after_definition(value);
        self.push_before(at, &tape, value);
        self.cache.tapes.insert(value, tape.clone());
        self.cache.pops.push((block, tape.clone()));
        self.cache.stats.tapes += 1;
        tape
    }

    /// Forward code: pushes `value` onto `tape` just before `at`.
    pub(crate) fn push_before(&mut self, at: Inst, tape: &Tape, value: Value) {
        let size = Constant::int(&Type::I64, tape.elem.size().max(1) as i128);
        let size = self.ins_before(at, InstructionData::Const { ty: Type::I64, value: size });
        let size = size.expect("const has a result");
        let addr = self
            .ins_before(
                at,
                InstructionData::Call {
                    callee: self.runtime.tape_push,
                    args: vec![tape.header, size],
                    attrs: adc_ir::FuncAttrs::empty(),
                },
            )
            .expect("the tape push returns an address");
        let align = tape.elem.align() as u32;
        self.ins_before(at, InstructionData::Store { value, ptr: addr, align, volatile: false });
    }

    /// Reverse code at `self.cur`: the top element of a tape.
    fn peek(&mut self, tape: &Tape) -> Value {
        let data = self.load(&Type::PTR, tape.header);
        let eight = self.iconst(Type::I64, 8);
        let top_ptr = self.ptradd(tape.header, eight);
        let top = self.load(&Type::I64, top_ptr);
        let one = self.iconst(Type::I64, 1);
        let last = self.binary(BinaryOp::Sub, top, one);
        let size = self.iconst(Type::I64, tape.elem.size().max(1) as i128);
        let offset = self.binary(BinaryOp::Mul, last, size);
        let addr = self.ptradd(data, offset);
        self.load(&tape.elem, addr)
    }

    /// Reverse code at `self.cur`: drops the top element of a tape.
    fn pop(&mut self, tape: &Tape) {
        let eight = self.iconst(Type::I64, 8);
        let top_ptr = self.ptradd(tape.header, eight);
        let top = self.load(&Type::I64, top_ptr);
        let one = self.iconst(Type::I64, 1);
        let last = self.binary(BinaryOp::Sub, top, one);
        self.store(last, top_ptr);
    }

    fn control_tape(&mut self) -> Tape {
        if let Some(tape) = &self.cache.control {
            return tape.clone();
        }
        let tape = self.new_tape(Type::I64, None);
        self.cache.control = Some(tape.clone());
        tape
    }

    /// Forward code at `self.cur`: records which incoming edge of a merge block was taken.
    pub fn push_control(&mut self, index: i128) {
        let tape = self.control_tape();
        let value = self.iconst(Type::I64, index);
        let size = self.iconst(Type::I64, 8);
        let addr = self.val(InstructionData::Call {
            callee: self.runtime.tape_push,
            args: vec![tape.header, size],
            attrs: adc_ir::FuncAttrs::empty(),
        });
        self.store(value, addr);
    }

    /// Reverse code at `self.cur`: the edge index the forward pass recorded last.
    pub fn pop_control(&mut self) -> Value {
        let tape = self.control_tape();
        let index = self.peek(&tape);
        self.pop(&tape);
        index
    }

    /// Inserts the pops of value tapes at the end of the reverse region of their defining
    /// blocks, and frees every tape buffer before the derivative returns.
    pub fn finish_tapes(&mut self) {
        let saved = self.cur;
        for (block, tape) in std::mem::take(&mut self.cache.pops) {
            let Some(&last) = self.rev_last.get(&block) else { continue };
            let Some(term) = self.f.layout.last_inst(last) else { continue };
            // Emit at the end of the region's last block, then move the terminator last.
            self.f.layout.remove_inst(term);
            self.cur = last;
            self.pop(&tape);
            self.f.layout.append_inst(term, last);
        }
        if let Some(ret) = self.cache.final_return {
            if let Some(block) = self.f.layout.inst_block(ret) {
                self.f.layout.remove_inst(ret);
                self.cur = block;
                for header in self.cache.headers.clone() {
                    let data = self.load(&Type::PTR, header);
                    self.ins(InstructionData::Call {
                        callee: self.runtime.free,
                        args: vec![data],
                        attrs: adc_ir::FuncAttrs::empty(),
                    });
                }
                self.f.layout.append_inst(ret, block);
            }
        }
        self.cur = saved;
    }
}
