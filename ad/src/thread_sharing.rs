//! Which loads of a GPU function read memory that no other thread of the launch touches
//! while the function runs, so that reverse mode may add their adjoints into the shadow
//! with a plain load, add and store instead of an atomic add.
//!
//! Reverse mode adds a load's adjoint into the shadow of the loaded element. Two threads
//! that read the same element (a stencil's neighbours, a broadcast scalar) add into the
//! same shadow element at the same time, so by default the add is atomic. Two facts make
//! it plain, both assuming what the primal must already satisfy, that it is free of data
//! races:
//!
//! - **Written by the same thread** ([`Privacy::Exclusive`]): a store of at least the
//!   load's size to the same address executes whenever the load does (earlier in the
//!   block, later in the same block, or in a dominating block). Any other thread touching
//!   that element during the call would race with the store, so no other thread's
//!   reverse pass adds into its shadow. `y[i] = a * x[i] + y[i]` makes `y[i]` exclusive.
//! - **Indexed by the global thread id** ([`Privacy::ByThreadIndex`]): the address is
//!   `base + k * (blockIdx.x * blockDim.x + threadIdx.x)` plus launch-uniform terms, with
//!   `|k|` at least the loaded size, so two threads of a one-dimensional launch read
//!   disjoint bytes through it; and every other active load that may reach the same
//!   memory is exclusive, uses the very same address value, or reads a thread's own
//!   stack. "Launch-uniform" covers parameters only when every caller is a kernel passing
//!   launch-uniform arguments (kernel parameters, constants, grid dimensions); a call with
//!   a per-thread pointer makes nothing indexed. The reverse pass checks at run time that
//!   the launch is one-dimensional (`blockDim.y/z` and `gridDim.y/z` are 1) and keeps the
//!   atomic otherwise, since threads differing only in y or z share the index.
//!
//! Functions with barriers (phases make "during the call" too coarse), atomics of the
//! primal (threads may then legally share written elements), or calls that may touch
//! memory get no private loads.
//!
//! For the loads whose shadow stays shared it also says where lanes of a warp can combine
//! their adjoints before the atomics (both checked at run time by the reverse pass, so
//! these are only choices of code, never of correctness): addresses that do not vary across
//! a warp's lanes ([`ThreadPrivateLoads::likely_shared_in_warp`]: warp reductions), and
//! [`neighbors`] groups of stencil reads (adjoints handed to the lane that owns them).

use std::collections::{HashMap, HashSet};

use adc_ir::nvvm::{Axis, SpecialRegister};

use crate::request::has_pointer;
use adc_ir::{
    BinaryOp, CastOp, Constant, FuncAttrs, FuncId, Function, Inst, InstFlags, InstructionData,
    Module, ParamAttrs, Symbol, Value, ValueDef,
};

/// Why a load's shadow needs no atomic add.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// The same thread stores to the element during the call.
    Exclusive,
    /// The element's index is the global thread id: private in one-dimensional launches.
    ByThreadIndex,
}

/// The loads of one function whose shadow elements are private to the reading thread.
#[derive(Clone, Debug, Default)]
pub struct ThreadPrivateLoads {
    loads: HashMap<Inst, Privacy>,
    /// Active loads whose address does not vary across the lanes of a warp: likely the
    /// same element in several lanes (a weight, a table entry at a loop index, a row of a
    /// shared tile).
    lane_invariant: HashSet<Inst>,
    /// Loads in neighbour groups (stencil reads), whose adjoints lanes can exchange.
    neighbors: HashMap<Inst, Neighbor>,
}

impl ThreadPrivateLoads {
    /// Analyses `func` of `module`; `is_active` says which load results carry adjoints
    /// (only those write into shadows in the reverse pass).
    pub fn compute(module: &Module, func: FuncId, is_active: impl Fn(Value) -> bool) -> Self {
        let f = &module.functions[func];
        let mut result = ThreadPrivateLoads::default();
        if f.is_declaration() {
            return result;
        }
        let active_loads: Vec<(Inst, Value)> = f
            .layout
            .insts()
            .filter_map(|(_, inst)| match f.dfg.insts[inst] {
                InstructionData::Load { ptr, .. } => {
                    let value = f.dfg.inst_result(inst)?;
                    is_active(value).then_some((inst, ptr))
                }
                _ => None,
            })
            .collect();
        let params_uniform = params_are_uniform(module, func);
        let mut lanes = LaneVariance::new(module, f, params_uniform);
        for &(load, ptr) in &active_loads {
            if !lanes.varies(ptr) {
                result.lane_invariant.insert(load);
            }
        }
        if only_plain_memory_access(module, f) {
            result.find_private_loads(module, f, &active_loads, params_uniform);
        }
        let shared: Vec<(Inst, Value)> = active_loads
            .iter()
            .copied()
            .filter(|(load, _)| {
                !result.loads.contains_key(load) && !result.lane_invariant.contains(load)
            })
            .collect();
        result.neighbors = neighbors::neighbor_groups(f, &shared);
        result
    }

