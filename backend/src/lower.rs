//! Lowering of one adc function to Cranelift IR: blocks and block parameters, control
//! flow, memory, calls and aggregates. The per-lane arithmetic lives in `ops.rs`, the
//! SIMD lowering of float vectors in `simd.rs`.
//!
//! Blocks are visited in reverse post-order, so every value is lowered before its uses
//! (a definition dominates its uses, and dominators come first in RPO); unreachable
//! blocks are dropped. Each adc value is a list of leaves (see `abi.rs`), kept in SIMD
//! form when SIMD is on: control flow, memory, constants, calls between SIMD-ABI
//! functions and aggregates move the leaves as they are; an operation without a SIMD
//! lowering takes its operands in lane form and its result is packed back.

use std::collections::{HashMap, HashSet};

use adc_ir::dominance::DomTree;
use adc_ir::{
    Block, Constant, FuncId, Function, InstructionData as D, Module, ParamAttrs, Signature, Symbol,
    Type, Value, ValueDef,
};
use cranelift_codegen::ir::{
    self, condcodes, condcodes::CondCode, types, BlockArg, ExternalName, InstBuilder, MemFlagsData,
    StackSlotData, StackSlotKind, UserExternalName,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_entity::SecondaryMap;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch};
use cranelift_module::{DataId, Linkage as ClLinkage, Module as ClModule};

use crate::abi::{self, leaf_range, scalar, Leaf};
use crate::simd::{pack, unpack};

pub type R<T> = Result<T, String>;

/// Bytes before the data of a heap-backed alloca: the link to the previous one.
const LINK_BYTES: i64 = 8;

/// What every function lowering needs to know about the module being built.
pub struct ModuleIds {
    pub funcs: HashMap<FuncId, cranelift_module::FuncId>,
    pub data: HashMap<adc_ir::GlobalId, DataId>,
    /// `mov al, 8; jmp callee` thunks for variadic callees (see `module.rs`).
    pub thunks: HashMap<FuncId, cranelift_module::FuncId>,
    /// The Cranelift bodies of defined variadic functions, whose own symbols are entry
    /// thunks (see `varargs.rs`).
    pub va_bodies: HashMap<FuncId, cranelift_module::FuncId>,
    pub call_conv: cranelift_codegen::isa::CallConv,
    pub frontend: TargetFrontendConfig,
    /// Float vectors are kept in SIMD form inside functions.
    pub simd: bool,
    /// Functions whose signatures pass vectors in SIMD form (see `module.rs`).
    pub simd_abi: HashSet<FuncId>,
}

/// Lowers `func` into `out` (whose signature is set here).
pub fn lower_function<M: ClModule>(
    module: &Module,
    id: FuncId,
    cm: &mut M,
    ids: &ModuleIds,
    out: &mut ir::Function,
    fbc: &mut FunctionBuilderContext,
) -> R<()> {
    let func = &module.functions[id];
    let abi_simd = ids.simd_abi.contains(&id);
    out.signature = abi::signature(
        &func.signature,
        &func.param_attrs,
        &func.byval_sizes,
        &[],
        ids.call_conv,
        abi_simd,
    )?;
    let variadic = func.signature.varargs;
    if variadic {
        out.signature = crate::varargs::body_signature(&out.signature);
    }
    let dom = DomTree::for_function(func).ok_or("function without an entry block")?;
    let b = FunctionBuilder::new(out, fbc);
    let mut cx = Lower {
        module,
        func,
        cm,
        ids,
        b,
        vals: SecondaryMap::new(),
        blocks: HashMap::new(),
        callees: HashMap::new(),
        datas: HashMap::new(),
        simd: ids.simd,
        abi_simd,
        dynamic_allocas: None,
        va_frame: None,
        dom,
    };
    let order: Vec<Block> = cx.dom.rpo().to_vec();
    let entry = func.entry_block();
    // A variadic body starts in a block of its own that loads the named parameters.
    let va_start_block = variadic.then(|| {
        let block = cx.b.create_block();
        cx.b.append_block_param(block, types::I64);
        cx.b.append_block_param(block, types::I64);
        block
    });
    for &block in &order {
        let cl = cx.b.create_block();
        cx.blocks.insert(block, cl);
        // The entry block's parameters are the function's: in the form of its ABI.
        let simd = if Some(block) == entry { abi_simd } else { cx.simd };
        for &param in func.dfg.block_params(block) {
            let mut leaves = Vec::new();
            for leaf in abi::leaves(func.dfg.value_type(param), simd)? {
                leaves.push(cx.b.append_block_param(cl, leaf.cl()?));
            }
            cx.vals[param] = leaves;
        }
    }
    if let (Some(start), Some(entry)) = (va_start_block, entry) {
        cx.b.switch_to_block(start);
        let params = cx.va_prologue(start)?;
        let args: Vec<BlockArg> = params.into_iter().map(BlockArg::Value).collect();
        cx.b.ins().jump(cx.blocks[&entry], &args);
    }
    for &block in &order {
        cx.b.switch_to_block(cx.blocks[&block]);
        if Some(block) == entry {
            cx.start_dynamic_alloca_list();
        }
        if Some(block) == entry && cx.simd && !abi_simd {
            for &param in func.dfg.block_params(block) {
                let lanes = std::mem::take(&mut cx.vals[param]);
                cx.vals[param] = pack(&mut cx.b, func.dfg.value_type(param), &lanes)?;
            }
        }
        for &inst in func.layout.block_insts(block) {
            cx.inst(inst).map_err(|e| format!("{e} (in `{}`)", inst_text(module, func, inst)))?;
        }
    }
    cx.b.seal_all_blocks();
    let frontend = cx.ids.frontend;
    cx.b.finalize(frontend);
    Ok(())
}

