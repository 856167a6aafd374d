//! Split-mode scaffolding: the entry, frame, phase dispatch and returns of a callee's
//! split function (the call protocol itself is described in `calls`).
//!
//! Block structure of a split function:
//!
//! ```text
//! adc_entry(params, shadows, [d_ret], %arena, %tape, %phase):
//!     brif %phase, adc_setup(%tape), adc_pick_frame
//! adc_pick_frame:                 ; forward phase: caller memory when %tape is not null
//!     brif (%tape == null), adc_alloc, adc_caller_frame
//! adc_alloc:                      ; a fresh frame: from the caller's arena if it gave one
//!     brif (%arena == null), adc_heap_frame, adc_arena_frame
//! adc_heap_frame:                 ; owned (freed by the reverse phase); a root
//!     %m = call @malloc(FRAME_SIZE); store i64 1, %m; [empty own arena]; jump adc_setup(%m)
//! adc_arena_frame:                ; released with the arena by the call tree's root
//!     %m = call @__adc_arena_alloc(%arena, FRAME_SIZE - own arena header)
//!     store i64 2, %m; jump adc_setup(%m)
//! adc_caller_frame:               ; the caller's memory (`enzyme_allocated`), not owned; a root
//!     store i64 0, %tape; [empty own arena]; jump adc_setup(%tape)
//! adc_setup(%frame):              ; both phases: adjoint slots, frame addresses
//!     brif %phase, adc_restore_slots, adc_fwd_init
//! adc_fwd_init:                   ; forward phase: slots start at zero, tape headers empty
//!     jump <forward entry>
//! ... forward pass ...
//! adc_forward_exit(result, [result shadow]):
//!     [copy each slot into the frame]
//!     ret {result, [shadow], %frame, zeros}
//! adc_restore_slots:              ; reverse phase: each slot back from the frame
//!     jump adc_reverse_start
//! adc_reverse_start: ... reverse pass ... free tapes, release own arena, free %frame
//!     ret {zeros, %frame, adjoints}
//! ```
//!
//! The frame's size is only known when synthesis is done (slots and tapes are created on
//! demand), so the `const` feeding `malloc` is patched by `finish_split`. It is fixed per
//! split function (loop tapes live in buffers whose headers sit in the frame), which
//! is what lets `__enzyme_augmentsize` report it and `enzyme_allocated` memory hold it.
//!
//! The first 8 bytes of every frame say where it (and its presized tape buffers) came
//! from: 1 for a frame the forward phase `malloc`ed (the reverse phase frees it), 2 for
//! one from an arena (`reverse::arena`: so are its tape buffers, and nothing is freed one
//! by one), 0 for caller memory; `__enzyme_reverse(..., enzyme_nofree)` clears it before
//! the reverse phase runs, so the tape outlives it (such a frame never comes from an
//! arena: user code passes none).
//!
//! Local memory that carries derivatives (an `alloca` with a shadow) outlives the forward
//! phase in a split function: the forward phase's stack frame is gone when the reverse
//! phase accumulates into the shadow. Its shadow is therefore a heap block (zero-filled
//! like every shadow) allocated where the primal allocates the local, and freed where the
//! reverse phase undoes that allocation (both through the frame's arena when it came from
//! one: `split_allocation`); its address reaches the reverse phase through the frame like
//! any other forward value.

use adc_ir::{
    Block, BlockCall, Constant, FuncAttrs, Inst, InstFlags, InstructionData, IntCC, Type, Value,
};

use super::{SplitLayout, SplitMode, Synth};

/// Bytes at the start of every frame that hold its ownership flag (see the module header).
pub(crate) const FRAME_HEADER_BYTES: u64 = 8;
/// Ownership flag of a frame the forward phase allocated with `malloc`: the reverse phase
/// frees it.
const FRAME_OWNED: i128 = 1;
/// Ownership flag of a frame (and tape buffers) from the caller's arena
/// (`reverse::arena`): released with the arena, never freed one by one.
const FRAME_IN_ARENA: i128 = 2;

impl<'a> Synth<'a> {
    /// The (not yet zeroed) shadow of a primal `alloca` of `bytes` bytes: a stack slot of
    /// the derivative, or a heap block in a split function (see the module header).
    pub(super) fn local_shadow(
        &mut self,
        ty: Type,
        count: Option<Value>,
        align: u32,
        bytes: Value,
    ) -> Value {
        if self.split.is_none() {
            return self.val(InstructionData::Alloca { ty, count, align });
        }
        self.val(self.split_allocation(bytes))
    }

