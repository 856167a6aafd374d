//! GPU reverse mode: what changes when the differentiated function runs as one thread of
//! a CUDA grid (a module whose target triple is nvptx).
//!
//! - Thread and block ids and dims (`llvm.nvvm.read.ptx.sreg.*`) are integers and carry
//!   no derivative; memory barriers and the special registers need nothing in reverse.
//! - A barrier of the primal (`llvm.nvvm.barrier0`, `barrier.sync`) gets a barrier at the
//!   mirrored point of the reverse pass: the adjoints written before the primal barrier's
//!   mirror are read by other threads after it, as the primal values were.
//! - The adjoint of a load is accumulated into the shadow of memory that other threads
//!   may touch (anything but the thread's own allocas) with `atomicrmw fadd`, because two
//!   threads may read the same primal element (a stencil's neighbours, a broadcast
//!   scalar) and so add into the same shadow element in the same phase. A store's adjoint
//!   needs no atomic: a race-free primal writes each element from one thread per phase.
//! - `atomicrmw fadd` of the primal (a reduction into global memory) reads its shadow
//!   into the adjoint of its operand; its old value must not carry a derivative.
//! - A shared-memory array (address space 3) that holds floats gets a shadow shared array
//!   ([`declare_gpu_runtime`], before synthesis). Shared memory cannot be initialized,
//!   so the derivative starts with the block's threads zeroing the shadows (strided by the
//!   linear thread id) followed by a barrier; the derivative must therefore be called by
//!   every thread of the block, as the `__global__` wrappers around `__enzyme_autodiff_*`
//!   do.

use adc_ir::{
    AtomicRmwOp, BinaryOp, BlockCall, CastOp, Constant, FuncAttrs, FuncId, Function, Global,
    GlobalId, Inst, InstFlags, InstructionData, IntCC, Linkage, Module, Ordering, Signature,
    Symbol, Type, Value, ValueDef,
};

use super::Synth;
use adc_ir::nvvm::{ShuffleMode, SpecialRegister, WarpOp};

use crate::request::has_float;
use crate::thread_sharing::Privacy;

/// The suffix of a shared array's shadow.
const SHADOW_SUFFIX: &str = "__adc_shadow";
/// Special registers the shadow-zeroing loop reads (tid.x/y/z, ntid.x/y), ntid.z, and
/// the barrier after it.
fn thread_registers() -> [String; 5] {
    use adc_ir::nvvm::{Axis, SpecialRegister::*};
    [Tid(Axis::X), Tid(Axis::Y), Tid(Axis::Z), Ntid(Axis::X), Ntid(Axis::Y)].map(|r| r.intrinsic())
}

/// The y and z dimensions of the block and the grid, which a thread-indexed adjoint
/// checks (see [`Privacy::ByThreadIndex`]).
fn launch_registers() -> [String; 4] {
    use adc_ir::nvvm::{Axis, SpecialRegister::*};
    [Ntid(Axis::Y), Ntid(Axis::Z), Nctaid(Axis::Y), Nctaid(Axis::Z)].map(|r| r.intrinsic())
}

fn ntid_z() -> String {
    adc_ir::nvvm::SpecialRegister::Ntid(adc_ir::nvvm::Axis::Z).intrinsic()
}

const BARRIER: &str = adc_ir::nvvm::BARRIER0;

/// Whether the module is device code for a GPU (an nvptx target triple).
pub(crate) fn is_nvptx(module: &Module) -> bool {
    module.target.as_deref().is_some_and(|t| t.starts_with("nvptx"))
}