fn inst_text(module: &Module, func: &Function, inst: adc_ir::Inst) -> String {
    let _ = module;
    let data = &func.dfg.insts[inst];
    match func.dfg.inst_result(inst) {
        Some(v) => format!("{v} = {} ...", data.opcode_name()),
        None => format!("{} ...", data.opcode_name()),
    }
}

pub(crate) struct Lower<'a, 'b, M: ClModule> {
    pub module: &'a Module,
    pub func: &'a Function,
    pub cm: &'a mut M,
    pub ids: &'a ModuleIds,
    pub b: FunctionBuilder<'b>,
    pub vals: SecondaryMap<Value, Vec<ir::Value>>,
    blocks: HashMap<Block, ir::Block>,
    callees: HashMap<(cranelift_module::FuncId, ir::Signature), ir::FuncRef>,
    datas: HashMap<DataId, ir::GlobalValue>,
    /// Values are kept in SIMD form.
    pub simd: bool,
    /// This function's parameters and return value are in SIMD form.
    abi_simd: bool,
    /// The stack slot holding the head of this call's list of heap-backed allocas (see
    /// [`Lower::alloca`]); `None` when every alloca is a static stack slot.
    dynamic_allocas: Option<ir::StackSlot>,
    /// A variadic function's save and argument areas (see `varargs.rs`).
    pub(crate) va_frame: Option<crate::varargs::VaFrame>,
    dom: DomTree,
}

pub(crate) fn mem() -> MemFlagsData {
    MemFlagsData::new()
}

impl<M: ClModule> Lower<'_, '_, M> {
    pub fn cl(&self, ty: &Type) -> R<ir::Type> {
        scalar(ty).ok_or_else(|| format!("no machine type for {ty}"))
    }

    pub fn ty(&self, v: Value) -> &Type {
        self.func.dfg.value_type(v)
    }

    /// The leaves of `v` as they are kept (SIMD form when SIMD is on).
    pub fn machine(&self, v: Value) -> R<Vec<ir::Value>> {
        let leaves = &self.vals[v];
        if leaves.is_empty()
            && abi::leaves(self.ty(v), false).map(|l| !l.is_empty()).unwrap_or(true)
        {
            return Err(format!("{v} is used before it is defined"));
        }
        Ok(leaves.clone())
    }

    /// The leaves of `v` in lane form, for the per-lane lowering.
    pub fn get(&mut self, v: Value) -> R<Vec<ir::Value>> {
        let leaves = self.machine(v)?;
        if !self.simd {
            return Ok(leaves);
        }
        let ty = self.func.dfg.value_type(v);
        unpack(&mut self.b, ty, &leaves)
    }

    pub fn one(&self, v: Value) -> R<ir::Value> {
        self.vals[v].first().copied().ok_or_else(|| format!("{v} is used before it is defined"))
    }