    /// Split mode: a call allocating `bytes` that live until the reverse phase, from the
    /// arena the frame came from (`__adc_arena_alloc` is `malloc` for a null arena).
    pub(crate) fn split_allocation(&self, bytes: Value) -> InstructionData {
        let arena = self.split.as_ref().map(|s| s.arena);
        match (self.runtime.arena, arena) {
            (Some(frame_arena), Some(arena)) => InstructionData::Call {
                callee: frame_arena.alloc,
                args: vec![arena, bytes],
                attrs: FuncAttrs::empty(),
            },
            _ => InstructionData::Call {
                callee: self.runtime.malloc,
                args: vec![bytes],
                attrs: FuncAttrs::empty(),
            },
        }
    }

    /// Split mode: frees `data` from [`Self::split_allocation`] before `before` (or at
    /// `self.cur`), unless the frame came from an arena (flag `FRAME_IN_ARENA`): then so
    /// did `data`, and the arena's root releases it.
    pub(crate) fn free_split_allocation(&mut self, data: Value, before: Option<Inst>) {
        match self.runtime.arena {
            Some(_) => self.free_by_frame_flag(data, IntCC::Ne, FRAME_IN_ARENA, before),
            None => self.free_before(data, before),
        }
    }

    /// Split mode: `free(data)` when the frame's ownership flag `cond` `flag` holds (else
    /// `free(null)`, which does nothing), before `before` or at `self.cur`.
    fn free_by_frame_flag(&mut self, data: Value, cond: IntCC, flag: i128, before: Option<Inst>) {
        let to_free = self.select_by_frame_flag(data, cond, flag, before);
        self.free_before(to_free, before);
    }

    /// Split mode: `data` in the frame of a call tree's root, null in a frame from an
    /// arena (before `before`).
    pub(crate) fn root_only(&mut self, data: Value, before: Inst) -> Value {
        self.select_by_frame_flag(data, IntCC::Ne, FRAME_IN_ARENA, Some(before))
    }

    /// Split mode: `data` when the frame's ownership flag `cond` `flag` holds, else null,
    /// before `before` or at `self.cur`.
    fn select_by_frame_flag(
        &mut self,
        data: Value,
        cond: IntCC,
        flag: i128,
        before: Option<Inst>,
    ) -> Value {
        let frame = self.split.as_ref().expect("split functions only").frame;
        let mut emit = |data: InstructionData| match before {
            Some(at) => self.ins_before(at, data).expect("has a result"),
            None => self.val(data),
        };
        let load = InstructionData::Load { ty: Type::I64, ptr: frame, align: 8, volatile: false };
        let owned = emit(load);
        let flag =
            emit(InstructionData::Const { ty: Type::I64, value: Constant::int(&Type::I64, flag) });
        let holds = emit(InstructionData::Icmp { cond, args: [owned, flag] });
        let null = emit(InstructionData::Const { ty: Type::PTR, value: Constant::Int(0) });
        emit(InstructionData::Select { flags: InstFlags::empty(), args: [holds, data, null] })
    }

    /// `free(data)` before `before`, or at `self.cur`.
    pub(crate) fn free_before(&mut self, data: Value, before: Option<Inst>) {
        self.release_with(self.runtime.free, data, before);
    }

    /// `release(data)` (`free` or the tape allocator's release) before `before`, or at
    /// `self.cur`.
    pub(crate) fn release_with(
        &mut self,
        release: adc_ir::FuncId,
        data: Value,
        before: Option<Inst>,
    ) {
        let call =
            InstructionData::Call { callee: release, args: vec![data], attrs: FuncAttrs::empty() };
        match before {
            Some(at) => self.ins_before(at, call),
            None => self.ins(call),
        };
    }

    /// The reverse of a primal `alloca`: in a split function its heap shadow is freed.
    pub(super) fn release_local_shadow(&mut self, inst: Inst) {
        if self.split.is_none() {
            return;
        }
        let Some(local) = self.primal.dfg.inst_result(inst) else { return };
        if let Some(shadow) = self.shadow_in_reverse(local) {
            self.free_split_allocation(shadow, None);
        }
    }