    fn find_private_loads(
        &mut self,
        module: &Module,
        f: &Function,
        active_loads: &[(Inst, Value)],
        params_uniform: bool,
    ) {
        let Some(dom) = adc_ir::dominance::DomTree::for_function(f) else { return };
        for &(load, _) in active_loads {
            if stored_by_same_thread(f, &dom, load) {
                self.loads.insert(load, Privacy::Exclusive);
            }
        }
        let uniform = Uniformity::new(module, f, params_uniform);
        for &(load, ptr) in active_loads {
            if self.loads.contains_key(&load) {
                continue;
            }
            let size = load_size(f, load);
            let Some(form) = uniform.thread_form(ptr) else { continue };
            if !form.is_injective(size) {
                continue;
            }
            let others_disjoint = active_loads.iter().all(|&(other, other_ptr)| {
                other_ptr == ptr
                    || self.loads.get(&other) == Some(&Privacy::Exclusive)
                    || cannot_overlap(f, ptr, other_ptr)
            });
            if others_disjoint {
                self.loads.insert(load, Privacy::ByThreadIndex);
            }
        }
    }

    /// The neighbour group of `load`, if it is in one (see [`neighbors`]).
    pub fn neighbor(&self, load: Inst) -> Option<Neighbor> {
        self.neighbors.get(&load).copied()
    }

    /// Why the shadow of `load` needs no atomic add, if it does not.
    pub fn privacy(&self, load: Inst) -> Option<Privacy> {
        self.loads.get(&load).copied()
    }

    /// Whether the address of `load` does not vary across the lanes of a warp (no
    /// `threadIdx.x` or lane id reaches it), so that lanes likely add into the same shadow
    /// elements: worth a warp reduction before the atomics. Only that choice rests on it:
    /// the reverse pass checks at run time which lanes share an address.
    pub fn likely_shared_in_warp(&self, load: Inst) -> bool {
        self.lane_invariant.contains(&load) && !self.loads.contains_key(&load)
    }
}

/// Which values of a function may differ between the lanes of one warp: reached from
/// `threadIdx.x` or the lane id (the lanes of a warp are consecutive in x; they share
/// the block, `threadIdx.y` and `.z` when the block is at least 32 wide, the warp and the
/// SM), from parameters unless they are launch-uniform, or from calls and atomics. Loads
/// follow their address. A heuristic for where to try warp reductions.
struct LaneVariance<'f> {
    module: &'f Module,
    f: &'f Function,
    params_uniform: bool,
    /// (block, parameter index) -> the values branches pass to it.
    incoming: HashMap<(adc_ir::Block, usize), Vec<Value>>,
    memo: HashMap<Value, bool>,
}

impl<'f> LaneVariance<'f> {
    fn new(module: &'f Module, f: &'f Function, params_uniform: bool) -> Self {
        let incoming = f.block_param_sources();
        LaneVariance { module, f, params_uniform, incoming, memo: HashMap::new() }
    }

    fn varies(&mut self, value: Value) -> bool {
        if let Some(known) = self.memo.get(&value) {
            return *known;
        }
        // Cycles through loop parameters: assume independent while visiting, as a
        // fixed point from below would.
        self.memo.insert(value, false);
        let f = self.f;
        let depends = match f.dfg.value_def(value) {
            ValueDef::Param(block, index) if Some(block) == f.entry_block() => {
                let _ = index;
                !self.params_uniform
            }
            ValueDef::Param(block, index) => {
                let args = self.incoming.get(&(block, index as usize)).cloned().unwrap_or_default();
                args.into_iter().any(|a| self.varies(a))
            }
            ValueDef::Result(inst) => match &f.dfg.insts[inst] {
                InstructionData::Call { callee, .. } => {
                    let name = &self.module.functions[*callee].name;
                    !matches!(
                        SpecialRegister::from_intrinsic(name),
                        Some(
                            SpecialRegister::Ntid(_)
                                | SpecialRegister::Nctaid(_)
                                | SpecialRegister::Ctaid(_)
                                | SpecialRegister::Tid(Axis::Y | Axis::Z)
                                | SpecialRegister::WarpSize
                                | SpecialRegister::WarpId
                                | SpecialRegister::NWarpId
                                | SpecialRegister::SmId
                        )
                    )
                }
                InstructionData::CallIndirect { .. }
                | InstructionData::AtomicRmw { .. }
                | InstructionData::CmpXchg { .. }
                | InstructionData::Alloca { .. } => true,
                data => data.args().into_iter().any(|a| self.varies(a)),
            },
        };
        self.memo.insert(value, depends);
        depends
    }
}

