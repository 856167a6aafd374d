//! Memory: shadows in the forward pass and adjoints of memory operations.
//!
//! Forward pass: every pointer that needs a shadow gets one computed alongside it —
//! shadow allocas and heap blocks are zero-filled copies of the primal allocation,
//! `ptradd`/`select`/address-space casts apply the same operation to the shadows, a
//! pointer loaded from shadowed memory has its shadow loaded from the shadow memory, and
//! storing a pointer into shadowed memory stores its shadow there. Heap blocks and
//! globals: see `heap`.
//!
//! Reverse pass (adjoints live in the shadow memory, with `+=` semantics as in Enzyme):
//! - `x = load p`: `shadow[p] += dx`;
//! - `store x, p`: `dx += shadow[p]; shadow[p] = 0` (the stored value's float leaves;
//!   integer leaves of the shadow are left alone);
//! - `memcpy d, s, n` of floats: `shadow_s[i] += shadow_d[i]; shadow_d[i] = 0`, element by
//!   element in a loop; `memmove` goes through a temporary copy so overlap is harmless;
//!   copies of pointers copy the shadows in the forward pass;
//! - `memset d, b, n` of floats: `shadow_d = 0` over `n` bytes (the old values are gone);
//!   of pointers or integers: the same memset on the shadow in the forward pass.
//!
//! What the copied bytes hold comes from the type-tree analysis (`crate::typetree`): an
//! undeducible element type is an `UndeducibleType` error, never a guess. A
//! constant-length copy of mixed data (a struct with integer and float fields) is handled
//! field by field: float fields accumulate in the reverse pass, pointer fields copy their
//! shadows in the forward pass, integer fields need nothing. Mixed copies of unknown
//! length, and mixed `memmove`s, are `Unsupported`.

use adc_ir::{
    AtomicRmwOp, BinaryOp, CastOp, Constant, FuncAttrs, HeapFunction, Inst, InstFlags,
    InstructionData, IntCC, Type, Value, ValueDef,
};

use super::Synth;
use crate::error::{AdError, AdErrorKind};
use crate::request::{has_float, has_pointer};
use crate::typetree::BaseType;

/// Whether calls to `name` allocate blocks that get zero-filled shadow blocks of the same
/// size (see `heap`): the C allocators, `realloc` and `operator new`.
pub(crate) fn is_allocator(name: &str) -> bool {
    matches!(HeapFunction::of(name), Some(HeapFunction::Allocate(_) | HeapFunction::Reallocate))
}

/// What a range of bytes copied or set by a memory intrinsic holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MemContents {
    /// Elements of one float type.
    Floats(Type),
    /// Pointers (possibly with integers): shadows are copied in the forward pass.
    Pointers,
    /// Integers only: nothing to do.
    Integers,
    /// A constant-length copy of fields of several kinds (a struct with integer and
    /// float fields): the float and pointer fields at their byte offsets.
    Fields(Vec<(u64, BaseType)>),
}

/// A pointer into inactive memory meets pointers into active memory: the derivative would
/// need to know at run time which one it holds (Enzyme's "runtime activity"; without it,
/// Enzyme writes the adjoints into the inactive argument's primal memory: gradient fuzzer
/// seed 120505, split mode at -O2).
const MIXED_ACTIVITY_BASE: &str = "a pointer whose base has no shadow (inactive memory, \
     such as an `enzyme_const` argument's) where the derivative needs one (it is selected \
     or merged with pointers into active memory); passing that argument as `enzyme_dup` \
     avoids it";
const MIXED_ACTIVITY_SELECT: &str = "a select between a pointer into active memory and one \
     into inactive memory (such as an `enzyme_const` argument's); passing that argument \
     as `enzyme_dup` avoids it";

impl<'a> Synth<'a> {
    /// The forward shadow of a primal operand: its shadow, or null for a null constant.
    pub(super) fn forward_shadow_of_operand(&mut self, value: Value) -> Option<Value> {
        if let Some(shadow) = self.shadows.get(&value) {
            return Some(*shadow);
        }
        if self.function_address(value).is_some() {
            // A function address is its own shadow (see `indirect`).
            return self.vmap.get(&value).copied();
        }
        // Null and undefined pointers point nowhere; so do their shadows.
        let ValueDef::Result(inst) = self.primal.dfg.value_def(value) else { return None };
        match &self.primal.dfg.insts[inst] {
            InstructionData::Const { value: Constant::Int(0) | Constant::Zero, .. } => {
                Some(self.constant(Type::PTR, Constant::Int(0)))
            }
            InstructionData::Const {
                value: undefined @ (Constant::Undef | Constant::Poison),
                ..
            } => {
                let undefined = undefined.clone();
                Some(self.constant(Type::PTR, undefined))
            }
            _ => None,
        }
    }