    /// The constant integer a value was defined with, if it comes from a `const`.
    pub fn const_int(&self, v: Value) -> Option<u128> {
        match self.func.dfg.value_def(v) {
            ValueDef::Result(inst) => match &self.func.dfg.insts[inst] {
                D::Const { value: Constant::Int(n), .. } => Some(*n),
                D::Const { value: Constant::Zero | Constant::Undef | Constant::Poison, .. } => {
                    Some(0)
                }
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    pub fn iconst(&mut self, ty: ir::Type, value: u128) -> ir::Value {
        if ty == types::I128 {
            let lo = self.b.ins().iconst(types::I64, value as u64 as i64);
            let hi = self.b.ins().iconst(types::I64, (value >> 64) as u64 as i64);
            return self.b.ins().iconcat(lo, hi);
        }
        let bits = ty.bits();
        let masked = if bits >= 64 { value as u64 } else { (value as u64) & ((1u64 << bits) - 1) };
        self.b.ins().iconst(ty, masked as i64)
    }

    pub fn zero(&mut self, ty: ir::Type) -> ir::Value {
        match ty {
            types::F32 => self.b.ins().f32const(0.0),
            types::F64 => self.b.ins().f64const(0.0),
            _ => self.iconst(ty, 0),
        }
    }

    fn set(&mut self, inst: adc_ir::Inst, leaves: Vec<ir::Value>) {
        if let Some(result) = self.func.dfg.inst_result(inst) {
            self.vals[result] = leaves;
        }
    }

    fn inst(&mut self, inst: adc_ir::Inst) -> R<()> {
        let func = self.func;
        let data = &func.dfg.insts[inst];
        let result_ty = func.dfg.inst_result(inst).map(|v| func.dfg.value_type(v));
        let per_lane = matches!(
            data,
            D::Unary { .. }
                | D::Binary { .. }
                | D::Fma { .. }
                | D::Icmp { .. }
                | D::Fcmp { .. }
                | D::Select { .. }
                | D::Cast { .. }
                | D::PtrAdd { .. }
                | D::ExtractLane { .. }
                | D::InsertLane { .. }
                | D::Shuffle { .. }
                | D::Reduce { .. }
        );
        let leaves = if !per_lane {
            self.structural_inst(inst, data)?
        } else if let Some(leaves) = self.simd_inst(data, result_ty)? {
            leaves
        } else {
            let lanes = self.lane_inst(data)?;
            match result_ty {
                Some(ty) => {
                    let want = abi::leaf_count(ty)?;
                    if lanes.len() != want {
                        return Err(format!("lowered to {} values, {ty} has {want}", lanes.len()));
                    }
                    if self.simd {
                        pack(&mut self.b, ty, &lanes)?
                    } else {
                        lanes
                    }
                }
                None => lanes,
            }
        };
        if let Some(ty) = result_ty {
            let want = abi::leaves(ty, self.simd)?.len();
            if leaves.len() != want {
                return Err(format!("lowered to {} values, {ty} has {want}", leaves.len()));
            }
        }
        self.set(inst, leaves);
        Ok(())
    }

    /// An operation lowered lane by lane: operands and result in lane form.
    fn lane_inst(&mut self, data: &D) -> R<Vec<ir::Value>> {
        Ok(match data {
            D::Unary { op, arg, .. } => {
                let lane = self.ty(*arg).lane_type().clone();
                let mut out = Vec::new();
                for x in self.get(*arg)? {
                    out.push(self.unary(*op, &lane, x)?);
                }
                out
            }
            D::Binary { op, args, .. } => {
                let lane = self.ty(args[0]).lane_type().clone();
                let (a, b) = (self.get(args[0])?, self.get(args[1])?);
                let mut out = Vec::new();
                for (x, y) in a.into_iter().zip(b) {
                    out.push(self.binary(*op, &lane, x, y)?);
                }
                out
            }
            D::Fma { args, .. } => {
                let (a, b, c) = (self.get(args[0])?, self.get(args[1])?, self.get(args[2])?);
                let mut out = Vec::new();
                for k in 0..a.len() {
                    out.push(self.b.ins().fma(a[k], b[k], c[k]));
                }
                out
            }
            D::Icmp { cond, args } => {
                let lane = self.ty(args[0]).lane_type().clone();
                let (a, b) = (self.get(args[0])?, self.get(args[1])?);
                let mut out = Vec::new();
                for (x, y) in a.into_iter().zip(b) {
                    out.push(self.icmp(*cond, &lane, x, y));
                }
                out
            }
            D::Fcmp { cond, args, .. } => {
                let (a, b) = (self.get(args[0])?, self.get(args[1])?);
                let mut out = Vec::new();
                for (x, y) in a.into_iter().zip(b) {
                    out.push(self.fcmp(*cond, x, y));
                }
                out
            }
            D::Select { args, .. } => {
                let c = self.get(args[0])?;
                let (a, b) = (self.get(args[1])?, self.get(args[2])?);
                let mut out = Vec::new();
                for k in 0..a.len() {
                    let cond = if c.len() == a.len() { c[k] } else { c[0] };
                    out.push(self.b.ins().select(cond, a[k], b[k]));
                }
                out
            }
            D::Cast { op, arg, ty } => self.cast(*op, *arg, ty)?,
            D::PtrAdd { ptr, offset, .. } => {
                let (ps, os) = (self.get(*ptr)?, self.get(*offset)?);
                let oty = self.ty(*offset).lane_type().clone();
                let mut out = Vec::new();
                for k in 0..ps.len() {
                    let o = self.widen_i64(os[k.min(os.len() - 1)], &oty, true);
                    out.push(self.b.ins().iadd(ps[k], o));
                }
                out
            }
            D::ExtractLane { vector, index } => {
                let lanes = self.get(*vector)?;
                vec![self.pick_lane(&lanes, *index)?]
            }
            D::InsertLane { vector, value, index } => {
                let lanes = self.get(*vector)?;
                let x = self.one(*value)?;
                self.insert_lane(lanes, x, *index)?
            }
            D::Shuffle { args, mask } => {
                let mut both = self.get(args[0])?;
                both.extend(self.get(args[1])?);
                let lane = self.cl(self.ty(args[0]).lane_type())?;
                let mut out = Vec::new();
                for m in mask {
                    match m.and_then(|k| both.get(k as usize).copied()) {
                        Some(v) => out.push(v),
                        None => out.push(self.zero(lane)),
                    }
                }
                out
            }
            D::Reduce { op, args, .. } => {
                let lane = self.ty(args[0]).lane_type().clone();
                let lanes = self.get(args[0])?;
                let start = match args.get(1) {
                    Some(s) => Some(self.one(*s)?),
                    None => None,
                };
                vec![self.reduce(*op, &lane, &lanes, start)?]
            }
            _ => return Err(format!("{} is not a per-lane operation", data.opcode_name())),
        })
    }

    /// Everything else: leaves move in the form they are kept in.
    fn structural_inst(&mut self, inst: adc_ir::Inst, data: &D) -> R<Vec<ir::Value>> {
        Ok(match data {
            D::Const { ty, value } => self.constant(ty, value)?,
            D::Alloca { ty, count, align } => vec![self.alloca(inst, ty, *count, *align)?],
            D::Load { ty, ptr, .. } => {
                let p = self.one(*ptr)?;
                self.load(ty, p, self.simd)?
            }
            D::Store { value, ptr, .. } => {
                let p = self.one(*ptr)?;
                let ty = self.ty(*value).clone();
                let leaves = self.machine(*value)?;
                self.store(&ty, &leaves, p, self.simd)?;
                Vec::new()
            }
            D::MemCopy { dst, src, len, may_overlap, .. } => {
                let (d, s) = (self.one(*dst)?, self.one(*src)?);
                let n = self.one(*len)?;
                let n = self.widen_i64(n, &self.ty(*len).clone(), false);
                if *may_overlap {
                    self.b.call_memmove(self.ids.frontend, d, s, n);
                } else {
                    self.b.call_memcpy(self.ids.frontend, d, s, n);
                }
                Vec::new()
            }
            D::MemSet { dst, byte, len, .. } => {
                let d = self.one(*dst)?;
                let c = self.one(*byte)?;
                // `call_memset` widens the byte itself.
                let c = self.widen_i64(c, &self.ty(*byte).clone(), false);
                let c = self.b.ins().ireduce(types::I8, c);
                let n = self.one(*len)?;
                let n = self.widen_i64(n, &self.ty(*len).clone(), false);
                self.b.call_memset(self.ids.frontend, d, c, n);
                Vec::new()
            }
            D::Call { callee, args, .. } => self.call(*callee, args)?,
            D::CallIndirect { sig, callee, args, .. } => self.call_indirect(sig, *callee, args)?,
            D::ExtractValue { aggregate, indices } => {
                let range = leaf_range(self.ty(*aggregate), indices, self.simd)?;
                let leaves = self.machine(*aggregate)?;
                leaves.get(range).ok_or("extractvalue out of range")?.to_vec()
            }
            D::InsertValue { aggregate, value, indices } => {
                let range = leaf_range(self.ty(*aggregate), indices, self.simd)?;
                let mut leaves = self.machine(*aggregate)?;
                let new = self.machine(*value)?;
                if range.end > leaves.len() || new.len() != range.len() {
                    return Err("insertvalue out of range".into());
                }
                leaves.splice(range, new);
                leaves
            }
            D::AtomicRmw { op, ptr, value, .. } => {
                let p = self.one(*ptr)?;
                let x = self.one(*value)?;
                let ty = self.ty(*value).clone();
                vec![self.atomic_rmw(*op, &ty, p, x)?]
            }
            D::CmpXchg { ptr, expected, new, .. } => {
                let p = self.one(*ptr)?;
                let (e, n) = (self.one(*expected)?, self.one(*new)?);
                if *self.ty(*expected) == Type::I1 {
                    return Err("cmpxchg on i1 is not supported".into());
                }
                let old = self.b.ins().atomic_cas(mem(), p, e, n);
                let ok = self.b.ins().icmp(condcodes::IntCC::Equal, old, e);
                vec![old, ok]
            }
            D::Fence { .. } => {
                self.b.ins().fence();
                Vec::new()
            }
            D::Jump { dest } => {
                let (block, args) = self.block_call(dest)?;
                self.b.ins().jump(block, &args);
                Vec::new()
            }
            D::Brif { cond, then_dest, else_dest } => {
                let c = self.one(*cond)?;
                let (tb, targs) = self.block_call(then_dest)?;
                let (eb, eargs) = self.block_call(else_dest)?;
                let here = self.func.layout.inst_block(inst).ok_or("branch outside a block")?;
                if self.continues_loop(here, then_dest.block)
                    && !self.continues_loop(here, else_dest.block)
                {
                    let not_c = self.negate_condition(c);
                    self.b.ins().brif(not_c, eb, &eargs, tb, &targs);
                } else {
                    self.b.ins().brif(c, tb, &targs, eb, &eargs);
                }
                Vec::new()
            }
            D::Switch { value, default, cases } => {
                let x = self.one(*value)?;
                let mut edges = Vec::new();
                let default = self.direct_target(default, &mut edges)?;
                let mut switch = Switch::new();
                for (case, dest) in cases {
                    let block = self.direct_target(dest, &mut edges)?;
                    switch.set_entry(*case, block);
                }
                switch.emit(&mut self.b, x, default);
                // Edge blocks are filled once the switch has terminated the current block.
                for (edge, block, args) in edges {
                    self.b.switch_to_block(edge);
                    self.b.ins().jump(block, &args);
                }
                Vec::new()
            }
            D::Return { value } => {
                let leaves = match value {
                    Some(v) if self.abi_simd => self.machine(*v)?,
                    Some(v) => self.get(*v)?,
                    None => Vec::new(),
                };
                self.free_dynamic_allocas()?;
                self.b.ins().return_(&leaves);
                Vec::new()
            }
            D::Unreachable => {
                self.b.ins().trap(ir::TrapCode::unwrap_user(1));
                Vec::new()
            }
            _ => return Err(format!("{} is a per-lane operation", data.opcode_name())),
        })
    }

    /// Whether a branch from `from` to `target` goes round a loop: `target` dominates
    /// `from` (a back edge), or `target` is a latch that jumps to such a header.
    ///
    /// Cranelift lays blocks out in the reverse post-order of a DFS that visits a
    /// `brif`'s first successor first, which puts that successor after everything
    /// reachable from the second one. A latch named first therefore lands after the
    /// rest of the function, every value live through the loop is live across all of
    /// that code in linear order, and the register allocator reloads them on each
    /// back edge (GMM's reversed triangle: five reloads per iteration). Naming the exit
    /// first keeps the latch next to its loop.
    fn continues_loop(&self, from: Block, target: Block) -> bool {
        let header = match self.func.terminator(target).map(|t| &self.func.dfg.insts[t]) {
            _ if self.dom.dominates(target, from) => return true,
            Some(D::Jump { dest }) => dest.block,
            _ => return false,
        };
        self.dom.dominates(header, target) && self.dom.dominates(header, from)
    }

    /// `c == 0` as a branch condition, folding into the comparison that produced `c`.
    fn negate_condition(&mut self, c: ir::Value) -> ir::Value {
        if let ir::ValueDef::Result(def, 0) = self.b.func.dfg.value_def(c) {
            match self.b.func.dfg.insts[def] {
                ir::InstructionData::IntCompare { cond, args, .. } => {
                    return self.b.ins().icmp(cond.complement(), args[0], args[1]);
                }
                ir::InstructionData::FloatCompare { cond, args, .. } => {
                    return self.b.ins().fcmp(cond.complement(), args[0], args[1]);
                }
                _ => {}
            }
        }
        self.b.ins().icmp_imm_u(condcodes::IntCC::Equal, c, 0)
    }

    fn block_call(&self, call: &adc_ir::BlockCall) -> R<(ir::Block, Vec<BlockArg>)> {
        let block = *self.blocks.get(&call.block).ok_or("branch to an unreachable block")?;
        let mut args = Vec::new();
        for a in &call.args {
            args.extend(self.machine(*a)?.into_iter().map(BlockArg::Value));
        }
        Ok((block, args))
    }

    /// A block without arguments that reaches `call`: the target itself or a new edge
    /// block, recorded in `edges` to be filled with the jump later.
    #[allow(clippy::type_complexity)]
    fn direct_target(
        &mut self,
        call: &adc_ir::BlockCall,
        edges: &mut Vec<(ir::Block, ir::Block, Vec<BlockArg>)>,
    ) -> R<ir::Block> {
        let (block, args) = self.block_call(call)?;
        if args.is_empty() {
            return Ok(block);
        }
        let edge = self.b.create_block();
        edges.push((edge, block, args));
        Ok(edge)
    }

    /// Integer `x` of adc type `ty` widened or narrowed to an `i64`.
    pub fn widen_i64(&mut self, x: ir::Value, ty: &Type, signed: bool) -> ir::Value {
        match ty {
            Type::I64 | Type::Ptr(_) => x,
            Type::I128 => self.b.ins().ireduce(types::I64, x),
            _ if signed && *ty != Type::I1 => self.b.ins().sextend(types::I64, x),
            _ => self.b.ins().uextend(types::I64, x),
        }
    }

    pub fn constant(&mut self, ty: &Type, value: &Constant) -> R<Vec<ir::Value>> {
        let mut out = Vec::new();
        self.push_constant(ty, value, &mut out)?;
        Ok(out)
    }

    fn push_constant(&mut self, ty: &Type, value: &Constant, out: &mut Vec<ir::Value>) -> R<()> {
        if let Some(chunk) = abi::simd_chunk(ty).filter(|_| self.simd) {
            // The vector's bytes, as in memory, one constant-pool entry per chunk.
            let mut bytes = vec![0u8; ty.size().next_multiple_of(16) as usize];
            crate::data::write_constant(ty, value, 0, &mut bytes, &mut Vec::new())?;
            // Only the lanes' bytes: the size in memory may be padded (<12 x f32> takes 64).
            let lane_bytes = u64::from(ty.lanes()) * ty.lane_type().size();
            for piece in bytes[..lane_bytes as usize].chunks(16) {
                let c = self.b.func.dfg.constants.insert(ir::ConstantData::from(piece));
                out.push(self.b.ins().vconst(chunk, c));
            }
            return Ok(());
        }
        match (value, ty) {
            (Constant::Zero | Constant::Undef | Constant::Poison, _) => {
                for leaf in abi::leaves(ty, self.simd)? {
                    out.push(match leaf {
                        Leaf::Scalar(t) => {
                            let cl = self.cl(&t)?;
                            self.zero(cl)
                        }
                        Leaf::Chunk(chunk) => {
                            let zeros = ir::ConstantData::from(&[0u8; 16][..]);
                            let c = self.b.func.dfg.constants.insert(zeros);
                            self.b.ins().vconst(chunk, c)
                        }
                    });
                }
            }
            (Constant::Int(v), t) if t.is_int() || t.is_ptr() => {
                let cl = self.cl(t)?;
                out.push(self.iconst(cl, *v));
            }
            (Constant::Float(bits), Type::F32) => {
                out.push(self.b.ins().f32const(ir::immediates::Ieee32::with_bits(*bits as u32)))
            }
            (Constant::Float(bits), Type::F64) => {
                out.push(self.b.ins().f64const(ir::immediates::Ieee64::with_bits(*bits)))
            }
            (Constant::Bytes(bytes), _) => {
                for byte in bytes {
                    out.push(self.b.ins().iconst(types::I8, i64::from(*byte)));
                }
            }
            (Constant::Elements(elems), _) => {
                for (k, e) in elems.iter().enumerate() {
                    let et = ty.element_type(k as u64).ok_or("constant shape mismatch")?.clone();
                    self.push_constant(&et, e, out)?;
                }
            }
            (Constant::Address { symbol, offset }, _) => {
                let base = self.symbol_addr(*symbol)?;
                out.push(if *offset == 0 { base } else { self.b.ins().iadd_imm_s(base, *offset) });
            }
            _ => return Err(format!("constant {value:?} does not fit {ty}")),
        }
        Ok(())
    }

    fn symbol_addr(&mut self, symbol: Symbol) -> R<ir::Value> {
        match symbol {
            Symbol::Global(g) => {
                let id = *self.ids.data.get(&g).ok_or("reference to an unknown global")?;
                let gv = match self.datas.get(&id) {
                    Some(gv) => *gv,
                    None => {
                        let gv = self.cm.declare_data_in_func(id, self.b.func);
                        self.datas.insert(id, gv);
                        gv
                    }
                };
                Ok(self.b.ins().symbol_value(types::I64, gv))
            }
            Symbol::Func(f) => {
                let id = *self.ids.funcs.get(&f).ok_or("reference to an unknown function")?;
                let fref = self.cm.declare_func_in_func(id, self.b.func);
                Ok(self.b.ins().func_addr(types::I64, fref))
            }
        }
    }

    /// The size of a static stack slot for `inst`, an alloca: of constant size, in the
    /// entry block, not huge. `None`: the alloca is heap-backed (see [`Lower::alloca`]).
    fn static_alloca_size(&self, inst: adc_ir::Inst) -> Option<u64> {
        let D::Alloca { ty, count, .. } = &self.func.dfg.insts[inst] else { return None };
        let n = match count {
            None => 1,
            Some(c) => self.const_int(*c)?,
        };
        let in_entry = self.func.layout.inst_block(inst) == self.func.entry_block();
        let size = ty.size().saturating_mul(n as u64).max(1);
        (in_entry && size <= (1 << 30)).then_some(size)
    }

    /// At the top of the entry block: when some alloca of the function is heap-backed,
    /// the slot holding the head of the list of this call's heap-backed allocas, empty.
    fn start_dynamic_alloca_list(&mut self) {
        let func = self.func;
        let heap_backed = func.layout.insts().any(|(_, inst)| {
            matches!(func.dfg.insts[inst], D::Alloca { .. })
                && self.static_alloca_size(inst).is_none()
        });
        if heap_backed {
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                8,
                3,
            ));
            let null = self.b.ins().iconst(types::I64, 0);
            self.b.ins().stack_store(types::I64, null, slot, 0);
            self.dynamic_allocas = Some(slot);
        }
    }

    /// Before a return: frees every heap-backed alloca of this call (the list is walked
    /// from its head; each block's first word links to the block allocated before it).
    fn free_dynamic_allocas(&mut self) -> R<()> {
        let Some(slot) = self.dynamic_allocas else { return Ok(()) };
        let walk = self.b.create_block();
        let cur = self.b.append_block_param(walk, types::I64);
        let body = self.b.create_block();
        let done = self.b.create_block();
        let head = self.b.ins().stack_load(types::I64, types::I64, slot, 0);
        self.b.ins().jump(walk, &[BlockArg::Value(head)]);
        self.b.switch_to_block(walk);
        self.b.ins().brif(cur, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let next = self.b.ins().load(types::I64, mem(), cur, 0);
        let sig = Signature::new(vec![Type::PTR], None);
        self.call_external("free", &sig, &[cur])?;
        self.b.ins().jump(walk, &[BlockArg::Value(next)]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// Static stack slots for allocas of constant size in the entry block. Elsewhere an
    /// alloca must give fresh memory each time it runs (a loop's alloca grows the stack in
    /// LLVM), and Cranelift has no dynamically sized stack allocation: those, and huge
    /// ones, are heap blocks, linked into a list whose head lives in a stack slot and
    /// freed when the function returns, as the stack memory would be. (LLVM's
    /// `stackrestore` would release them earlier; the importer drops it, so memory of an
    /// alloca in a loop accumulates until the return.)
    fn alloca(
        &mut self,
        inst: adc_ir::Inst,
        ty: &Type,
        count: Option<Value>,
        align: u32,
    ) -> R<ir::Value> {
        let align = u64::from(align).max(ty.align()).max(1).next_power_of_two();
        if let Some(size) = self.static_alloca_size(inst) {
            let shift = align.trailing_zeros().min(31) as u8;
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size as u32,
                shift,
            ));
            return Ok(self.b.ins().stack_addr(types::I64, slot, 0));
        }
        let list = self.dynamic_allocas.ok_or("a heap-backed alloca without its list")?;
        let n = match count {
            Some(c) => {
                let n = self.one(c)?;
                self.widen_i64(n, &self.ty(c).clone(), false)
            }
            None => self.b.ins().iconst(types::I64, 1),
        };
        // The link word, then padding up to the alignment, then the data.
        let link = LINK_BYTES.max(align as i64);
        let bytes = self.b.ins().imul_imm_s(n, ty.size() as i64);
        let bytes = self.b.ins().iadd_imm_s(bytes, link + align as i64);
        let sig = Signature::new(vec![Type::I64], Some(Type::PTR));
        let block = self.call_external("malloc", &sig, &[bytes])?[0];
        // Out of memory where the stack would overflow: a trap, not a wild store.
        self.b.ins().trapz(block, ir::TrapCode::HEAP_OUT_OF_BOUNDS);
        let head = self.b.ins().stack_load(types::I64, types::I64, list, 0);
        self.b.ins().store(mem(), head, block, 0);
        self.b.ins().stack_store(types::I64, block, list, 0);
        // Round up to the requested alignment (malloc guarantees 16).
        let p = self.b.ins().iadd_imm_s(block, link + align as i64 - 1);
        Ok(self.b.ins().band_imm_s(p, -(align as i64)))
    }

    /// Loads a value of type `ty`, in SIMD form when `simd`: one unaligned 16-byte load per
    /// chunk (Cranelift folds a load into an SSE operation only when it is marked aligned,
    /// and adc does not trust IR alignment that much).
    pub fn load(&mut self, ty: &Type, p: ir::Value, simd: bool) -> R<Vec<ir::Value>> {
        if let Type::Vector(elem, n) = ty {
            if **elem == Type::I1 {
                // Bit-packed: lane k is bit k % 8 of byte k / 8.
                let mut out = Vec::new();
                for k in 0..*n {
                    let byte = self.b.ins().load(types::I8, mem(), p, (k / 8) as i32);
                    let bit = self.b.ins().ushr_imm_s(byte, i64::from(k % 8));
                    out.push(self.b.ins().band_imm_s(bit, 1));
                }
                return Ok(out);
            }
        }
        let mut out = Vec::new();
        for (offset, leaf) in abi::memory_layout(ty, simd)? {
            let cl = leaf.cl()?;
            let (base, off) = self.address(p, offset);
            let v = self.b.ins().load(cl, mem(), base, off);
            let is_bool = leaf == Leaf::Scalar(Type::I1);
            out.push(if is_bool { self.b.ins().band_imm_s(v, 1) } else { v });
        }
        Ok(out)
    }

    /// Stores `leaves` (in SIMD form when `simd`) of a value of type `ty`.
    pub fn store(&mut self, ty: &Type, leaves: &[ir::Value], p: ir::Value, simd: bool) -> R<()> {
        if let Type::Vector(elem, _) = ty {
            if **elem == Type::I1 {
                for (byte_index, chunk) in leaves.chunks(8).enumerate() {
                    let mut acc = self.b.ins().iconst(types::I8, 0);
                    for (k, lane) in chunk.iter().enumerate() {
                        let bit = self.b.ins().ishl_imm_s(*lane, k as i64);
                        acc = self.b.ins().bor(acc, bit);
                    }
                    self.b.ins().store(mem(), acc, p, byte_index as i32);
                }
                return Ok(());
            }
        }
        for ((offset, _), v) in abi::memory_layout(ty, simd)?.into_iter().zip(leaves) {
            let (base, off) = self.address(p, offset);
            self.b.ins().store(mem(), *v, base, off);
        }
        Ok(())
    }

    fn address(&mut self, p: ir::Value, offset: u64) -> (ir::Value, i32) {
        match i32::try_from(offset) {
            Ok(off) => (p, off),
            Err(_) => (self.b.ins().iadd_imm_s(p, offset as i64), 0),
        }
    }

    /// A `FuncRef` for calling `id` with the call site's signature `sig`.
    fn func_ref(&mut self, id: cranelift_module::FuncId, sig: ir::Signature) -> ir::FuncRef {
        if let Some(r) = self.callees.get(&(id, sig.clone())) {
            return *r;
        }
        let sig_ref = self.b.import_signature(sig.clone());
        let name =
            self.b.func.declare_imported_user_function(UserExternalName::new(0, id.as_u32()));
        let r = self.b.import_function(ir::ExtFuncData {
            name: ExternalName::user(name),
            signature: sig_ref,
            colocated: false,
            patchable: false,
        });
        self.callees.insert((id, sig), r);
        r
    }

    /// Calls a C library function by name (declared on first use).
    pub fn call_external(
        &mut self,
        name: &str,
        sig: &Signature,
        args: &[ir::Value],
    ) -> R<Vec<ir::Value>> {
        let cl_sig = abi::signature(sig, &[], &[], &[], self.ids.call_conv, false)?;
        let id = match self.module.function_by_name(name).and_then(|f| self.ids.funcs.get(&f)) {
            Some(id) => *id,
            None => self
                .cm
                .declare_function(name, ClLinkage::Import, &cl_sig)
                .map_err(|e| format!("cannot declare @{name}: {e}"))?,
        };
        let r = self.func_ref(id, cl_sig);
        let call = self.b.ins().call(r, args);
        Ok(self.b.inst_results(call).to_vec())
    }

    /// The arguments' leaves, in SIMD form when the callee takes them so.
    fn flat_args(&mut self, args: &[Value], simd: bool) -> R<Vec<ir::Value>> {
        let mut out = Vec::new();
        for a in args {
            out.extend(if simd { self.machine(*a)? } else { self.get(*a)? });
        }
        Ok(out)
    }

    /// A call's results, kept in SIMD form.
    fn call_results(
        &mut self,
        call: ir::Inst,
        ret: Option<&Type>,
        simd: bool,
    ) -> R<Vec<ir::Value>> {
        let results = self.b.inst_results(call).to_vec();
        match ret {
            Some(ty) if self.simd && !simd => pack(&mut self.b, ty, &results),
            _ => Ok(results),
        }
    }

    fn call(&mut self, callee: FuncId, args: &[Value]) -> R<Vec<ir::Value>> {
        let target = self.module.functions.get(callee).ok_or("call to an unknown function")?;
        let intrinsic = adc_ir::varargs::VaIntrinsic::from_name(&target.name);
        if let Some(intrinsic) = intrinsic.filter(|_| target.is_declaration()) {
            self.va_intrinsic(intrinsic, args)?;
            return Ok(Vec::new());
        }
        let fixed = target.signature.params.len();
        let extra: Vec<Type> = args.iter().skip(fixed).map(|a| self.ty(*a).clone()).collect();
        let simd = self.ids.simd_abi.contains(&callee);
        let sig = abi::signature(
            &target.signature,
            &target.param_attrs,
            &target.byval_sizes,
            &extra,
            self.ids.call_conv,
            simd,
        )?;
        let id = if target.signature.varargs {
            *self.ids.thunks.get(&callee).ok_or("variadic callee without a thunk")?
        } else {
            *self.ids.funcs.get(&callee).ok_or("call to an undeclared function")?
        };
        let r = self.func_ref(id, sig);
        let mut flat = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let byval = target.param_attrs.get(i).is_some_and(|p| p.contains(ParamAttrs::BYVAL));
            match target.byval_sizes.get(i).copied().flatten() {
                Some(size) if byval && abi::byval_slot_size(size) != size => {
                    flat.push(self.padded_byval_copy(*a, size)?)
                }
                _ => flat.extend(if simd { self.machine(*a)? } else { self.get(*a)? }),
            }
        }
        let call = self.b.ins().call(r, &flat);
        self.call_results(call, target.signature.ret.as_ref(), simd)
    }

    /// A copy of a `byval` struct whose size is not a whole number of eightbytes in a stack
    /// slot that is: Cranelift copies the slot's size into the argument area, which must
    /// not read past the end of the caller's struct.
    fn padded_byval_copy(&mut self, arg: Value, size: u32) -> R<ir::Value> {
        let source = self.one(arg)?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            abi::byval_slot_size(size),
            4,
        ));
        let copy = self.b.ins().stack_addr(types::I64, slot, 0);
        let len = self.b.ins().iconst(types::I64, i64::from(size));
        self.b.call_memcpy(self.ids.frontend, copy, source, len);
        Ok(copy)
    }

    fn call_indirect(
        &mut self,
        sig: &Signature,
        callee: Value,
        args: &[Value],
    ) -> R<Vec<ir::Value>> {
        let fixed = sig.params.len();
        let extra: Vec<Type> = args.iter().skip(fixed).map(|a| self.ty(*a).clone()).collect();
        let cl_sig = abi::signature(sig, &[], &[], &extra, self.ids.call_conv, false)?;
        let sig_ref = self.b.import_signature(cl_sig);
        let p = self.one(callee)?;
        let flat = self.flat_args(args, false)?;
        let call = self.b.ins().call_indirect(sig_ref, p, &flat);
        self.call_results(call, sig.ret.as_ref(), false)
    }

    fn pick_lane(&mut self, lanes: &[ir::Value], index: Value) -> R<ir::Value> {
        if let Some(k) = self.const_int(index) {
            return match lanes.get(k as usize) {
                Some(v) => Ok(*v),
                None => {
                    let ty = self.b.func.dfg.value_type(lanes[0]);
                    Ok(self.zero(ty))
                }
            };
        }
        let i = self.one(index)?;
        let ity = self.ty(index).clone();
        let i = self.widen_i64(i, &ity, false);
        let mut acc = *lanes.first().ok_or("empty vector")?;
        for (k, lane) in lanes.iter().enumerate().skip(1) {
            let is_k = self.b.ins().icmp_imm_s(condcodes::IntCC::Equal, i, k as i64);
            acc = self.b.ins().select(is_k, *lane, acc);
        }
        Ok(acc)
    }

    fn insert_lane(
        &mut self,
        mut lanes: Vec<ir::Value>,
        x: ir::Value,
        index: Value,
    ) -> R<Vec<ir::Value>> {
        if let Some(k) = self.const_int(index) {
            if let Some(slot) = lanes.get_mut(k as usize) {
                *slot = x;
            }
            return Ok(lanes);
        }
        let i = self.one(index)?;
        let ity = self.ty(index).clone();
        let i = self.widen_i64(i, &ity, false);
        for (k, lane) in lanes.iter_mut().enumerate() {
            let is_k = self.b.ins().icmp_imm_s(condcodes::IntCC::Equal, i, k as i64);
            *lane = self.b.ins().select(is_k, x, *lane);
        }
        Ok(lanes)
    }
}
