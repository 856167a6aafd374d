//! Shadows of heap blocks and of globals.
//!
//! **Heap.** Every allocation whose memory carries derivatives (`malloc`, `calloc`,
//! `_Znwm`/`_Znam`, `aligned_alloc`, `posix_memalign`, `realloc`) gets a zero-filled
//! shadow block of the same size in the forward pass. Shadow blocks carry a 16-byte header
//! just below the address the derivative uses: `[shadow - 16]` holds the block's size in
//! bytes (which `realloc` needs: C's allocator does not tell it) and `[shadow - 8]` the
//! distance back to the address `malloc` returned (which `free` needs; aligned shadows
//! pad between the two). The shadow of a block is freed in the reverse pass where its
//! allocation is undone, i.e. after every reverse use of it, whether or not the primal
//! freed the block.
//!
//! `realloc` of a block with a shadow allocates a new shadow block (zeroed, then the old
//! shadow's first `min(old size, new size)` bytes copied in, so pointer shadows stored in
//! the block survive) and keeps the old shadow alive: earlier forward values may point
//! into it, and the reverse pass accumulates into it. Undoing the `realloc` copies the
//! adjoints of the kept bytes back into the old shadow and frees the new one. The old
//! shadow's float bytes are zero at that point (the forward pass never writes floats into
//! shadows, and the primal cannot touch the old block after the `realloc`), so a copy is
//! the accumulation. Only blocks whose shadow has the header can be grown: the old pointer
//! must come from an allocation in the same function (through block parameters and stack
//! slots) or be null; `realloc` of a caller's buffer is `Unsupported`.
//!
//! A primal `free` of a block allocated outside loops, freed outside loops on every path
//! to a `ret`, is deferred (`super::reread`): the forward sweep drops it and
//! `reverse_heap` frees the block where the reverse pass undoes its allocation, after
//! every reverse use, so the reverse pass can read the block again instead of taping it.
//! Every other primal `free` stays where the primal has it: the reverse pass never reads
//! memory such a `free` (or a `realloc`) may have released, because loads from memory
//! that may be written or freed after them are cached, not reloaded (`crate::cache`).
//! The shadows are not freed there: they hold the adjoints until the allocation is
//! undone.
//!
//! **Globals.** A global the activity analysis shadows (`crate::activity::shadowed_globals`)
//! has a shadow global `__adc_shadow_<name>` created by the differentiator; its address
//! is the shadow of the global's address. An Enzyme API call zeroes the shadow globals
//! its derivative reaches before calling it (`crate::enzyme_api`): the shadow of a global
//! is the adjoint of its value at entry, which no caller reads, and left over from a
//! previous call it would add into this one. The derivative itself does not, as other
//! derivatives call it too, midway through their reverse pass.

use std::collections::HashSet;

use adc_ir::{
    Allocation, BinaryOp, CastOp, Constant, FuncAttrs, HeapFunction, Inst, InstructionData, IntCC,
    Symbol, Type, Value, ValueDef,
};

use super::Synth;
use crate::activity::SHADOW_GLOBAL_PREFIX;
use crate::callees::TAPE_PUSH;
use crate::error::AdError;
use crate::request::has_pointer;

/// Bytes of the header below every shadow heap block.
const HEADER: i128 = 16;