/// Adds to a GPU module a shadow shared array for every shared array holding floats (and
/// the declarations the zeroing code calls), and declares the launch dimensions that
/// thread-indexed adjoints read. Does nothing for other modules.
pub(crate) fn declare_gpu_runtime(module: &mut Module) {
    if !is_nvptx(module) {
        return;
    }
    for name in launch_registers() {
        declare(module, &name, Signature::new(Vec::new(), Some(Type::I32)));
    }
    // What warp-reduced adjoints call.
    let i32s = |n: usize| vec![Type::I32; n];
    let laneid = SpecialRegister::LaneId.intrinsic();
    declare(module, &laneid, Signature::new(Vec::new(), Some(Type::I32)));
    declare(module, WarpOp::ActiveMask.intrinsic(), Signature::new(Vec::new(), Some(Type::I32)));
    for mode in [ShuffleMode::Bfly, ShuffleMode::Idx] {
        let shuffle = WarpOp::Shuffle(mode).intrinsic();
        declare(module, shuffle, Signature::new(i32s(4), Some(Type::I32)));
    }
    let vote = Signature::new(vec![Type::I32, Type::I1], Some(Type::I1));
    declare(module, WarpOp::VoteAll.intrinsic(), vote);
    let shared: Vec<Global> = module
        .globals
        .values()
        .filter(|g| g.addr_space == 3 && has_float(&g.ty) && !g.name.ends_with(SHADOW_SUFFIX))
        .cloned()
        .collect();
    if shared.is_empty() {
        return;
    }
    for g in shared {
        let name = format!("{}{SHADOW_SUFFIX}", g.name);
        if module.global_by_name(&name).is_none() {
            module.add_global(Global {
                name,
                linkage: Linkage::Internal,
                constant: false,
                init: Some(Constant::Undef),
                ..g
            });
        }
    }
    for name in thread_registers().iter().chain([&ntid_z()]) {
        declare(module, name, Signature::new(Vec::new(), Some(Type::I32)));
    }
    declare(module, BARRIER, Signature::new(Vec::new(), None));
}

fn declare(module: &mut Module, name: &str, signature: Signature) {
    if module.function_by_name(name).is_none() {
        let mut f = Function::new(name, signature);
        f.attrs = FuncAttrs::NOUNWIND;
        module.add_function(f);
    }
}

/// Whether `name` is a block-wide barrier of the nvvm intrinsics.
pub(crate) fn is_barrier(name: &str) -> bool {
    adc_ir::nvvm::Barrier::from_intrinsic(name).is_some()
}

/// Whether a call to `name` carries no derivative on a GPU (ids, dims, memory barriers).
pub(crate) fn is_inactive_intrinsic(name: &str) -> bool {
    adc_ir::nvvm::is_inactive(name)
}