/// Whether every memory access of `f` is a plain load or store, or a call of a function
/// that touches no memory (special registers, math): no barriers, atomics, memory
/// intrinsics or opaque calls.
fn only_plain_memory_access(module: &Module, f: &Function) -> bool {
    f.layout.insts().all(|(_, inst)| match &f.dfg.insts[inst] {
        InstructionData::Call { callee, attrs, .. } => {
            attrs.contains(FuncAttrs::READNONE) || touches_no_memory(&module.functions[*callee])
        }
        InstructionData::Load { volatile, .. } | InstructionData::Store { volatile, .. } => {
            !volatile
        }
        InstructionData::MemCopy { .. }
        | InstructionData::MemSet { .. }
        | InstructionData::CallIndirect { .. }
        | InstructionData::AtomicRmw { .. }
        | InstructionData::CmpXchg { .. }
        | InstructionData::Fence { .. } => false,
        _ => true,
    })
}

/// Whether calling `callee` reads and writes no memory: special registers, functions
/// marked `readnone`, and libdevice (`__nv_*`) and LLVM (`llvm.*`) functions without
/// pointer parameters or results, which compute on their operands alone.
fn touches_no_memory(callee: &Function) -> bool {
    let name = callee.name.as_str();
    let signature = &callee.signature;
    let no_pointers = signature.params.iter().chain(&signature.ret).all(|t| !has_pointer(t));
    let synchronizes = adc_ir::nvvm::Barrier::from_intrinsic(name).is_some()
        || adc_ir::nvvm::memory_barrier(name).is_some();
    let library = name.starts_with("__nv_") || name.starts_with("llvm.");
    SpecialRegister::from_intrinsic(name).is_some()
        || (!synchronizes && (callee.attrs.contains(FuncAttrs::READNONE) || library && no_pointers))
}

/// Whether a store of at least the loaded size to the load's address executes whenever
/// the load does: anywhere in the same block (a block runs to its terminator, and the
/// calls allowed here return), or in a block that dominates the load's.
fn stored_by_same_thread(f: &Function, dom: &adc_ir::dominance::DomTree, load: Inst) -> bool {
    let InstructionData::Load { ptr, .. } = f.dfg.insts[load] else { return false };
    let size = load_size(f, load);
    let Some(load_block) = f.layout.inst_block(load) else { return false };
    f.layout.insts().any(|(block, inst)| match f.dfg.insts[inst] {
        InstructionData::Store { value, ptr: to, .. } if to == ptr => {
            f.dfg.value_type(value).size() >= size
                && (block == load_block || dom.dominates(block, load_block))
        }
        _ => false,
    })
}

fn load_size(f: &Function, load: Inst) -> u64 {
    f.dfg.inst_result(load).map_or(u64::MAX, |v| f.dfg.value_type(v).size())
}

/// Whether two pointers provably reach disjoint memory: one is into the thread's own
/// stack, or they come from distinct `noalias` parameters or distinct globals.
fn cannot_overlap(f: &Function, a: Value, b: Value) -> bool {
    let (a, b) = (underlying_object(f, a), underlying_object(f, b));
    let thread_stack = |o: &Object| matches!(o, Object::Alloca(_));
    if thread_stack(&a) || thread_stack(&b) {
        return true;
    }
    match (a, b) {
        (Object::NoaliasParam(x), Object::NoaliasParam(y)) => x != y,
        (Object::Global(x), Object::Global(y)) => x != y,
        (Object::NoaliasParam(_), Object::Global(_))
        | (Object::Global(_), Object::NoaliasParam(_)) => true,
        _ => false,
    }
}

#[derive(PartialEq, Eq)]
enum Object {
    Alloca(Inst),
    NoaliasParam(u32),
    Global(adc_ir::GlobalId),
    Unknown,
}