impl<'a> Synth<'a> {
    /// Forward-pass shadow of a call (already cloned at `cur`): `needs` says whether its
    /// pointer result needs a shadow, which only allocators can give.
    pub(super) fn forward_heap_shadow(&mut self, inst: Inst, needs: bool) -> Result<(), AdError> {
        let InstructionData::Call { callee, args, .. } = self.primal.dfg.insts[inst].clone() else {
            return Ok(());
        };
        let name = self.module.functions[callee].name.clone();
        let heap = match HeapFunction::of(&name) {
            Some(heap) if args.len() >= heap.min_operands() => heap,
            Some(_) => {
                return Err(
                    self.unsupported(inst, format!("a call to @{name} without its operands"))
                )
            }
            None if needs => {
                return Err(self.unsupported(inst, format!("a shadow for the result of @{name}")))
            }
            None => return Ok(()),
        };
        match heap {
            HeapFunction::Allocate(a) => {
                if let Some(out) = a.out {
                    // The block's pointer goes to memory: its shadow goes to that memory's
                    // shadow, when the pointer is one that needs a shadow.
                    if let Some(shadow_slot) = self.shadows.get(&args[out]).copied() {
                        let bytes = self.fwd_i64(args[a.bytes]);
                        let align = a.align.map(|align| self.fwd_i64(args[align]));
                        let shadow = self.shadow_alloc(bytes, align);
                        self.store(shadow, shadow_slot);
                        self.heap_shadows.insert(inst, shadow);
                    }
                    return Ok(());
                }
                if needs {
                    let shadow = self.shadow_block_for(a, &args);
                    self.bind_heap_shadow(inst, shadow);
                }
            }
            HeapFunction::Reallocate if needs => self.forward_realloc(inst, args[0], args[1])?,
            HeapFunction::Reallocate | HeapFunction::Release => {}
        }
        Ok(())
    }

