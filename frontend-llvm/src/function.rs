//! Function bodies: blocks, phis -> block parameters, edges with arguments (critical
//! edges split, switch included), value and block names, debug locations, and the
//! per-function state the instruction translators share.
//!
//! Blocks are translated in reverse post-order so that every operand except a phi input
//! is defined before its use; phi inputs are read when the predecessor's terminator is
//! translated, where they are defined too. Blocks unreachable from the entry are dropped
//! (they cannot run, and LLVM allows self-referencing instructions in them). The layout
//! keeps LLVM's block order, with each split-edge block right after its source.

use std::collections::HashMap;
use std::sync::Arc;

use adc_ir::{
    Block, BlockCall, Constant, DebugLoc, FuncId, Function, Inst, InstFlags, InstructionData, Type,
    Value,
};
use llvm_ir::function::ParameterAttribute;
use llvm_ir::instruction::Phi;
use llvm_ir::terminator::Terminator as T;
use llvm_ir::{BasicBlock, ConstantRef, Instruction, Name, Operand};

use crate::error::ImportError;
use crate::extras::InstExtra;
use crate::globals::ModuleCtx;

pub type R<T> = Result<T, String>;

pub struct FuncCtx<'m, 'a> {
    pub m: &'m mut ModuleCtx<'a>,
    pub func: Function,
    pub llvm_func: &'a llvm_ir::Function,
    blocks: HashMap<&'a Name, Block>,
    /// LLVM block name -> index in `llvm_func.basic_blocks`.
    block_index: HashMap<&'a Name, usize>,
    values: HashMap<&'a Name, Value>,
    /// Constants already materialized in a block, keyed by their debug text (llvm-ir
    /// makes a new `ConstantRef` per use, and `Constant` is not `Eq` because of floats).
    const_cache: HashMap<(Block, String), Value>,
    pub cur: Block,
    /// Debug location and C-API extras of the LLVM instruction being translated.
    pub loc: Option<DebugLoc>,
    pub extra: InstExtra,
    files: HashMap<String, Arc<str>>,
}

/// Keeps a name printable without quoting: `[A-Za-z0-9_.$-]`, anything else becomes `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(
            |c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-') {
                    c
                } else {
                    '_'
                }
            },
        )
        .collect()
}

/// LLVM fast-math bits (`LLVMFastMath*`) -> adc flags.
pub fn fast_math_flags(bits: u32) -> InstFlags {
    let table = [
        (1, InstFlags::REASSOC),
        (2, InstFlags::NNAN),
        (4, InstFlags::NINF),
        (8, InstFlags::NSZ),
        (16, InstFlags::ARCP),
        (32, InstFlags::CONTRACT),
        (64, InstFlags::AFN),
    ];
    let mut flags = InstFlags::empty();
    for (bit, flag) in table {
        if bits & bit != 0 {
            flags.insert(flag);
        }
    }
    flags
}

fn successors(term: &T) -> Vec<&Name> {
    match term {
        T::Br(b) => vec![&b.dest],
        T::CondBr(b) => vec![&b.true_dest, &b.false_dest],
        T::Switch(s) => {
            std::iter::once(&s.default_dest).chain(s.dests.iter().map(|(_, d)| d)).collect()
        }
        // The unwind edge is dropped (see `FuncCtx::invoke`): landing pads are unreachable.
        T::Invoke(i) => vec![&i.return_label],
        _ => Vec::new(),
    }
}

/// Whether a landing pad's block ends the program: it calls `std::terminate` (or clang's
/// `__clang_call_terminate`) and ends in `unreachable`.
fn terminates(bb: &BasicBlock) -> bool {
    let calls_terminate = bb.instrs.iter().any(|i| match i {
        Instruction::Call(call) => match &call.function {
            either::Either::Right(callee) => match callee.as_constant() {
                Some(llvm_ir::Constant::GlobalReference { name, .. }) => {
                    let name = crate::constants::global_name(name);
                    name == "__clang_call_terminate" || name == "_ZSt9terminatev"
                }
                _ => false,
            },
            either::Either::Left(_) => false,
        },
        _ => false,
    });
    calls_terminate && matches!(bb.term, T::Unreachable(_))
}