    /// Adds the split parameters and the frame-allocating blocks (see the module header).
    pub(super) fn begin_split(&mut self, params_block: Block, layout: SplitLayout) {
        let d_ret = if layout.takes_d_ret {
            let ty = layout.ret.clone().expect("an active result has a type");
            let d = self.f.dfg.append_block_param(params_block, ty);
            self.f.dfg.set_value_name(d, "d_result");
            Some(d)
        } else {
            None
        };
        let arena = self.f.dfg.append_block_param(params_block, Type::PTR);
        self.f.dfg.set_value_name(arena, "arena");
        let tape = self.f.dfg.append_block_param(params_block, Type::PTR);
        self.f.dfg.set_value_name(tape, "frame_in");
        let phase = self.f.dfg.append_block_param(params_block, Type::I1);
        self.f.dfg.set_value_name(phase, "reverse_phase");
        let pick = self.f.dfg.make_block();
        self.f.dfg.set_block_name(pick, "adc_pick_frame");
        self.f.layout.append_block(pick);
        let alloc = self.f.dfg.make_block();
        self.f.dfg.set_block_name(alloc, "adc_alloc");
        self.f.layout.append_block(alloc);
        let caller_frame = self.f.dfg.make_block();
        self.f.dfg.set_block_name(caller_frame, "adc_caller_frame");
        self.f.layout.append_block(caller_frame);
        self.f.layout.append_block(self.setup);
        let frame = self.f.dfg.append_block_param(self.setup, Type::PTR);
        self.f.dfg.set_value_name(frame, "frame");
        let fwd_init = self.f.dfg.make_block();
        self.f.dfg.set_block_name(fwd_init, "adc_fwd_init");
        self.f.layout.append_block(fwd_init);
        let reverse_start = self.f.dfg.make_block();
        self.f.dfg.set_block_name(reverse_start, "adc_reverse_start");

        self.cur = params_block;
        self.ins(InstructionData::Brif {
            cond: phase,
            then_dest: BlockCall::new(self.setup, vec![tape]),
            else_dest: BlockCall::new(pick, Vec::new()),
        });
        self.cur = pick;
        let null = self.constant(Type::PTR, Constant::Int(0));
        let is_null = self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [tape, null] });
        self.ins(InstructionData::Brif {
            cond: is_null,
            then_dest: BlockCall::new(alloc, Vec::new()),
            else_dest: BlockCall::new(caller_frame, Vec::new()),
        });
        self.cur = caller_frame;
        let not_owned = self.iconst(Type::I64, 0);
        self.store(not_owned, tape);
        self.ins(InstructionData::Jump { dest: BlockCall::new(self.setup, vec![tape]) });
        self.cur = alloc;
        let size = self.iconst(Type::I64, 1);
        let frame_size = match self.f.dfg.value_def(size) {
            adc_ir::ValueDef::Result(inst) => inst,
            adc_ir::ValueDef::Param(..) => unreachable!("a const is an instruction result"),
        };
        let mut arena_frame_size = None;
        if let Some(frame_arena) = self.runtime.arena {
            let from_arena = self.f.dfg.make_block();
            self.f.dfg.set_block_name(from_arena, "adc_arena_frame");
            self.f.layout.insert_block_before(from_arena, caller_frame);
            let from_heap = self.f.dfg.make_block();
            self.f.dfg.set_block_name(from_heap, "adc_heap_frame");
            self.f.layout.insert_block_before(from_heap, from_arena);
            let no_arena = self.val(InstructionData::Icmp { cond: IntCC::Eq, args: [arena, null] });
            self.ins(InstructionData::Brif {
                cond: no_arena,
                then_dest: BlockCall::new(from_heap, Vec::new()),
                else_dest: BlockCall::new(from_arena, Vec::new()),
            });
            // Released with the arena by the root of the call tree: not owned.
            self.cur = from_arena;
            let arena_size = self.iconst(Type::I64, 1);
            arena_frame_size = match self.f.dfg.value_def(arena_size) {
                adc_ir::ValueDef::Result(inst) => Some(inst),
                adc_ir::ValueDef::Param(..) => unreachable!("a const is an instruction result"),
            };
            let fresh = self.val(InstructionData::Call {
                callee: frame_arena.alloc,
                args: vec![arena, arena_size],
                attrs: FuncAttrs::empty(),
            });
            let in_arena = self.iconst(Type::I64, FRAME_IN_ARENA);
            self.store(in_arena, fresh);
            self.ins(InstructionData::Jump { dest: BlockCall::new(self.setup, vec![fresh]) });
            self.cur = from_heap;
        }
        let fresh = self.val(InstructionData::Call {
            callee: self.runtime.malloc,
            args: vec![size],
            attrs: FuncAttrs::empty(),
        });
        let owned = self.iconst(Type::I64, FRAME_OWNED);
        self.store(owned, fresh);
        self.ins(InstructionData::Jump { dest: BlockCall::new(self.setup, vec![fresh]) });
        let root_frames = vec![(caller_frame, tape), (self.cur, fresh)];
        self.cur = self.setup;

        if let Some(ty) = layout.ret.clone() {
            self.f.dfg.append_block_param(self.forward_exit, ty);
        }
        if layout.shadow_ret {
            self.f.dfg.append_block_param(self.forward_exit, Type::PTR);
        }
        self.split = Some(SplitMode {
            phase,
            d_ret,
            frame,
            arena,
            fwd_init,
            reverse_start,
            frame_size,
            arena_frame_size,
            root_frames,
            root_slot_offsets: Vec::new(),
            root_slot_bytes: 0,
            frame_bytes: FRAME_HEADER_BYTES,
            mirrored_slots: Vec::new(),
            layout,
        });
    }

    /// Split mode: the address of `size` fresh bytes in the frame (a setup-block value).
    pub(crate) fn frame_slot(&mut self, size: u64, align: u64) -> Option<Value> {
        let split = self.split.as_mut()?;
        let align = align.max(1);
        let offset = split.frame_bytes.div_ceil(align) * align;
        split.frame_bytes = offset + size.max(1);
        let frame = split.frame;
        let offset = self
            .ins_setup(InstructionData::Const {
                ty: Type::I64,
                value: Constant::int(&Type::I64, offset as i128),
            })
            .expect("const has a result");
        self.ins_setup(InstructionData::PtrAdd { flags: InstFlags::empty(), ptr: frame, offset })
    }

    /// Split mode: `bytes` after every other slot of the frame, which only the frames of
    /// call-tree roots have (`malloc`ed, or the caller's memory): frames from an arena
    /// stop before it. Its address in the setup block, and in each root's allocation
    /// block with the instruction to emit before there. One such slot per frame.
    pub(crate) fn root_frame_slot(&mut self, bytes: u64) -> (Value, Vec<(Inst, Value)>) {
        let split = self.split.as_mut().expect("split functions only");
        debug_assert!(split.root_slot_offsets.is_empty(), "one root-only slot per frame");
        split.root_slot_bytes = bytes;
        let (frame, root_frames) = (split.frame, split.root_frames.clone());
        let in_setup = self.frame_tail_address(None, frame);
        let mut at_roots = Vec::new();
        for (block, root_frame) in root_frames {
            let before = self.f.layout.last_inst(block).expect("a terminator");
            at_roots.push((before, self.frame_tail_address(Some(before), root_frame)));
        }
        (in_setup, at_roots)
    }

    /// The address of the root-only slot in `frame`, at an offset `finish_split` fixes;
    /// emitted before `before`, else in the setup block.
    fn frame_tail_address(&mut self, before: Option<Inst>, frame: Value) -> Value {
        let offset = InstructionData::Const { ty: Type::I64, value: Constant::Int(0) };
        let offset = match before {
            Some(at) => self.ins_before(at, offset),
            None => self.ins_setup(offset),
        }
        .expect("const has a result");
        let adc_ir::ValueDef::Result(offset_inst) = self.f.dfg.value_def(offset) else {
            unreachable!("a const is an instruction result")
        };
        self.split.as_mut().expect("split functions only").root_slot_offsets.push(offset_inst);
        let address = InstructionData::PtrAdd { flags: InstFlags::empty(), ptr: frame, offset };
        match before {
            Some(at) => self.ins_before(at, address),
            None => self.ins_setup(address),
        }
        .expect("ptradd has a result")
    }

    /// Code that initializes tape headers: forward phase only in split mode (the reverse
    /// phase finds them in the frame), the setup block otherwise.
    pub(crate) fn ins_tape_init(&mut self, data: InstructionData) -> Option<Value> {
        let Some(fwd_init) = self.split.as_ref().map(|s| s.fwd_init) else {
            return self.ins_setup(data);
        };
        match self.f.layout.last_inst(fwd_init) {
            Some(term) if self.f.dfg.insts[term].is_terminator() => self.ins_before(term, data),
            _ => {
                let saved = std::mem::replace(&mut self.cur, fwd_init);
                let result = self.ins(data);
                self.cur = saved;
                result
            }
        }
    }

    /// Split mode, at the forward exit: returns the primal result, its shadow and the
    /// frame to the caller.
    pub(super) fn emit_forward_return(&mut self) {
        let Some(split) = self.split.as_ref() else { return };
        let layout = split.layout.clone();
        let mut params = self.f.dfg.block_params(self.forward_exit).to_vec().into_iter();
        let mut fields = Vec::new();
        if layout.ret.is_some() {
            fields.push((layout.ret_index(), params.next().expect("result parameter")));
        }
        if layout.shadow_ret {
            fields.push((layout.shadow_index(), params.next().expect("shadow parameter")));
        }
        let result = self.split_result(fields);
        self.ins(InstructionData::Return { value: Some(result) });
    }

    /// Split mode, at the end of the reverse phase: the frame and the argument adjoints.
    pub(super) fn split_return_value(&mut self, adjoints: Vec<Value>) -> Option<Value> {
        let layout = self.split.as_ref()?.layout.clone();
        let fields =
            adjoints.into_iter().enumerate().map(|(k, d)| (layout.adjoint_index(k), d)).collect();
        Some(self.split_result(fields))
    }

    /// The split function's result struct: the frame and `fields` (by index) in place, in
    /// field order; the fields the phase does not produce are zero.
    fn split_result(&mut self, mut fields: Vec<(u32, Value)>) -> Value {
        let split = self.split.as_ref().expect("a split function");
        let ty = split.layout.ret_type();
        fields.push((split.layout.frame_index(), split.frame));
        fields.sort_by_key(|(index, _)| *index);
        let mut acc = self.zero(&ty);
        for (index, value) in fields {
            acc = self.val(InstructionData::InsertValue {
                aggregate: acc,
                value,
                indices: vec![index],
            });
        }
        acc
    }

    /// Split mode: connects the local copy of each slot with its frame slot
    /// (`Synth::new_slot`). The forward phase starts its locals at zero (so that copying
    /// one its path never wrote reads no uninitialized memory), and copies them into the
    /// frame before it returns; the reverse phase copies them back in a block of its own
    /// between the phase dispatch and its first block. Copies go scalar by scalar, which
    /// leaves the locals promotable.
    fn mirror_slots(&mut self) {
        let Some(split) = self.split.as_mut() else { return };
        let slots = std::mem::take(&mut split.mirrored_slots);
        let (fwd_init, reverse_start) = (split.fwd_init, split.reverse_start);
        if slots.is_empty() {
            return;
        }
        let parts: Vec<SlotPart> = slots
            .iter()
            .flat_map(|(local, in_frame, ty)| {
                scalar_parts(ty, 0).into_iter().map(|(offset, part)| {
                    // What the slot's alignment guarantees at this offset (packed fields).
                    let at_offset =
                        if offset == 0 { u64::MAX } else { 1 << offset.trailing_zeros() };
                    let align = part.align().min(ty.align()).min(at_offset).max(1) as u32;
                    SlotPart { local: *local, in_frame: *in_frame, offset, ty: part, align }
                })
            })
            .collect();
        let first = self.f.layout.first_inst(fwd_init).expect("fwd_init ends in a jump");
        self.emit_before(first, |s| {
            for part in &parts {
                let zero = s.constant(part.ty.clone(), Constant::Zero);
                let at = s.part_address(part.local, part.offset);
                s.ins(InstructionData::Store {
                    value: zero,
                    ptr: at,
                    align: part.align,
                    volatile: false,
                });
            }
        });
        self.at_end_of(self.forward_exit, |s| {
            for part in &parts {
                s.copy_part(part, part.local, part.in_frame);
            }
        });
        let restore = self.f.dfg.make_block();
        self.f.dfg.set_block_name(restore, "adc_restore_slots");
        self.f.layout.insert_block_before(restore, reverse_start);
        let saved = std::mem::replace(&mut self.cur, restore);
        for part in &parts {
            self.copy_part(part, part.in_frame, part.local);
        }
        self.ins(InstructionData::Jump { dest: BlockCall::new(reverse_start, Vec::new()) });
        self.cur = saved;
        // Every way into the reverse phase (the phase dispatch) goes through the copies.
        let terminators: Vec<Inst> = self
            .f
            .layout
            .blocks()
            .iter()
            .copied()
            .filter(|&block| block != restore)
            .filter_map(|block| self.f.layout.last_inst(block))
            .collect();
        for term in terminators {
            for target in self.f.dfg.insts[term].branch_targets_mut() {
                if target.block == reverse_start {
                    target.block = restore;
                }
            }
        }
    }

    /// `base + offset` at `self.cur` (`base` itself at offset 0).
    fn part_address(&mut self, base: Value, offset: u64) -> Value {
        if offset == 0 {
            return base;
        }
        let offset = self.iconst(Type::I64, offset as i128);
        self.ptradd(base, offset)
    }

    /// At `self.cur`: one scalar part of a slot from the copy at `from` to the one at `to`.
    fn copy_part(&mut self, part: &SlotPart, from: Value, to: Value) {
        let (from, to) = (self.part_address(from, part.offset), self.part_address(to, part.offset));
        let load = InstructionData::Load {
            ty: part.ty.clone(),
            ptr: from,
            align: part.align,
            volatile: false,
        };
        let value = self.val(load);
        self.ins(InstructionData::Store { value, ptr: to, align: part.align, volatile: false });
    }

    /// Split mode: moves the fixed-size allocas of the blocks that run once per
    /// activation — adjoint slots in the setup block, the primal entry block's locals in
    /// its forward clone — into the function's entry block. The backend gives an entry
    /// block's allocas stack slots; anywhere else an alloca is a heap allocation that
    /// nothing frees. (The primal entry block is in no loop: a branch back to it is
    /// refused, so each of these blocks runs at most once per activation.)
    fn hoist_static_allocas(&mut self) {
        let Some(split) = self.split.as_ref() else { return };
        let fwd_init = split.fwd_init;
        let Some(entry) = self.f.layout.entry_block() else { return };
        let Some(entry_term) = self.f.layout.last_inst(entry) else { return };
        let mut blocks = vec![self.setup, fwd_init];
        if let Some(primal_entry) = self.primal.entry_block() {
            blocks.extend(self.bmap.get(&primal_entry).copied());
        }
        for block in blocks {
            let insts = self.f.layout.block_insts(block).to_vec();
            for inst in insts {
                if matches!(self.f.dfg.insts[inst], InstructionData::Alloca { count: None, .. }) {
                    self.f.layout.remove_inst(inst);
                    self.f.layout.insert_inst_before(inst, entry_term);
                }
            }
        }
    }

    /// Split mode: frees the frame (when it owns it) before the reverse phase returns,
    /// fixes the frame size in the forward phase's allocation and in the statistics, and
    /// hoists the static allocas.
    pub(super) fn finish_split(&mut self) {
        self.mirror_slots();
        self.hoist_static_allocas();
        let Some(split) = self.split.as_ref() else { return };
        let (frame, frame_size, slots_end) = (split.frame, split.frame_size, split.frame_bytes);
        // The root-only slot, if any, goes last: frames from an arena stop before it.
        let root_slot_at = slots_end.div_ceil(8) * 8;
        let bytes = if split.root_slot_offsets.is_empty() {
            slots_end
        } else {
            root_slot_at + split.root_slot_bytes
        };
        let i64_const = |value: u64| InstructionData::Const {
            ty: Type::I64,
            value: Constant::int(&Type::I64, value as i128),
        };
        for offset in split.root_slot_offsets.clone() {
            self.f.dfg.insts[offset] = i64_const(root_slot_at);
        }
        if let Some(arena_size) = split.arena_frame_size {
            self.f.dfg.insts[arena_size] = i64_const(slots_end);
        }
        self.f.dfg.insts[frame_size] = i64_const(bytes);
        self.cache.stats.frame_bytes = bytes;
        let Some(ret) = self.cache.final_return else { return };
        if self.f.layout.inst_block(ret).is_none() {
            return;
        }
        // A frame in caller memory (flag 0) or in an arena is left alone.
        self.free_by_frame_flag(frame, IntCC::Eq, FRAME_OWNED, Some(ret));
    }
}

/// One scalar or vector of a mirrored slot (`Synth::mirror_slots`): its offset in both
/// copies of the slot, its type, and the alignment its accesses may claim.
struct SlotPart {
    local: Value,
    in_frame: Value,
    offset: u64,
    ty: Type,
    align: u32,
}

/// The scalars and vectors a value of `ty` consists of, with their byte offsets from
/// `base`: aggregates field by field, element by element.
fn scalar_parts(ty: &Type, base: u64) -> Vec<(u64, Type)> {
    if !ty.is_aggregate() {
        return vec![(base, ty.clone())];
    }
    let mut parts = Vec::new();
    let mut index = 0;
    while let (Some(offset), Some(element)) = (ty.element_offset(index), ty.element_type(index)) {
        parts.extend(scalar_parts(element, base + offset));
        index += 1;
    }
    parts
}