impl Synth<'_> {
    /// Whether the module is device code for a GPU (an nvptx target).
    pub(crate) fn is_gpu_code(&self) -> bool {
        is_nvptx(self.module)
    }

    /// Whether `ptr` (a primal pointer) visibly points into one of this thread's allocas,
    /// through offsets and address-space casts.
    pub(crate) fn is_thread_private(&self, ptr: Value) -> bool {
        let mut cur = ptr;
        for _ in 0..64 {
            let ValueDef::Result(inst) = self.primal.dfg.value_def(cur) else { return false };
            match &self.primal.dfg.insts[inst] {
                InstructionData::Alloca { .. } => return true,
                InstructionData::PtrAdd { ptr, .. } => cur = *ptr,
                InstructionData::Cast { op: CastOp::Addrspacecast, arg, .. } => cur = *arg,
                _ => return false,
            }
        }
        false
    }

    /// The reverse of a GPU intrinsic call: `Some(())` when `callee` is one (a barrier
    /// is mirrored, ids and memory barriers need nothing), `None` for any other callee.
    pub(crate) fn reverse_gpu_intrinsic(&mut self, callee: FuncId) -> Option<()> {
        let name = self.module.functions[callee].name.as_str();
        if is_barrier(name) {
            // Only barrier 0 exists in the simulator and in what clang emits for
            // `__syncthreads()`; the id and thread-count operands are the defaults.
            let arity = self.module.functions[callee].signature.params.len();
            let args = (0..arity).map(|_| self.iconst(Type::I32, 0)).collect();
            self.ins(InstructionData::Call { callee, args, attrs: Default::default() });
            return Some(());
        }
        is_inactive_intrinsic(name).then_some(())
    }

    /// Adds `d` to the shadow element at `shadow` (of `load`, from primal `ptr`): an
    /// atomic add where other threads may touch the element. Returns false when the plain
    /// read-add-write is right (CPU code, thread-private memory, aggregates, elements the
    /// thread writes itself). An element indexed by the global thread id
    /// ([`Privacy::ByThreadIndex`]) gets the plain add in one-dimensional launches and
    /// the atomic otherwise, chosen at run time.
    pub(crate) fn accumulate_shared_adjoint(
        &mut self,
        load: Inst,
        ty: &Type,
        ptr: Value,
        shadow: Value,
        d: Value,
    ) -> bool {
        if !ty.is_float() || !self.is_gpu_code() || self.is_thread_private(ptr) {
            return false;
        }
        let atomic_add = InstructionData::AtomicRmw {
            op: AtomicRmwOp::Fadd,
            ptr: shadow,
            value: d,
            ordering: Ordering::Monotonic,
            volatile: false,
        };
        match self.thread_private.privacy(load) {
            Some(Privacy::Exclusive) => false,
            Some(Privacy::ByThreadIndex) => {
                let one_dimensional = self.launch_is_one_dimensional();
                let plain = self.new_block();
                let atomic = self.new_block();
                let join = self.new_block();
                self.ins(InstructionData::Brif {
                    cond: one_dimensional,
                    then_dest: BlockCall::new(plain, Vec::new()),
                    else_dest: BlockCall::new(atomic, Vec::new()),
                });
                self.cur = plain;
                let old = self.load(ty, shadow);
                let new = self.accumulate(old, d);
                self.store(new, shadow);
                self.ins(InstructionData::Jump { dest: BlockCall::new(join, Vec::new()) });
                self.cur = atomic;
                self.ins(atomic_add);
                self.ins(InstructionData::Jump { dest: BlockCall::new(join, Vec::new()) });
                self.cur = join;
                true
            }
            None => {
                match self.thread_private.neighbor(load) {
                    Some(neighbor) => self.exchange_neighbor_adjoint(neighbor, ty, shadow, d),
                    None if self.thread_private.likely_shared_in_warp(load) => {
                        self.warp_reduced_add(ty, shadow, d)
                    }
                    None => {
                        self.ins(atomic_add);
                    }
                }
                true
            }
        }
    }

    /// Adds `d` into `shadow`, an element lanes of a warp likely share. When all 32 lanes
    /// run this together (`activemask` is full), five butterfly steps pair each lane with
    /// lane `laneid ^ s` (s = 16, 8, 4, 2, 1); a step merges, for the whole warp, when every
    /// lane's partner adds into the same address: then both hold the pair's sum. The lanes
    /// thus form groups of one address each, and the group's lane with every merged bit
    /// clear adds its sum atomically: one atomic for a warp on one address, two for two
    /// rows of a 16-wide tile, 32 (after a few shuffles) when all differ. A partial warp
    /// adds per lane. Hand-written CUDA reduces the same way before its atomics.
    fn warp_reduced_add(&mut self, ty: &Type, shadow: Value, d: Value) {
        let merge = self.new_block();
        let lead = self.new_block();
        let alone = self.new_block();
        let join = self.new_block();
        let full_mask = self.branch_on_whole_warp(merge, alone);

        // Every lane runs here (the mask was full), so every shuffle has its partner.
        self.cur = merge;
        let address =
            self.val(InstructionData::Cast { op: CastOp::Ptrtoint, arg: shadow, ty: Type::I64 });
        let lane = self.lane_id();
        let vote = self.gpu_function(WarpOp::VoteAll.intrinsic());
        let bfly = WarpOp::Shuffle(ShuffleMode::Bfly);
        let mut sum = d;
        let mut leader = self.iconst(Type::I1, 1);
        for step in [16, 8, 4, 2, 1] {
            let distance = self.iconst(Type::I32, step);
            let partner_address = self.shuffle_i64(bfly, address, distance);
            let same = self
                .val(InstructionData::Icmp { cond: IntCC::Eq, args: [address, partner_address] });
            let merges = self.call_value(vote, vec![full_mask, same]);
            let bits = self.float_bits(sum);
            let partner_bits = self.shuffle_i64_or_i32(bfly, bits, distance);
            let partner = self.val(InstructionData::Cast {
                op: CastOp::Bitcast,
                arg: partner_bits,
                ty: ty.clone(),
            });
            let merged = self.accumulate(sum, partner);
            sum = self.val(InstructionData::Select {
                flags: InstFlags::empty(),
                args: [merges, merged, sum],
            });
            // The upper lane of a merged pair leaves its sum to the lower one.
            let bit = self.binary(BinaryOp::And, lane, distance);
            let zero = self.iconst(Type::I32, 0);
            let upper = self.val(InstructionData::Icmp { cond: IntCC::Ne, args: [bit, zero] });
            let drops = self.binary(BinaryOp::And, merges, upper);
            let one = self.iconst(Type::I1, 1);
            let stays = self.binary(BinaryOp::Xor, drops, one);
            leader = self.binary(BinaryOp::And, leader, stays);
        }
        self.branch(leader, lead, join);

        self.cur = lead;
        self.atomic_fadd(shadow, sum);
        self.ins(InstructionData::Jump { dest: BlockCall::new(join, Vec::new()) });

        self.cur = alone;
        self.atomic_fadd(shadow, d);
        self.ins(InstructionData::Jump { dest: BlockCall::new(join, Vec::new()) });
        self.cur = join;
    }

    /// The adjoint `d` of `load`, a neighbour `c` elements from its group's home element
    /// (see [`crate::thread_sharing::Neighbor`]): in a whole warp, lane L takes lane
    /// L-c's adjoint when that lane's element is its own home element (the addresses are
    /// compared) and adds it to the group's slot; a lane whose adjoint no lane took adds
    /// it atomically. The home load adds to the slot; after the group's last reverse (its
    /// first load), the slot goes to the home element atomically (edge lanes of other warps
    /// add there too) and is cleared.
    fn exchange_neighbor_adjoint(
        &mut self,
        neighbor: crate::thread_sharing::Neighbor,
        ty: &Type,
        shadow: Value,
        d: Value,
    ) {
        let home_ptr = match self.primal.dfg.insts[neighbor.home] {
            InstructionData::Load { ptr, .. } => Some(ptr),
            _ => None,
        };
        let Some(home) = home_ptr.and_then(|ptr| self.shadow_in_reverse(ptr)) else {
            self.atomic_fadd(shadow, d);
            return;
        };
        let slot = match self.neighbor_slots.get(&neighbor.home) {
            Some(slot) => *slot,
            None => {
                let slot = self
                    .ins_setup(InstructionData::Alloca { ty: ty.clone(), count: None, align: 8 })
                    .expect("an alloca has a result");
                let zero = self
                    .ins_setup(InstructionData::Const { ty: ty.clone(), value: Constant::Zero })
                    .expect("a constant has a result");
                self.ins_setup(InstructionData::Store {
                    value: zero,
                    ptr: slot,
                    align: ty.align() as u32,
                    volatile: false,
                });
                self.neighbor_slots.insert(neighbor.home, slot);
                slot
            }
        };
        if neighbor.offset == 0 {
            let old = self.load(ty, slot);
            let new = self.accumulate(old, d);
            self.store(new, slot);
        } else {
            self.hand_to_neighbor(ty, shadow, d, home, slot, neighbor.offset);
        }
        if neighbor.flush {
            let collected = self.load(ty, slot);
            self.atomic_fadd(home, collected);
            let zero = self.float_const(ty, 0.0);
            self.store(zero, slot);
        }
    }

    /// Lane L takes lane (L - offset)'s `d` into `slot` when that lane's `shadow` is L's
    /// `home`; a lane whose `d` lane (L + offset) did not take adds it atomically.
    fn hand_to_neighbor(
        &mut self,
        ty: &Type,
        shadow: Value,
        d: Value,
        home: Value,
        slot: Value,
        offset: i32,
    ) {
        let swap = self.new_block();
        let alone = self.new_block();
        let join = self.new_block();
        self.branch_on_whole_warp(swap, alone);

        self.cur = swap;
        let idx = WarpOp::Shuffle(ShuffleMode::Idx);
        let lane = self.lane_id();
        let to_address = |s: &mut Self, p: Value| {
            s.val(InstructionData::Cast { op: CastOp::Ptrtoint, arg: p, ty: Type::I64 })
        };
        let (mine, my_home) = (to_address(self, shadow), to_address(self, home));
        let c = self.iconst(Type::I32, i128::from(offset));
        let warp_size = self.iconst(Type::I32, 32);
        // Receive from lane L - c.
        let source = self.binary(BinaryOp::Sub, lane, c);
        let source_in_warp =
            self.val(InstructionData::Icmp { cond: IntCC::Ult, args: [source, warp_size] });
        let their_address = self.shuffle_i64(idx, mine, source);
        let bits = self.float_bits(d);
        let their_bits = self.shuffle_i64_or_i32(idx, bits, source);
        let theirs = self.val(InstructionData::Cast {
            op: CastOp::Bitcast,
            arg: their_bits,
            ty: ty.clone(),
        });
        let for_me =
            self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [their_address, my_home] });
        let take = self.binary(BinaryOp::And, source_in_warp, for_me);
        let zero = self.float_const(ty, 0.0);
        let taken = self
            .val(InstructionData::Select { flags: InstFlags::empty(), args: [take, theirs, zero] });
        let old = self.load(ty, slot);
        let new = self.accumulate(old, taken);
        self.store(new, slot);
        // Did lane L + c take mine? The same comparison, seen from this side.
        let target = self.binary(BinaryOp::Add, lane, c);
        let target_in_warp =
            self.val(InstructionData::Icmp { cond: IntCC::Ult, args: [target, warp_size] });
        let their_home = self.shuffle_i64(idx, my_home, target);
        let mine_home =
            self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [their_home, mine] });
        let given = self.binary(BinaryOp::And, target_in_warp, mine_home);
        self.branch(given, join, alone);

        self.cur = alone;
        self.atomic_fadd(shadow, d);
        self.ins(InstructionData::Jump { dest: BlockCall::new(join, Vec::new()) });
        self.cur = join;
    }

    /// Branches to `whole` when all 32 lanes of the warp run this together (`activemask`
    /// is full), to `partial` otherwise; returns the full mask.
    fn branch_on_whole_warp(&mut self, whole: adc_ir::Block, partial: adc_ir::Block) -> Value {
        let full_mask = self.iconst(Type::I32, 0xffff_ffff);
        let activemask = self.gpu_function(WarpOp::ActiveMask.intrinsic());
        let mask = self.call_value(activemask, Vec::new());
        let is_whole = self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [mask, full_mask] });
        self.branch(is_whole, whole, partial);
        full_mask
    }

    fn lane_id(&mut self) -> Value {
        let laneid = self.gpu_function(&SpecialRegister::LaneId.intrinsic());
        self.call_value(laneid, Vec::new())
    }

    /// An intrinsic `declare_gpu_runtime` declared for GPU modules.
    fn gpu_function(&self, name: &str) -> FuncId {
        self.module.function_by_name(name).expect("declared for GPU code")
    }

    fn atomic_fadd(&mut self, ptr: Value, value: Value) {
        self.ins(InstructionData::AtomicRmw {
            op: AtomicRmwOp::Fadd,
            ptr,
            value,
            ordering: Ordering::Monotonic,
            volatile: false,
        });
    }

    fn branch(&mut self, cond: Value, then_block: adc_ir::Block, else_block: adc_ir::Block) {
        self.ins(InstructionData::Brif {
            cond,
            then_dest: BlockCall::new(then_block, Vec::new()),
            else_dest: BlockCall::new(else_block, Vec::new()),
        });
    }

    fn call_value(&mut self, callee: FuncId, args: Vec<Value>) -> Value {
        self.val(InstructionData::Call { callee, args, attrs: FuncAttrs::empty() })
    }

    /// The bits of a float as an integer of its width.
    fn float_bits(&mut self, value: Value) -> Value {
        let width = if self.ty(value) == Type::F32 { Type::I32 } else { Type::I64 };
        self.val(InstructionData::Cast { op: CastOp::Bitcast, arg: value, ty: width })
    }

    /// A shuffle (all 32 lanes, segment mask 31) of an i32 or i64, the latter as two
    /// 32-bit halves.
    fn shuffle_i64_or_i32(&mut self, op: WarpOp, value: Value, b: Value) -> Value {
        if self.ty(value) == Type::I32 {
            return self.shuffle_i32(op, value, b);
        }
        self.shuffle_i64(op, value, b)
    }

    fn shuffle_i64(&mut self, op: WarpOp, value: Value, b: Value) -> Value {
        let low = self.val(InstructionData::Cast { op: CastOp::Trunc, arg: value, ty: Type::I32 });
        let thirty_two = self.iconst(Type::I64, 32);
        let shifted = self.binary(BinaryOp::Lshr, value, thirty_two);
        let high =
            self.val(InstructionData::Cast { op: CastOp::Trunc, arg: shifted, ty: Type::I32 });
        let low = self.shuffle_i32(op, low, b);
        let high = self.shuffle_i32(op, high, b);
        let low = self.val(InstructionData::Cast { op: CastOp::Zext, arg: low, ty: Type::I64 });
        let high = self.val(InstructionData::Cast { op: CastOp::Zext, arg: high, ty: Type::I64 });
        let high = self.binary(BinaryOp::Shl, high, thirty_two);
        self.binary(BinaryOp::Or, high, low)
    }

    fn shuffle_i32(&mut self, op: WarpOp, value: Value, b: Value) -> Value {
        let shuffle = self.gpu_function(op.intrinsic());
        let full_mask = self.iconst(Type::I32, 0xffff_ffff);
        let segment = self.iconst(Type::I32, 31);
        self.call_value(shuffle, vec![full_mask, value, b, segment])
    }

    /// Whether `blockDim.y`, `blockDim.z`, `gridDim.y` and `gridDim.z` are all 1, read where
    /// the reverse pass is: the launch has one thread per global x index. Tested as
    /// `(y - 1) | (z - 1) | ... == 0`, which a product could fake by wrapping.
    fn launch_is_one_dimensional(&mut self) -> Value {
        let one = self.iconst(Type::I32, 1);
        let mut excess = self.iconst(Type::I32, 0);
        for register in launch_registers() {
            let callee = self
                .module
                .function_by_name(&register)
                .expect("declared before synthesis of GPU code");
            let dim = self.val(InstructionData::Call {
                callee,
                args: Vec::new(),
                attrs: FuncAttrs::empty(),
            });
            let above_one = self.binary(BinaryOp::Sub, dim, one);
            excess = self.binary(BinaryOp::Or, excess, above_one);
        }
        let zero = self.iconst(Type::I32, 0);
        self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [excess, zero] })
    }

    /// The reverse of `%old = atomicrmw fadd %ptr, %value`: `d_value += shadow[ptr]`.
    /// Returns an error when the old value itself carries a derivative.
    pub(crate) fn reverse_atomic_fadd(
        &mut self,
        inst: Inst,
        op: AtomicRmwOp,
        ptr: Value,
        value: Value,
    ) -> Result<(), crate::error::AdError> {
        let old = self.primal.dfg.inst_result(inst);
        if old.is_some_and(|o| self.is_active(o)) {
            return Err(self.unsupported(
                inst,
                "an atomic add of floats whose old value carries a derivative",
            ));
        }
        let Some(shadow) = self.shadow_in_reverse(ptr) else { return Ok(()) };
        if !self.is_active(value) {
            return Ok(());
        }
        let ty = self.primal.dfg.value_type(value).clone();
        let mut d = self.load(&ty, shadow);
        if op == AtomicRmwOp::Fsub {
            d = self.val(InstructionData::Unary {
                op: adc_ir::UnaryOp::Fneg,
                arg: d,
                flags: Default::default(),
            });
        }
        self.add_adjoint(value, d);
        Ok(())
    }

    /// The shadow of a shared array, when `global` is one that has a shadow.
    fn shared_shadow(&self, global: GlobalId) -> Option<GlobalId> {
        let g = self.module.globals.get(global)?;
        if g.addr_space != 3 {
            return None;
        }
        self.module.global_by_name(&format!("{}{SHADOW_SUFFIX}", g.name))
    }

    /// The forward shadow of `const ptr @shared + offset`: the same offset into the
    /// shadow shared array. Returns false for any other instruction.
    pub(crate) fn forward_shared_shadow(&mut self, inst: Inst) -> bool {
        let InstructionData::Const {
            ty,
            value: Constant::Address { symbol: Symbol::Global(global), offset },
        } = self.primal.dfg.insts[inst].clone()
        else {
            return false;
        };
        let Some(shadow_global) = self.shared_shadow(global) else { return false };
        let Some(result) = self.primal.dfg.inst_result(inst) else { return false };
        let shadow =
            self.constant(ty, Constant::Address { symbol: Symbol::Global(shadow_global), offset });
        self.set_shadow(result, shadow);
        true
    }

    /// At the start of the derivative (before the primal's first block): the threads of the
    /// block zero the shadows of the shared arrays the primal uses, then wait at a barrier.
    pub(crate) fn zero_shared_shadows(&mut self) {
        if self.split.is_some() || !self.is_gpu_code() {
            return;
        }
        let mut used: Vec<(GlobalId, Type)> = Vec::new();
        for (_, inst) in self.primal.layout.insts() {
            if let InstructionData::Const {
                ty,
                value: Constant::Address { symbol: Symbol::Global(g), .. },
            } = &self.primal.dfg.insts[inst]
            {
                if let Some(shadow) = self.shared_shadow(*g) {
                    if !used.iter().any(|(s, _)| *s == shadow) {
                        used.push((shadow, ty.clone()));
                    }
                }
            }
        }
        if used.is_empty() {
            return;
        }
        let func =
            |name: &str| self.module.function_by_name(name).expect("declared before synthesis");
        let regs: Vec<FuncId> = thread_registers().iter().map(|n| func(n)).collect();
        let ntid_z = func(&ntid_z());
        let barrier = func(BARRIER);
        let read = |s: &mut Self, f: FuncId| {
            let v = s.val(InstructionData::Call {
                callee: f,
                args: Vec::new(),
                attrs: FuncAttrs::empty(),
            });
            s.val(InstructionData::Cast { op: CastOp::Zext, arg: v, ty: Type::I64 })
        };
        let (tx, ty_, tz, nx, ny) = (
            read(self, regs[0]),
            read(self, regs[1]),
            read(self, regs[2]),
            read(self, regs[3]),
            read(self, regs[4]),
        );
        let nz = read(self, ntid_z);
        // linear = tx + nx * (ty + ny * tz); threads = nx * ny * nz
        let a = self.binary(BinaryOp::Mul, ny, tz);
        let b = self.binary(BinaryOp::Add, ty_, a);
        let c = self.binary(BinaryOp::Mul, nx, b);
        let linear = self.binary(BinaryOp::Add, tx, c);
        let nxy = self.binary(BinaryOp::Mul, nx, ny);
        let threads = self.binary(BinaryOp::Mul, nxy, nz);
        for (shadow, ptr_ty) in used {
            let size = self.module.globals[shadow].ty.size();
            let (elem, width) = if size.is_multiple_of(4) { (Type::I32, 4) } else { (Type::I8, 1) };
            let count = self.iconst(Type::I64, (size / width) as i128);
            let base = self
                .constant(ptr_ty, Constant::Address { symbol: Symbol::Global(shadow), offset: 0 });
            let header = self.new_block();
            let index = self.f.dfg.append_block_param(header, Type::I64);
            let body = self.new_block();
            let exit = self.new_block();
            self.ins(InstructionData::Jump { dest: BlockCall::new(header, vec![linear]) });
            self.cur = header;
            let more = self.val(InstructionData::Icmp { cond: IntCC::Ult, args: [index, count] });
            self.ins(InstructionData::Brif {
                cond: more,
                then_dest: BlockCall::new(body, Vec::new()),
                else_dest: BlockCall::new(exit, Vec::new()),
            });
            self.cur = body;
            let stride = self.iconst(Type::I64, width as i128);
            let offset = self.binary(BinaryOp::Mul, index, stride);
            let at = self.ptradd(base, offset);
            let zero = self.iconst(elem, 0);
            self.store(zero, at);
            let next = self.val(InstructionData::Binary {
                op: BinaryOp::Add,
                flags: InstFlags::empty(),
                args: [index, threads],
            });
            self.ins(InstructionData::Jump { dest: BlockCall::new(header, vec![next]) });
            self.cur = exit;
        }
        self.ins(InstructionData::Call {
            callee: barrier,
            args: Vec::new(),
            attrs: FuncAttrs::empty(),
        });
    }
}