fn phis(bb: &BasicBlock) -> impl Iterator<Item = &Phi> {
    bb.instrs.iter().map_while(|i| match i {
        Instruction::Phi(p) => Some(p),
        _ => None,
    })
}

pub fn translate_function<'a>(
    m: &mut ModuleCtx<'a>,
    f: &'a llvm_ir::Function,
    id: FuncId,
) -> Result<Function, ImportError> {
    let fn_err = |reason: String| ImportError::Function { function: f.name.clone(), reason };
    let mut func = m.module.functions[id].clone();
    if f.basic_blocks.is_empty() {
        return Ok(func);
    }
    let llvm_types = &m.llvm.types;
    let index: HashMap<&Name, usize> =
        f.basic_blocks.iter().enumerate().map(|(i, bb)| (&bb.name, i)).collect();

    // Reverse post-order from the entry (iterative DFS).
    let mut order = Vec::new();
    let mut seen = vec![false; f.basic_blocks.len()];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some((b, next)) = stack.pop() {
        let succs = successors(&f.basic_blocks[b].term);
        if next < succs.len() {
            stack.push((b, next + 1));
            let s = *index
                .get(succs[next])
                .ok_or_else(|| fn_err(format!("branch to unknown block {}", succs[next])))?;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();

    let mut blocks = HashMap::new();
    let mut values = HashMap::new();
    for (i, bb) in f.basic_blocks.iter().enumerate() {
        if !seen[i] {
            continue;
        }
        let block = func.dfg.make_block();
        if let Name::Name(s) = &bb.name {
            func.dfg.set_block_name(block, &sanitize(s));
        }
        if i == 0 {
            for (p, ty) in f.parameters.iter().zip(func.signature.params.clone()) {
                let v = func.dfg.append_block_param(block, ty);
                if let Name::Name(s) = &p.name {
                    func.dfg.set_value_name(v, &sanitize(s));
                }
                values.insert(&p.name, v);
            }
        } else {
            for phi in phis(bb) {
                let ty = crate::types::convert(llvm_types, &phi.to_type).map_err(|reason| {
                    ImportError::Unsupported {
                        function: f.name.clone(),
                        inst: phi.to_string(),
                        reason,
                    }
                })?;
                let v = func.dfg.append_block_param(block, ty);
                if let Name::Name(s) = &phi.dest {
                    func.dfg.set_value_name(v, &sanitize(s));
                }
                values.insert(&phi.dest, v);
            }
        }
        blocks.insert(&bb.name, block);
    }
    if phis(&f.basic_blocks[0]).next().is_some() {
        return Err(fn_err("the entry block has phis".into()));
    }

    let entry = blocks[&f.basic_blocks[0].name];
    let mut cx = FuncCtx {
        m,
        func,
        llvm_func: f,
        blocks,
        block_index: index,
        values,
        const_cache: HashMap::new(),
        cur: entry,
        loc: None,
        extra: InstExtra::default(),
        files: HashMap::new(),
    };
    cx.copy_byval_params().map_err(fn_err)?;
    let mut split_blocks: HashMap<usize, Vec<Block>> = HashMap::new();
    for &b in &order {
        let bb = &f.basic_blocks[b];
        cx.cur = cx.blocks[&bb.name];
        for (k, inst) in bb.instrs.iter().enumerate() {
            if matches!(inst, Instruction::Phi(_)) {
                continue;
            }
            cx.set_context(b, k, llvm_ir::HasDebugLoc::get_debug_loc(inst));
            cx.instruction(inst).map_err(|reason| ImportError::Unsupported {
                function: f.name.clone(),
                inst: inst.to_string(),
                reason,
            })?;
        }
        cx.set_context(b, bb.instrs.len(), llvm_ir::HasDebugLoc::get_debug_loc(&bb.term));
        let splits = cx.terminator(&bb.name, &bb.term).map_err(|reason| {
            ImportError::Unsupported { function: f.name.clone(), inst: bb.term.to_string(), reason }
        })?;
        split_blocks.insert(b, splits);
    }

    for (i, bb) in f.basic_blocks.iter().enumerate() {
        if !seen[i] {
            continue;
        }
        let block = cx.blocks[&bb.name];
        cx.func.layout.append_block(block);
        for split in split_blocks.remove(&i).unwrap_or_default() {
            cx.func.layout.append_block(split);
        }
    }
    Ok(cx.func)
}

impl<'m, 'a> FuncCtx<'m, 'a> {
    /// A `byval` argument is the callee's own copy: LLVM's caller does not copy (the call
    /// does), and the callee may write to it. adc has no byval, so the callee copies the
    /// pointed-to bytes into its own frame on entry and works on that copy.
    fn copy_byval_params(&mut self) -> R<()> {
        let f = self.llvm_func;
        // The layout is filled last, so the entry block is the current one, not
        // `Function::params`.
        let params = self.func.dfg.block_params(self.cur).to_vec();
        for (p, value) in f.parameters.iter().zip(params) {
            let byval = p.attributes.iter().find_map(|a| match a {
                ParameterAttribute::ByVal(ty) => Some(ty),
                _ => None,
            });
            let Some(ty) = byval else { continue };
            let ty = self.convert_type(ty)?;
            let align = p
                .attributes
                .iter()
                .find_map(|a| match a {
                    ParameterAttribute::Alignment(n) => Some(*n as u32),
                    _ => None,
                })
                .unwrap_or(ty.align() as u32);
            let size = ty.size();
            let copy =
                self.val(InstructionData::Alloca { ty, count: None, align: align.max(1) })?;
            let len = self.iconst(&Type::I64, i128::from(size));
            self.ins(InstructionData::MemCopy {
                dst: copy,
                src: value,
                len,
                may_overlap: false,
                volatile: false,
            });
            if let Name::Name(s) = &p.name {
                self.func.dfg.set_value_name(copy, &format!("{}.copy", sanitize(s)));
            }
            self.values.insert(&p.name, copy);
        }
        Ok(())
    }

    fn set_context(&mut self, block: usize, inst: usize, loc: &Option<llvm_ir::DebugLoc>) {
        self.extra =
            self.m.extras.inst(&self.llvm_func.name, block, inst).cloned().unwrap_or_default();
        self.loc = loc.as_ref().map(|l| {
            let file = match self.files.get(&l.filename) {
                Some(f) => f.clone(),
                None => {
                    let f: Arc<str> = Arc::from(l.filename.as_str());
                    self.files.insert(l.filename.clone(), f.clone());
                    f
                }
            };
            DebugLoc { file, line: l.line, column: l.col.unwrap_or(0) }
        });
    }

    /// Appends an instruction to the current block, typed from its data.
    pub fn ins(&mut self, data: InstructionData) -> (Inst, Option<Value>) {
        let module = &self.m.module;
        let ty = self.func.dfg.result_type(&data, &|f| module.signature(f));
        let inst = self.func.dfg.make_inst(data, ty);
        self.func.layout.append_inst(inst, self.cur);
        self.func.dfg.debug_locs[inst] = self.loc.clone();
        (inst, self.func.dfg.inst_result(inst))
    }

    /// Appends an instruction that must produce a value.
    pub fn val(&mut self, data: InstructionData) -> R<Value> {
        let name = data.opcode_name();
        self.ins(data).1.ok_or_else(|| format!("`{name}` with ill-typed operands"))
    }

    pub fn ty(&self, v: Value) -> Type {
        self.func.dfg.value_type(v).clone()
    }

    /// Records the LLVM name of a result.
    pub fn define(&mut self, name: &'a Name, value: Value) {
        if let Name::Name(s) = name {
            if self.func.dfg.value_name(value).is_none() {
                self.func.dfg.set_value_name(value, &sanitize(s));
            }
        }
        self.values.insert(name, value);
    }

    pub fn constant(&mut self, ty: Type, value: Constant) -> Value {
        let (_, v) = self.ins(InstructionData::Const { ty, value });
        v.unwrap_or_else(|| unreachable!("const always has a result"))
    }

    pub fn iconst(&mut self, ty: &Type, value: i128) -> Value {
        let c = Constant::int(ty.lane_type(), value);
        let c = if ty.is_vector() { Constant::Elements(vec![c; ty.lanes() as usize]) } else { c };
        self.constant(ty.clone(), c)
    }

    /// The value of an operand, materializing constants in the current block.
    pub fn operand(&mut self, op: &Operand) -> R<Value> {
        match op {
            Operand::LocalOperand { name, .. } => self
                .values
                .get(name)
                .copied()
                .ok_or_else(|| format!("use of {name} before its definition")),
            Operand::ConstantOperand(c) => self.const_value(c),
            Operand::MetadataOperand => Err("metadata used as a value".into()),
        }
    }

    pub fn const_value(&mut self, c: &ConstantRef) -> R<Value> {
        let key = (self.cur, format!("{c:?}"));
        if let Some(v) = self.const_cache.get(&key) {
            return Ok(*v);
        }
        let v = self.materialize(c)?;
        self.const_cache.insert(key, v);
        Ok(v)
    }

    /// Terminators; returns the blocks created to split edges out of this block.
    fn terminator(&mut self, from: &'a Name, term: &'a T) -> R<Vec<Block>> {
        let mut splits: Vec<(&'a Name, Block)> = Vec::new();
        let multi = successors(term).len() > 1;
        let data = match term {
            T::Ret(r) => {
                let value = match &r.return_operand {
                    Some(op) => Some(self.operand(op)?),
                    None => None,
                };
                InstructionData::Return { value }
            }
            T::Br(b) => {
                InstructionData::Jump { dest: self.edge(from, &b.dest, false, &mut splits)? }
            }
            T::CondBr(b) => {
                let cond = self.operand(&b.condition)?;
                let then_dest = self.edge(from, &b.true_dest, multi, &mut splits)?;
                let else_dest = self.edge(from, &b.false_dest, multi, &mut splits)?;
                InstructionData::Brif { cond, then_dest, else_dest }
            }
            T::Switch(s) => {
                let value = self.operand(&s.operand)?;
                let bits = self.ty(value).int_bits().ok_or("switch on a non-integer")?;
                let default = self.edge(from, &s.default_dest, multi, &mut splits)?;
                let mut cases = Vec::new();
                for (c, dest) in &s.dests {
                    let Some(Constant::Int(k)) = self.m.fold(c, false)? else {
                        return Err(format!("switch case `{c}` is not an integer"));
                    };
                    let k = adc_ir::constant::mask_to_width(k, bits);
                    cases.push((k, self.edge(from, dest, multi, &mut splits)?));
                }
                InstructionData::Switch { value, default, cases }
            }
            T::Unreachable(_) => InstructionData::Unreachable,
            T::Invoke(i) => {
                self.invoke(i)?;
                InstructionData::Jump {
                    dest: self.edge(from, &i.return_label, false, &mut splits)?,
                }
            }
            T::Resume(_) | T::CleanupRet(_) | T::CatchRet(_) | T::CatchSwitch(_) => {
                return Err(
                    "exception handling (resume, catchswitch, funclets) is not supported".into()
                )
            }
            T::IndirectBr(_) => return Err("indirectbr (computed goto) is not supported".into()),
            T::CallBr(_) => return Err("callbr (asm goto) is not supported".into()),
        };
        let (inst, _) = self.ins(data);
        self.func.dfg.loop_vectorized[inst] = self.extra.loop_vectorized;
        Ok(splits.into_iter().map(|(_, b)| b).collect())
    }

    /// An `invoke` becomes a call followed by a jump to its normal destination. adc emits
    /// no unwind tables, so an exception thrown by the callee cannot unwind through the
    /// caller: the C++ runtime calls `std::terminate`, as for a `noexcept` function. That
    /// drops nothing a program relies on only when the landing pad is a cleanup (the
    /// destructors of locals, after which the exception would propagate on): a landing pad
    /// that catches (`try`/`catch`, exception specifications) is an error.
    fn invoke(&mut self, invoke: &'a llvm_ir::terminator::Invoke) -> R<()> {
        let f = self.llvm_func;
        let unwind =
            self.block_index.get(&invoke.exception_label).map(|&i| &f.basic_blocks[i]).ok_or_else(
                || format!("invoke unwinds to unknown block {}", invoke.exception_label),
            )?;
        let pad = unwind.instrs.iter().find(|i| !matches!(i, Instruction::Phi(_)));
        match pad {
            Some(Instruction::LandingPad(pad)) if pad.clauses.is_empty() => {}
            // The handler clang gives calls from `noexcept` functions: it terminates.
            Some(Instruction::LandingPad(_)) if terminates(unwind) => {}
            // `catch (...) { clean up; throw; }` (libstdc++'s containers): a cleanup too.
            Some(Instruction::LandingPad(_)) if !self.handler_resumes_normal_flow(unwind) => {}
            Some(Instruction::LandingPad(_)) => {
                return Err(format!(
                    "an exception handler that catches and carries on (`try`/`catch`, \
                     landing pad {}) is not supported: adc-compiled code does not unwind, so \
                     exceptions would terminate the program instead of being caught",
                    invoke.exception_label
                ))
            }
            _ => {
                return Err(format!(
                    "invoke unwinds to {}, which does not start with a landingpad",
                    invoke.exception_label
                ))
            }
        }
        self.invoke_call(invoke)
    }

    /// Whether the code an exception runs from the landing pad `pad` can return or rejoin
    /// the function's normal flow (a `catch` that recovers), rather than only cleaning up
    /// and then resuming, rethrowing or terminating. Normal flow is every block reachable
    /// from the entry without unwinding (`self.blocks`).
    fn handler_resumes_normal_flow(&self, pad: &'a BasicBlock) -> bool {
        let f = self.llvm_func;
        let mut seen: Vec<&Name> = vec![&pad.name];
        let mut stack = vec![pad];
        while let Some(bb) = stack.pop() {
            let next: Vec<&Name> = match &bb.term {
                T::Ret(_) => return true,
                T::Invoke(i) => vec![&i.return_label, &i.exception_label],
                term => successors(term),
            };
            for name in next {
                if self.blocks.contains_key(name) {
                    return true;
                }
                let Some(&index) = self.block_index.get(name) else { return true };
                if !seen.contains(&name) {
                    seen.push(name);
                    stack.push(&f.basic_blocks[index]);
                }
            }
        }
        false
    }

    /// The block call for the edge `from -> to`: phi inputs become arguments; an edge
    /// with arguments out of a block with several successors goes through a new block.
    fn edge(
        &mut self,
        from: &Name,
        to: &'a Name,
        multi: bool,
        splits: &mut Vec<(&'a Name, Block)>,
    ) -> R<BlockCall> {
        let target = *self.blocks.get(to).ok_or_else(|| format!("branch to unknown block {to}"))?;
        let f = self.llvm_func;
        let bb = &f.basic_blocks[*self.block_index.get(to).ok_or("unknown block")?];
        let incoming: Vec<&Operand> = phis(bb)
            .map(|phi| {
                phi.incoming_values
                    .iter()
                    .find(|(_, pred)| pred == from)
                    .map(|(op, _)| op)
                    .ok_or_else(|| format!("phi {} has no input for predecessor {from}", phi.dest))
            })
            .collect::<R<_>>()?;
        if incoming.is_empty() {
            return Ok(BlockCall::new(target, Vec::new()));
        }
        if !multi {
            let args = incoming.into_iter().map(|op| self.operand(op)).collect::<R<_>>()?;
            return Ok(BlockCall::new(target, args));
        }
        // Several switch cases may share an edge; their phi inputs are the same.
        if let Some((_, split)) = splits.iter().find(|(name, _)| *name == to) {
            return Ok(BlockCall::new(*split, Vec::new()));
        }
        let source = self.cur;
        let split = self.func.dfg.make_block();
        let from_name = self.func.dfg.block_name(source).map(str::to_string);
        let to_name = self.func.dfg.block_name(target).map(str::to_string);
        if let (Some(a), Some(b)) = (from_name, to_name) {
            self.func.dfg.set_block_name(split, &format!("{a}.to.{b}"));
        }
        self.cur = split;
        let args = incoming.into_iter().map(|op| self.operand(op)).collect::<R<Vec<_>>>();
        let args = match args {
            Ok(args) => args,
            Err(e) => {
                self.cur = source;
                return Err(e);
            }
        };
        self.ins(InstructionData::Jump { dest: BlockCall::new(target, args) });
        self.cur = source;
        splits.push((to, split));
        Ok(BlockCall::new(split, Vec::new()))
    }
}