    /// The shadow of a block an indirect call allocates: the call's targets are all C
    /// allocators (see `crate::callees::indirect_allocators`), so its shadow is a zeroed
    /// block of the same size. A target that is none of them at run time (a function of
    /// another object file) gets a null shadow: the derivative traps on it rather than
    /// use a shadow that may be wrong.
    pub(super) fn forward_indirect_allocation(&mut self, inst: Inst) -> Result<(), AdError> {
        let InstructionData::CallIndirect { sig, callee, args, .. } =
            self.primal.dfg.insts[inst].clone()
        else {
            return Ok(());
        };
        let Some((allocation, targets)) = crate::callees::indirect_allocators(self.module, &sig)
        else {
            return Err(self.unsupported(
                inst,
                "a shadow for the pointer an indirect call returns (only calls whose possible \
                 targets are all C allocators, such as a `malloc` kept in a function pointer, \
                 get one)",
            ));
        };
        let shadow = self.shadow_block_for(allocation, &args);
        let target = self.fwd(callee);
        let mut known = self.constant(Type::I1, Constant::Int(0));
        for f in targets {
            let address = self.constant(Type::PTR, Constant::function(f));
            let is_it =
                self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [target, address] });
            known = self.binary(BinaryOp::Or, known, is_it);
        }
        let null = self.constant(Type::PTR, Constant::Int(0));
        let checked = self.val(InstructionData::Select {
            flags: adc_ir::InstFlags::empty(),
            args: [known, shadow, null],
        });
        let result = self.primal.dfg.inst_result(inst).expect("the call returns the block");
        self.set_shadow(result, checked);
        self.heap_shadows.insert(inst, shadow);
        Ok(())
    }

    /// A zeroed shadow block for the block an allocator call with operands `args`
    /// returns: as many bytes (times `calloc`'s count), as aligned.
    fn shadow_block_for(&mut self, allocation: Allocation, args: &[Value]) -> Value {
        let mut bytes = self.fwd_i64(args[allocation.bytes]);
        if let Some(count) = allocation.count {
            let count = self.fwd_i64(args[count]);
            bytes = self.binary(BinaryOp::Mul, count, bytes);
        }
        let align = allocation.align.map(|align| self.fwd_i64(args[align]));
        self.shadow_alloc(bytes, align)
    }

    /// A primal integer operand as an `i64` in the forward pass.
    fn fwd_i64(&mut self, value: Value) -> Value {
        let value = self.fwd(value);
        self.widen_to_i64(value)
    }

    fn bind_heap_shadow(&mut self, inst: Inst, shadow: Value) {
        let result = self.primal.dfg.inst_result(inst).expect("allocators return a pointer");
        self.set_shadow(result, shadow);
        self.heap_shadows.insert(inst, shadow);
    }

    /// `new = realloc(old, n)`: a new zeroed shadow holding the old shadow's kept bytes.
    fn forward_realloc(&mut self, inst: Inst, old: Value, bytes: Value) -> Result<(), AdError> {
        // adc's tape helper grows only blocks it allocated itself (from null): in a
        // derivative of a derivative, the old shadow is always one of ours, with the
        // header that records its size.
        let own_tape = self.primal.name == TAPE_PUSH;
        if !own_tape && !self.allocated_here(old, &mut HashSet::new()) {
            return Err(self.unsupported(
                inst,
                "a realloc of memory that carries derivatives and was not allocated in the \
                 differentiated function (the size of its shadow is unknown)",
            ));
        }
        let old_shadow = self
            .forward_shadow_of_operand(old)
            .ok_or_else(|| self.unsupported(inst, "a realloc of a pointer without a shadow"))?;
        let bytes = self.fwd(bytes);
        let bytes = self.widen_to_i64(bytes);
        let shadow = self.shadow_alloc(bytes, None);
        let kept = self.kept_bytes(old_shadow, bytes);
        let src = self.unless_null(old_shadow, shadow);
        self.ins(InstructionData::MemCopy {
            dst: shadow,
            src,
            len: kept,
            may_overlap: false,
            volatile: false,
        });
        self.bind_heap_shadow(inst, shadow);
        Ok(())
    }

    /// Reverse of an allocation: a block whose primal `free` was deferred is freed;
    /// adjoints of a `realloc`'s kept bytes go back to the old shadow; then the
    /// allocation's shadow is freed.
    pub(super) fn reverse_heap(&mut self, inst: Inst) {
        if let Some(&free) = self.plan.rereads.freed_at_undo.get(&inst) {
            // The primal's own release (`free`, or the `operator delete` that matches a
            // `new`) of the allocation's block, its other operands (a size, an alignment)
            // as the forward sweep had them.
            if let InstructionData::Call { callee, args, .. } = self.primal.dfg.insts[free].clone()
            {
                let block = self.primal.dfg.inst_result(inst).expect("allocators return a pointer");
                let mut args: Vec<Value> =
                    args.iter().skip(1).map(|a| self.primal_in_reverse(*a)).collect();
                args.insert(0, self.primal_in_reverse(block));
                self.ins(InstructionData::Call { callee, args, attrs: FuncAttrs::empty() });
            }
        }
        let Some(&shadow) = self.heap_shadows.get(&inst) else { return };
        let shadow = self.avail(shadow);
        if let InstructionData::Call { callee, args, .. } = &self.primal.dfg.insts[inst] {
            if HeapFunction::of(&self.module.functions[*callee].name)
                == Some(HeapFunction::Reallocate)
            {
                let (old, bytes) = (args[0], args[1]);
                if let Some(old_shadow) = self.shadow_in_reverse(old) {
                    let bytes = self.primal_in_reverse(bytes);
                    let bytes = self.widen_to_i64(bytes);
                    let kept = self.kept_bytes(old_shadow, bytes);
                    let dst = self.unless_null(old_shadow, shadow);
                    self.ins(InstructionData::MemCopy {
                        dst,
                        src: shadow,
                        len: kept,
                        may_overlap: false,
                        volatile: false,
                    });
                }
            }
        }
        self.shadow_free(shadow);
    }

    /// A zero-filled shadow block of `bytes` bytes (aligned to `align` when given), with
    /// the header described in the module documentation.
    fn shadow_alloc(&mut self, bytes: Value, align: Option<Value>) -> Value {
        let header = self.iconst(Type::I64, HEADER);
        let mut total = self.binary(BinaryOp::Add, bytes, header);
        if let Some(align) = align {
            total = self.binary(BinaryOp::Add, total, align);
        }
        let base = self.val(InstructionData::Call {
            callee: self.runtime.malloc,
            args: vec![total],
            attrs: FuncAttrs::empty(),
        });
        // Distance from `base` to the shadow: the header, plus padding up to `align`.
        let distance = match align {
            None => header,
            Some(align) => {
                let address = self.val(InstructionData::Cast {
                    op: CastOp::Ptrtoint,
                    arg: base,
                    ty: Type::I64,
                });
                let past_header = self.binary(BinaryOp::Add, address, header);
                let rem = self.binary(BinaryOp::Urem, past_header, align);
                let short = self.binary(BinaryOp::Sub, align, rem);
                let pad = self.binary(BinaryOp::Urem, short, align);
                self.binary(BinaryOp::Add, header, pad)
            }
        };
        let shadow = self.ptradd(base, distance);
        let size_at = self.offset_by(shadow, -HEADER);
        self.store(bytes, size_at);
        let distance_at = self.offset_by(shadow, -8);
        self.store(distance, distance_at);
        self.memset_zero(shadow, bytes);
        shadow
    }

    /// Frees a shadow block made by `shadow_alloc`.
    fn shadow_free(&mut self, shadow: Value) {
        let distance_at = self.offset_by(shadow, -8);
        let distance = self.load(&Type::I64, distance_at);
        let zero = self.iconst(Type::I64, 0);
        let back = self.binary(BinaryOp::Sub, zero, distance);
        let base = self.ptradd(shadow, back);
        self.ins(InstructionData::Call {
            callee: self.runtime.free,
            args: vec![base],
            attrs: FuncAttrs::empty(),
        });
    }

    /// `min(size of old_shadow, bytes)`, 0 when `old_shadow` is null.
    fn kept_bytes(&mut self, old_shadow: Value, bytes: Value) -> Value {
        let null = self.constant(Type::PTR, Constant::Zero);
        let is_null = self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [old_shadow, null] });
        // A null old block has no header: read a zero from the stack instead.
        let zero_slot = self.zero_i64_slot();
        let size_at = self.offset_by(old_shadow, -HEADER);
        let size_at = self.select(is_null, zero_slot, size_at);
        let old_size = self.load(&Type::I64, size_at);
        let smaller = self.val(InstructionData::Icmp { cond: IntCC::Ult, args: [old_size, bytes] });
        self.select(smaller, old_size, bytes)
    }

    /// `pointer`, or `fallback` when `pointer` is null (for copies of zero bytes).
    fn unless_null(&mut self, pointer: Value, fallback: Value) -> Value {
        let null = self.constant(Type::PTR, Constant::Zero);
        let is_null = self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [pointer, null] });
        self.select(is_null, fallback, pointer)
    }

    fn zero_i64_slot(&mut self) -> Value {
        let slot = self
            .ins_setup(InstructionData::Alloca { ty: Type::I64, count: None, align: 8 })
            .expect("alloca has a result");
        let zero = self
            .ins_setup(InstructionData::Const { ty: Type::I64, value: Constant::Int(0) })
            .expect("const has a result");
        self.ins_setup(InstructionData::Store {
            value: zero,
            ptr: slot,
            align: 8,
            volatile: false,
        });
        slot
    }

    fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        self.val(InstructionData::Select { flags: adc_ir::InstFlags::empty(), args: [cond, a, b] })
    }

    fn offset_by(&mut self, ptr: Value, bytes: i128) -> Value {
        let offset = self.iconst(Type::I64, bytes);
        self.ptradd(ptr, offset)
    }

    /// Whether the primal pointer `value` is null or the start of a block allocated in
    /// this function (an allocator's or `realloc`'s result), following block parameters
    /// and stack slots that only receive such pointers. Values already being visited
    /// count as such (a loop-carried pointer is one if everything entering the loop is).
    fn allocated_here(&self, value: Value, visiting: &mut HashSet<Value>) -> bool {
        use InstructionData as I;
        if !visiting.insert(value) {
            return true;
        }
        let dfg = &self.primal.dfg;
        let inst = match dfg.value_def(value) {
            ValueDef::Param(block, index) => {
                if Some(block) == self.primal.layout.entry_block() {
                    return false;
                }
                // Every branch into the block passes such a pointer (or the parameter
                // itself, around a loop).
                return self.primal.layout.insts().all(|(_, term)| {
                    dfg.insts[term].branch_targets().iter().filter(|t| t.block == block).all(
                        |target| {
                            target
                                .args
                                .get(index as usize)
                                .is_some_and(|arg| self.allocated_here(*arg, visiting))
                        },
                    )
                });
            }
            ValueDef::Result(inst) => inst,
        };
        match &dfg.insts[inst] {
            I::Const { value: Constant::Int(0) | Constant::Zero, .. } => true,
            // Allocators returning their block (`posix_memalign` stores it instead).
            I::Call { callee, .. } => HeapFunction::of(&self.module.functions[*callee].name)
                .is_some_and(|heap| heap.returns_block()),
            I::Load { ptr: slot, .. } => self.slot_holds_allocations(*slot, visiting),
            _ => false,
        }
    }

    /// Whether every use of the address `field` loads or stores through it.
    fn only_accessed_through(&self, field: Value) -> bool {
        use InstructionData as I;
        self.primal.layout.insts().all(|(_, inst)| match &self.primal.dfg.insts[inst] {
            I::Load { .. } => true,
            I::Store { value, .. } => *value != field,
            data => !data.args().contains(&field),
        })
    }

    /// Whether `slot` is an alloca whose uses are loads and stores into it of pointers
    /// that are `allocated_here`, or `posix_memalign` filling it.
    fn slot_holds_allocations(&self, slot: Value, visiting: &mut HashSet<Value>) -> bool {
        use InstructionData as I;
        let ValueDef::Result(def) = self.primal.dfg.value_def(slot) else { return false };
        if !matches!(self.primal.dfg.insts[def], I::Alloca { .. }) {
            return false;
        }
        self.primal.layout.insts().all(|(_, inst)| {
            let data = &self.primal.dfg.insts[inst];
            if !data.args().contains(&slot) {
                return true;
            }
            match data {
                I::Load { ptr, .. } => *ptr == slot,
                I::Store { value, ptr, .. } if *ptr == slot && *value != slot => {
                    self.allocated_here(*value, visiting)
                }
                // Other fields of a local struct whose first field holds the block (a
                // tape header `{data, top, capacity}`): accesses past the pointer.
                I::PtrAdd { ptr, offset, .. } if *ptr == slot => {
                    let past_pointer = self.primal.dfg.const_int(*offset).is_some_and(|c| c >= 8);
                    let field = self.primal.dfg.inst_result(inst);
                    past_pointer && field.is_some_and(|f| self.only_accessed_through(f))
                }
                I::Call { callee, args, .. } => {
                    let out = match HeapFunction::of(&self.module.functions[*callee].name) {
                        Some(HeapFunction::Allocate(a)) => a.out,
                        _ => None,
                    };
                    out.is_some() && args.iter().position(|a| *a == slot) == out
                }
                _ => false,
            }
        })
    }

    /// Forward-pass shadow of a constant address: for a global, the address of its shadow
    /// global; a function's address is its own shadow (calls through it dispatch on the
    /// primal pointer, see `indirect`).
    pub(super) fn forward_global_shadow(&mut self, inst: Inst) -> Result<(), AdError> {
        let InstructionData::Const { value: Constant::Address { symbol, offset }, ty } =
            self.primal.dfg.insts[inst].clone()
        else {
            return Err(self.unsupported(inst, "a shadow of a constant that is not an address"));
        };
        let result = self.primal.dfg.inst_result(inst).expect("const has a result");
        let global = match symbol {
            Symbol::Global(global) => global,
            Symbol::Func(_) => {
                let shadow = self.constant(ty, Constant::Address { symbol, offset });
                self.set_shadow(result, shadow);
                return Ok(());
            }
        };
        let primal_global = &self.module.globals[global];
        let name = &primal_global.name;
        let Some(shadow_global) =
            self.module.global_by_name(&format!("{SHADOW_GLOBAL_PREFIX}{name}"))
        else {
            // A pointer kept in a global points to memory set up outside the derivative,
            // whose shadow nothing gives adc.
            let hint = if has_pointer(&primal_global.ty) {
                "; a pointer kept in a global has no shadow adc can know: pass the memory \
                 it points to as an argument (`enzyme_dup`)"
            } else {
                ""
            };
            return Err(self.unsupported(
                inst,
                format!(
                    "the global @{name} as memory that carries derivatives (only mutable \
                     globals whose type holds floats, and char arrays, get a shadow \
                     global){hint}"
                ),
            ));
        };
        let shadow =
            self.constant(ty, Constant::Address { symbol: Symbol::Global(shadow_global), offset });
        self.set_shadow(result, shadow);
        Ok(())
    }
}