    pub(super) fn set_shadow(&mut self, primal: Value, shadow: Value) {
        if let Some(name) = self.primal.dfg.value_name(primal) {
            self.f.dfg.set_value_name(shadow, &format!("{name}.shadow"));
        }
        self.shadows.insert(primal, shadow);
    }

    /// Forward-pass shadow code for one primal instruction (already cloned at `cur`).
    pub(super) fn forward_shadow(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let result = self.primal.dfg.inst_result(inst);
        let needs = result.is_some_and(|r| self.activity.needs_shadow(r));
        if needs && self.forward_shared_shadow(inst) {
            return Ok(());
        }
        match self.primal.dfg.insts[inst].clone() {
            I::Alloca { ty, count, align } if needs => {
                let count = count.map(|c| self.fwd(c));
                let mut bytes = self.iconst(Type::I64, ty.size() as i128);
                if let Some(count) = count {
                    let count = self.widen_to_i64(count);
                    bytes = self.binary(BinaryOp::Mul, bytes, count);
                }
                let shadow = self.local_shadow(ty.clone(), count, align, bytes);
                if count.is_none() && (ty.is_float() || ty.is_ptr()) {
                    // A typed zero says what the slot holds to a derivative of this
                    // derivative; an unused slot's memset said nothing.
                    let zero = self.constant(ty, Constant::Zero);
                    self.store(zero, shadow);
                } else {
                    self.memset_zero(shadow, bytes);
                }
                self.set_shadow(result.expect("alloca has a result"), shadow);
            }
            I::PtrAdd { flags, ptr, offset } if needs => {
                let base = self.forward_shadow_of_operand(ptr);
                let base = base.ok_or_else(|| self.unsupported(inst, MIXED_ACTIVITY_BASE))?;
                let offset = self.fwd(offset);
                let shadow = self.val(I::PtrAdd { flags, ptr: base, offset });
                self.set_shadow(result.expect("ptradd has a result"), shadow);
            }
            // Address round trips through integers keep the shadow alongside.
            I::Cast {
                op: op @ (CastOp::Addrspacecast | CastOp::Ptrtoint | CastOp::Inttoptr),
                arg,
                ty,
            } if needs => {
                let base = self.forward_shadow_of_operand(arg);
                let base = base.ok_or_else(|| self.unsupported(inst, MIXED_ACTIVITY_BASE))?;
                let shadow = self.val(I::Cast { op, arg: base, ty });
                self.set_shadow(result.expect("cast has a result"), shadow);
            }
            I::Select { flags, args: [cond, a, b] } if needs => {
                let (sa, sb) =
                    (self.forward_shadow_of_operand(a), self.forward_shadow_of_operand(b));
                let (Some(sa), Some(sb)) = (sa, sb) else {
                    return Err(self.unsupported(inst, MIXED_ACTIVITY_SELECT));
                };
                let cond = self.fwd(cond);
                let shadow = self.val(I::Select { flags, args: [cond, sa, sb] });
                self.set_shadow(result.expect("select has a result"), shadow);
            }
            I::Load { ty, ptr, align, volatile } if needs => {
                let base = self.forward_shadow_of_operand(ptr);
                let base = base.ok_or_else(|| self.unsupported(inst, MIXED_ACTIVITY_BASE))?;
                let shadow = self.val(I::Load { ty, ptr: base, align, volatile });
                self.set_shadow(result.expect("load has a result"), shadow);
            }
            I::Store { value, ptr, align, volatile }
                if has_pointer(self.primal.dfg.value_type(value))
                    && self.shadows.contains_key(&ptr) =>
            {
                if !self.primal.dfg.value_type(value).is_ptr() {
                    return Err(self.unsupported(inst, "a store of an aggregate holding pointers"));
                }
                let Some(shadow_value) = self.forward_shadow_of_operand(value) else {
                    return Err(self.unsupported(
                        inst,
                        "a store of a pointer without a shadow into memory that has one",
                    ));
                };
                let shadow_ptr = self.shadows[&ptr];
                self.ins(I::Store { value: shadow_value, ptr: shadow_ptr, align, volatile });
            }
            I::MemCopy { dst, src, len, may_overlap, volatile } => {
                if let (Some(sd), Some(ss)) = (self.shadows.get(&dst), self.shadows.get(&src)) {
                    let (sd, ss) = (*sd, *ss);
                    match self.mem_contents(inst, dst, src, len)? {
                        MemContents::Pointers => {
                            let len = self.fwd(len);
                            self.ins(I::MemCopy { dst: sd, src: ss, len, may_overlap, volatile });
                        }
                        MemContents::Fields(_) if may_overlap => {
                            return Err(self.unsupported(inst, "a memmove of mixed data"));
                        }
                        MemContents::Fields(fields) => {
                            for (offset, base) in fields {
                                if base == BaseType::Pointer {
                                    let (from, to) = self.field_addresses(ss, sd, offset);
                                    let p = self.load(&Type::PTR, from);
                                    self.store(p, to);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            I::MemSet { dst, byte, len, volatile } => {
                if let Some(sd) = self.shadows.get(&dst).copied() {
                    match self.mem_contents(inst, dst, dst, len)? {
                        MemContents::Pointers => {
                            let (byte, len) = (self.fwd(byte), self.fwd(len));
                            self.ins(I::MemSet { dst: sd, byte, len, volatile });
                        }
                        MemContents::Fields(fields) => {
                            let byte = self.fwd(byte);
                            for (offset, base) in fields {
                                if base == BaseType::Pointer {
                                    let (to, _) = self.field_addresses(sd, sd, offset);
                                    let eight = self.iconst(Type::I64, 8);
                                    self.ins(I::MemSet { dst: to, byte, len: eight, volatile });
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            I::Call { .. } => self.forward_heap_shadow(inst, needs)?,
            I::CallIndirect { .. } if needs => self.forward_indirect_allocation(inst)?,
            I::Const { value: Constant::Address { .. }, .. } if needs => {
                self.forward_global_shadow(inst)?
            }
            I::Const { value: Constant::Int(0) | Constant::Zero, ty } if needs && ty.is_ptr() => {
                let shadow = self.constant(ty, Constant::Zero);
                self.set_shadow(result.expect("const has a result"), shadow);
            }
            // An undefined pointer (clang -O0 leaves `undef` in unreachable or dead phi
            // inputs) points nowhere; so does its shadow.
            I::Const { value: value @ (Constant::Undef | Constant::Poison), ty }
                if needs && ty.is_ptr() =>
            {
                let shadow = self.constant(ty, value);
                self.set_shadow(result.expect("const has a result"), shadow);
            }
            I::Const { .. } if needs && result.and_then(|r| self.function_address(r)).is_some() => {
                let result = result.expect("checked above");
                self.set_shadow(result, self.fwd(result));
            }
            _ if needs => {
                return Err(self.unsupported(inst, "a pointer whose shadow cannot be computed"))
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn widen_to_i64(&mut self, value: Value) -> Value {
        match self.ty(value) {
            Type::I64 => value,
            Type::I128 => {
                self.val(InstructionData::Cast { op: CastOp::Trunc, arg: value, ty: Type::I64 })
            }
            _ => self.val(InstructionData::Cast { op: CastOp::Zext, arg: value, ty: Type::I64 }),
        }
    }

    pub(super) fn memset_zero(&mut self, dst: Value, bytes: Value) {
        let byte = self.iconst(Type::I8, 0);
        self.ins(InstructionData::MemSet { dst, byte, len: bytes, volatile: false });
    }

    /// What the bytes behind `dst` (and `src`) hold, from the type trees of both
    /// pointers over the copied length (the first 4096 bytes when it is not a constant).
    fn mem_contents(
        &self,
        inst: Inst,
        dst: Value,
        src: Value,
        len: Value,
    ) -> Result<MemContents, AdError> {
        let constant = self.constant_length(len);
        let len = constant.unwrap_or(crate::typetree::MAX_OFFSET);
        let id = self.request.function;
        let mut facts = Vec::new();
        let mut last_error = None;
        for ptr in [dst, src] {
            match self.types.copy_layout(self.module, id, ptr, 0, len, inst) {
                Ok(layout) => facts.extend(layout),
                Err(e) => last_error = Some(e),
            }
        }
        if facts.is_empty() {
            return Err(last_error.unwrap_or_else(|| self.undeducible(inst)));
        }
        let mut floats = None;
        let (mut pointers, mut integers) = (false, false);
        for (_, base) in &facts {
            match base {
                BaseType::Float(kind) => match floats {
                    None => floats = Some(*kind),
                    Some(k) if k == *kind => {}
                    Some(_) => return self.fields(inst, constant, &facts),
                },
                BaseType::Pointer => pointers = true,
                BaseType::Integer => integers = true,
                BaseType::Anything => return Err(self.undeducible(inst)),
            }
        }
        match (floats, pointers, integers) {
            (Some(kind), false, false) => Ok(MemContents::Floats(kind.ir_type())),
            (Some(_), _, _) => self.fields(inst, constant, &facts),
            (None, true, _) => Ok(MemContents::Pointers),
            (None, false, _) => Ok(MemContents::Integers),
        }
    }

    /// The float and pointer fields of a constant-length copy whose facts all have fixed
    /// offsets; an error when two facts at one offset disagree.
    fn fields(
        &self,
        inst: Inst,
        constant: Option<u64>,
        facts: &[(Option<u64>, BaseType)],
    ) -> Result<MemContents, AdError> {
        let mixed =
            || self.unsupported(inst, "a copy of mixed data whose length or layout is not fixed");
        if constant.is_none() {
            return Err(mixed());
        }
        let mut fields: Vec<(u64, BaseType)> = Vec::new();
        for (offset, base) in facts {
            let offset = offset.ok_or_else(mixed)?;
            match fields.iter().find(|(o, _)| *o == offset) {
                Some((_, b)) if b != base => return Err(self.undeducible(inst)),
                Some(_) => {}
                None => fields.push((offset, *base)),
            }
        }
        fields.retain(|(_, b)| matches!(b, BaseType::Float(_) | BaseType::Pointer));
        fields.sort();
        Ok(MemContents::Fields(fields))
    }

    fn constant_length(&self, len: Value) -> Option<u64> {
        let ValueDef::Result(inst) = self.primal.dfg.value_def(len) else { return None };
        match &self.primal.dfg.insts[inst] {
            InstructionData::Const { value: Constant::Int(n), .. } => u64::try_from(*n).ok(),
            _ => None,
        }
    }

    fn undeducible(&self, inst: Inst) -> AdError {
        self.error(
            inst,
            AdErrorKind::UndeducibleType {
                what: "the bytes this instruction copies or sets".into(),
            },
        )
    }

    /// Reverse-pass code of a memory instruction.
    pub(super) fn reverse_memory(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        match self.primal.dfg.insts[inst].clone() {
            I::Load { ptr, .. } => {
                let result = self.primal.dfg.inst_result(inst).expect("load has a result");
                // An integer load of float bits moves the adjoint of the float it holds.
                let ty = self.adjoint_type(result);
                if !has_float(&ty) || !self.is_active(result) {
                    return Ok(());
                }
                let d = self.take_adjoint(result);
                if let Some(shadow) = self.shadow_in_reverse(ptr) {
                    if self.accumulate_shared_adjoint(inst, &ty, ptr, shadow, d) {
                        return Ok(());
                    }
                    if self.in_place.loads.contains(&inst) {
                        // The paired store's reverse left the shadow as it was instead
                        // of zeroing it (see `in_place`).
                        self.store(d, shadow);
                        return Ok(());
                    }
                    let old = self.load(&ty, shadow);
                    let new = self.accumulate(old, d);
                    self.store(new, shadow);
                }
            }
            I::Store { value, ptr, .. } => {
                let ty = self.adjoint_type(value);
                if !has_float(&ty) {
                    return Ok(());
                }
                self.check_store_into_argument(inst, value, ptr)?;
                if let Some(shadow) = self.shadow_in_reverse(ptr) {
                    let old = self.load(&ty, shadow);
                    self.add_adjoint(value, old);
                    // An in-place update's load overwrites the shadow in its own reverse.
                    if !self.in_place_pair_is_active(inst) {
                        let cleared = self.zero_float_leaves(old);
                        self.store(cleared, shadow);
                    }
                }
            }
            I::MemCopy { dst, src, len, may_overlap, .. } => {
                let (Some(_), contents) =
                    (self.shadows.get(&dst), self.mem_contents(inst, dst, src, len)?)
                else {
                    return Ok(());
                };
                let len = self.primal_in_reverse(len);
                let sd = self.shadow_in_reverse(dst).expect("checked above");
                let ss = self.shadow_in_reverse(src);
                match (contents, ss) {
                    (MemContents::Floats(elem), Some(ss)) if may_overlap => {
                        self.reverse_memmove(&elem, sd, ss, len)
                    }
                    (MemContents::Floats(elem), Some(ss)) => {
                        self.reverse_memcpy(&elem, sd, ss, len)
                    }
                    (MemContents::Floats(_), None) => self.memset_zero(sd, len),
                    (MemContents::Fields(fields), ss) => {
                        for (offset, base) in fields {
                            let BaseType::Float(kind) = base else { continue };
                            let ty = kind.ir_type();
                            let (to, _) = self.field_addresses(sd, sd, offset);
                            let d = self.load(&ty, to);
                            let zero = self.zero(&ty);
                            self.store(zero, to);
                            if let Some(ss) = ss {
                                let (from, _) = self.field_addresses(ss, ss, offset);
                                let old = self.load(&ty, from);
                                let new = self.binary(BinaryOp::Fadd, old, d);
                                self.store(new, from);
                            }
                        }
                    }
                    _ => {}
                }
            }
            I::MemSet { dst, len, .. } => {
                if !self.shadows.contains_key(&dst) {
                    return Ok(());
                }
                match self.mem_contents(inst, dst, dst, len)? {
                    MemContents::Floats(_) => {
                        let len = self.primal_in_reverse(len);
                        let sd = self.shadow_in_reverse(dst).expect("checked above");
                        self.memset_zero(sd, len);
                    }
                    MemContents::Fields(fields) => {
                        let sd = self.shadow_in_reverse(dst).expect("checked above");
                        for (offset, base) in fields {
                            let BaseType::Float(kind) = base else { continue };
                            let ty = kind.ir_type();
                            let (to, _) = self.field_addresses(sd, sd, offset);
                            let zero = self.zero(&ty);
                            self.store(zero, to);
                        }
                    }
                    _ => {}
                }
            }
            I::AtomicRmw {
                op: op @ (AtomicRmwOp::Fadd | AtomicRmwOp::Fsub), ptr, value, ..
            } if self.is_gpu_code() => {
                return self.reverse_atomic_fadd(inst, op, ptr, value);
            }
            I::AtomicRmw { value, .. } if has_float(self.primal.dfg.value_type(value)) => {
                return Err(self.unsupported(inst, "an atomic read-modify-write of floats"));
            }
            I::CmpXchg { expected, .. } if has_float(self.primal.dfg.value_type(expected)) => {
                return Err(self.unsupported(inst, "a compare-exchange of floats"));
            }
            I::Alloca { .. } => self.release_local_shadow(inst),
            I::Call { .. } => self.reverse_heap(inst),
            _ => {}
        }
        Ok(())
    }

    /// Whether `store` is half of an in-place update whose load's reverse will store the
    /// shadow: the load must be active (an inactive load has no reverse).
    fn in_place_pair_is_active(&self, store: Inst) -> bool {
        self.in_place.stores.get(&store).is_some_and(|&load| {
            let InstructionData::Load { ty, .. } = &self.primal.dfg.insts[load] else {
                return false;
            };
            let result = self.primal.dfg.inst_result(load).expect("load has a result");
            has_float(ty) && self.is_active(result)
        })
    }

    /// A defensive check against silently zero gradients: an active value stored through
    /// a pointer into the memory of a `Dup`/`DupNoNeed` argument
    /// ([`crate::activity::argument_behind`]) must have a shadow to accumulate into. If
    /// the activity analysis gave it none, the derivative would drop this store's
    /// contribution, so it is an internal error instead.
    fn check_store_into_argument(
        &self,
        inst: Inst,
        value: Value,
        ptr: Value,
    ) -> Result<(), AdError> {
        if !self.is_active(value) || self.shadows.contains_key(&ptr) {
            return Ok(());
        }
        crate::activity::check_store_into_argument(self.primal, self.request, ptr)
            .map_err(|what| self.error(inst, AdErrorKind::Internal { what }))
    }

    /// `shadow_src[i] += shadow_dst[i]; shadow_dst[i] = 0` for each element of `len` bytes.
    fn reverse_memcpy(&mut self, elem: &Type, sd: Value, ss: Value, len: Value) {
        let count = self.element_count(elem, len);
        let elem = elem.clone();
        self.counted_loop(
            count,
            |s, offset| {
                let pd = s.ptradd(sd, offset);
                let ps = s.ptradd(ss, offset);
                let d = s.load(&elem, pd);
                let zero = s.zero(&elem);
                s.store(zero, pd);
                let old = s.load(&elem, ps);
                let new = s.binary(BinaryOp::Fadd, old, d);
                s.store(new, ps);
            },
            elem.size(),
        );
    }

    /// As `reverse_memcpy`, reading all of `shadow_dst` into a temporary first, so that
    /// overlapping ranges behave like the primal `memmove`.
    fn reverse_memmove(&mut self, elem: &Type, sd: Value, ss: Value, len: Value) {
        let len64 = self.widen_to_i64(len);
        let tmp = self.val(InstructionData::Call {
            callee: self.runtime.malloc,
            args: vec![len64],
            attrs: FuncAttrs::empty(),
        });
        self.ins(InstructionData::MemCopy {
            dst: tmp,
            src: sd,
            len,
            may_overlap: false,
            volatile: false,
        });
        self.memset_zero(sd, len);
        let count = self.element_count(elem, len);
        let elem = elem.clone();
        self.counted_loop(
            count,
            |s, offset| {
                let pt = s.ptradd(tmp, offset);
                let ps = s.ptradd(ss, offset);
                let d = s.load(&elem, pt);
                let old = s.load(&elem, ps);
                let new = s.binary(BinaryOp::Fadd, old, d);
                s.store(new, ps);
            },
            elem.size(),
        );
        self.ins(InstructionData::Call {
            callee: self.runtime.free,
            args: vec![tmp],
            attrs: FuncAttrs::empty(),
        });
    }

    /// `a + offset` and `b + offset`, emitted at `cur`.
    fn field_addresses(&mut self, a: Value, b: Value, offset: u64) -> (Value, Value) {
        let offset = self.iconst(Type::I64, offset as i128);
        (self.ptradd(a, offset), self.ptradd(b, offset))
    }

    fn element_count(&mut self, elem: &Type, len: Value) -> Value {
        let len = self.widen_to_i64(len);
        let size = self.iconst(Type::I64, elem.size() as i128);
        self.binary(BinaryOp::Udiv, len, size)
    }

    /// Emits `for i in 0..count { body(byte offset i * stride) }` at `cur`; afterwards
    /// `cur` is the block after the loop. Values materialized in the body do not
    /// dominate what follows, so the cache memo is restored afterwards.
    pub(super) fn counted_loop(
        &mut self,
        count: Value,
        body: impl FnOnce(&mut Self, Value),
        stride: u64,
    ) {
        let header = self.new_block();
        let index = self.f.dfg.append_block_param(header, Type::I64);
        let body_block = self.new_block();
        let exit = self.new_block();
        let zero = self.iconst(Type::I64, 0);
        self.ins(InstructionData::Jump { dest: adc_ir::BlockCall::new(header, vec![zero]) });
        self.cur = header;
        let more = self.val(InstructionData::Icmp { cond: IntCC::Ult, args: [index, count] });
        self.ins(InstructionData::Brif {
            cond: more,
            then_dest: adc_ir::BlockCall::new(body_block, Vec::new()),
            else_dest: adc_ir::BlockCall::new(exit, Vec::new()),
        });
        self.cur = body_block;
        let memo = self.cache.snapshot();
        let stride = self.iconst(Type::I64, stride as i128);
        let offset = self.binary(BinaryOp::Mul, index, stride);
        body(self, offset);
        let one = self.iconst(Type::I64, 1);
        let next = self.val(InstructionData::Binary {
            op: BinaryOp::Add,
            flags: InstFlags::empty(),
            args: [index, one],
        });
        self.ins(InstructionData::Jump { dest: adc_ir::BlockCall::new(header, vec![next]) });
        self.cache.restore(memo);
        self.cur = exit;
    }
}