fn underlying_object(f: &Function, mut ptr: Value) -> Object {
    for _ in 0..64 {
        match f.dfg.value_def(ptr) {
            ValueDef::Param(block, index) => {
                let entry = f.entry_block();
                let noalias = f
                    .param_attrs
                    .get(index as usize)
                    .is_some_and(|a| a.contains(ParamAttrs::NOALIAS));
                return if Some(block) == entry && noalias {
                    Object::NoaliasParam(index)
                } else {
                    Object::Unknown
                };
            }
            ValueDef::Result(inst) => match &f.dfg.insts[inst] {
                InstructionData::Alloca { .. } => return Object::Alloca(inst),
                InstructionData::PtrAdd { ptr: base, .. } => ptr = *base,
                InstructionData::Cast { op: CastOp::Addrspacecast, arg, .. } => ptr = *arg,
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Global(g), .. },
                    ..
                } => return Object::Global(*g),
                _ => return Object::Unknown,
            },
        }
    }
    Object::Unknown
}

/// Whether every caller of `func` is a kernel passing launch-uniform arguments, so that
/// the parameters of `func` hold the same value in every thread. A kernel's own
/// parameters are uniform. Callers are direct calls and calls handing `func`'s address
/// to the Enzyme API (`__enzyme_*`); any other use of the address (stored, passed
/// elsewhere) makes the parameters unknown.
fn params_are_uniform(module: &Module, func: FuncId) -> bool {
    if module.functions[func].attrs.contains(FuncAttrs::KERNEL) {
        return true;
    }
    let mut found_caller = false;
    for (_, caller) in module.functions.iter() {
        let addresses: HashSet<Value> = caller
            .layout
            .insts()
            .filter_map(|(_, inst)| match &caller.dfg.insts[inst] {
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Func(id), .. },
                    ..
                } if *id == func => caller.dfg.inst_result(inst),
                _ => None,
            })
            .collect();
        let is_kernel = caller.attrs.contains(FuncAttrs::KERNEL);
        let uniform = Uniformity::new(module, caller, is_kernel);
        for (_, inst) in caller.layout.insts() {
            let data = &caller.dfg.insts[inst];
            let mentions = data.args().iter().any(|a| addresses.contains(a));
            let InstructionData::Call { callee, args, .. } = data else {
                if mentions {
                    return false;
                }
                continue;
            };
            let api = module.functions[*callee].name.starts_with("__enzyme_");
            if *callee != func && !(mentions && api) {
                if mentions {
                    return false;
                }
                continue;
            }
            found_caller = true;
            let passes_uniform =
                args.iter().all(|a| addresses.contains(a) || uniform.is_uniform(*a));
            if !is_kernel || !passes_uniform {
                return false;
            }
        }
    }
    found_caller
}

/// Launch-uniform values of one function: the same in every thread of a launch.
struct Uniformity<'f> {
    module: &'f Module,
    f: &'f Function,
    params_uniform: bool,
}

/// `thread * (blockIdx.x * blockDim.x + threadIdx.x)` plus launch-uniform terms, as the
/// coefficients of `threadIdx.x` and of `blockIdx.x * blockDim.x`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct ThreadForm {
    thread: i128,
    block_base: i128,
}

impl ThreadForm {
    fn is_injective(&self, access_size: u64) -> bool {
        self.thread == self.block_base
            && self.thread != 0
            && self.thread.unsigned_abs() >= u128::from(access_size)
    }

    fn add(self, other: ThreadForm, sign: i128) -> ThreadForm {
        ThreadForm {
            thread: self.thread + sign * other.thread,
            block_base: self.block_base + sign * other.block_base,
        }
    }

    fn scale(self, k: i128) -> Option<ThreadForm> {
        Some(ThreadForm {
            thread: self.thread.checked_mul(k)?,
            block_base: self.block_base.checked_mul(k)?,
        })
    }
}

impl<'f> Uniformity<'f> {
    fn new(module: &'f Module, f: &'f Function, params_uniform: bool) -> Self {
        Uniformity { module, f, params_uniform }
    }

    fn register(&self, value: Value) -> Option<SpecialRegister> {
        let ValueDef::Result(inst) = self.f.dfg.value_def(value) else { return None };
        let InstructionData::Call { callee, .. } = &self.f.dfg.insts[inst] else { return None };
        SpecialRegister::from_intrinsic(&self.module.functions[*callee].name)
    }

    fn is_uniform(&self, value: Value) -> bool {
        self.uniform_at(value, 0)
    }

    fn uniform_at(&self, value: Value, depth: usize) -> bool {
        if depth > 48 {
            return false;
        }
        let f = self.f;
        match f.dfg.value_def(value) {
            ValueDef::Param(block, _) => self.params_uniform && Some(block) == f.entry_block(),
            ValueDef::Result(inst) => match &f.dfg.insts[inst] {
                InstructionData::Const { .. } => true,
                InstructionData::Call { .. } => matches!(
                    self.register(value),
                    Some(SpecialRegister::Ntid(_) | SpecialRegister::Nctaid(_))
                ),
                // A load from a launch-uniform address reads the same value in every
                // thread that runs concurrently with it: a thread writing another value
                // there would race with the others' reads (the Enzyme API's activity
                // markers are such loads).
                InstructionData::Load { ptr, volatile: false, .. } => {
                    self.uniform_at(*ptr, depth + 1)
                }
                data @ (InstructionData::Binary { .. }
                | InstructionData::Unary { .. }
                | InstructionData::Cast { .. }
                | InstructionData::PtrAdd { .. }
                | InstructionData::Icmp { .. }
                | InstructionData::Select { .. }) => {
                    data.args().iter().all(|a| self.uniform_at(*a, depth + 1))
                }
                _ => false,
            },
        }
    }

    /// The value as a [`ThreadForm`] plus launch-uniform terms, or `None` when it depends
    /// on the thread in any other way.
    fn thread_form(&self, value: Value) -> Option<ThreadForm> {
        self.form_at(value, None, 0)
    }

    /// `narrow`: inside an extension from a narrower integer, the no-wrap flag every
    /// operation must carry for the extension to distribute over it.
    fn form_at(&self, value: Value, narrow: Option<InstFlags>, depth: usize) -> Option<ThreadForm> {
        if depth > 48 {
            return None;
        }
        if self.uniform_at(value, 0) {
            return Some(ThreadForm::default());
        }
        if self.register(value) == Some(SpecialRegister::Tid(Axis::X)) {
            return Some(ThreadForm { thread: 1, block_base: 0 });
        }
        let ValueDef::Result(inst) = self.f.dfg.value_def(value) else { return None };
        let next = |v: Value, narrow| self.form_at(v, narrow, depth + 1);
        match &self.f.dfg.insts[inst] {
            InstructionData::PtrAdd { ptr, offset, .. } => {
                Some(next(*ptr, narrow)?.add(next(*offset, narrow)?, 1))
            }
            InstructionData::Cast { op: CastOp::Sext, arg, .. } => next(*arg, Some(InstFlags::NSW)),
            InstructionData::Cast { op: CastOp::Zext, arg, .. } => next(*arg, Some(InstFlags::NUW)),
            InstructionData::Binary { op, flags, args: [a, b] } => {
                if narrow.is_some_and(|required| !flags.contains(required)) {
                    return None;
                }
                match op {
                    BinaryOp::Add => Some(next(*a, narrow)?.add(next(*b, narrow)?, 1)),
                    BinaryOp::Sub => Some(next(*a, narrow)?.add(next(*b, narrow)?, -1)),
                    BinaryOp::Mul => {
                        if self.is_block_base(*a, *b) {
                            return Some(ThreadForm { thread: 0, block_base: 1 });
                        }
                        match (self.constant(*a), self.constant(*b)) {
                            (_, Some(k)) => next(*a, narrow)?.scale(k),
                            (Some(k), _) => next(*b, narrow)?.scale(k),
                            _ => None,
                        }
                    }
                    BinaryOp::Shl => {
                        let shift = self.constant(*b).filter(|s| (0..64).contains(s))?;
                        next(*a, narrow)?.scale(1 << shift)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Whether `a * b` is `blockIdx.x * blockDim.x` in either order.
    fn is_block_base(&self, a: Value, b: Value) -> bool {
        let (ra, rb) = (self.register(a), self.register(b));
        let pair = [ra, rb];
        pair.contains(&Some(SpecialRegister::Ctaid(Axis::X)))
            && pair.contains(&Some(SpecialRegister::Ntid(Axis::X)))
    }

    fn constant(&self, value: Value) -> Option<i128> {
        self.f.dfg.const_int(value)
    }
}

mod neighbors;
#[cfg(test)]
mod tests;

pub use neighbors::Neighbor;
