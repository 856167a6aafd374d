//! The execution loop: an explicit stack of frames (so deep recursion cannot overflow the
//! host stack), one instruction at a time, fuel counted per instruction, block arguments
//! assigned as a parallel copy, and errors located at the faulting instruction.

use cranelift_entity::EntityRef;

use crate::constant::{mask_to_width, Constant};
use crate::entities::{Block, FuncId, Inst, Value};
use crate::function::{Function, Signature};
use crate::instructions::{AtomicRmwOp, BinaryOp, BlockCall, InstructionData as I};
use crate::text::FunctionPrinter;
use crate::types::Type;

use super::memory::{checked_size, Access, AllocKind};
use super::value::{self, malformed, Val};
use super::varargs::VaArea;
use super::{ErrorKind, ErrorLocation, InterpError, Interpreter, R};
use crate::varargs::VaIntrinsic;

/// One activation of a defined function.
pub(crate) struct Frame<'m> {
    func: &'m Function,
    values: Vec<Option<Val>>,
    block: Block,
    pos: usize,
    /// `alloca`s made by this activation; they die when it returns.
    allocas: Vec<u64>,
    /// The caller's value that receives the result.
    ret_to: Option<Value>,
    /// Reused buffer for block arguments.
    scratch: Vec<Val>,
    /// The variable arguments of a variadic function's activation.
    va_area: Option<VaArea>,
}

impl<'m> Frame<'m> {
    /// The instruction executed last in this frame's block (a barrier, after one).
    pub(crate) fn previous_inst(&self) -> Option<Inst> {
        let pos = self.pos.checked_sub(1)?;
        self.func.layout.block_insts(self.block).get(pos).copied()
    }

    fn get(&self, v: Value) -> R<&Val> {
        // Plain matches: this is the hottest path of the interpreter, also in debug builds.
        match self.values.get(v.index()) {
            Some(Some(val)) => Ok(val),
            _ => Err(malformed(format!("use of value {v} before its definition"))),
        }
    }

    fn set(&mut self, v: Value, val: Val) -> R<()> {
        match self.values.get_mut(v.index()) {
            Some(slot) => {
                *slot = Some(val);
                Ok(())
            }
            None => Err(malformed(format!("value {v} does not exist"))),
        }
    }

    fn ty(&self, v: Value) -> R<&'m Type> {
        let func: &'m Function = self.func;
        func.dfg
            .values
            .get(v)
            .map(|d| &d.ty)
            .ok_or_else(|| malformed(format!("value {v} does not exist")))
    }

    fn int(&self, v: Value) -> R<u128> {
        self.get(v)?.as_int()
    }

    fn ptr(&self, v: Value) -> R<u64> {
        self.get(v)?.as_ptr()
    }

    /// Sets the result of `inst` (an instruction that must have one).
    fn set_result(&mut self, inst: Inst, val: Val) -> R<()> {
        let result = self
            .func
            .dfg
            .inst_result(inst)
            .ok_or_else(|| malformed("instruction without a result slot"))?;
        self.set(result, val)
    }

    /// Jumps to `dest`: evaluates every argument first, then assigns the parameters.
    fn branch(&mut self, dest: &BlockCall) -> R<()> {
        let Some(block) = self.func.dfg.blocks.get(dest.block) else {
            return Err(malformed(format!("branch to unknown block {}", dest.block)));
        };
        let params = &block.params;
        if params.len() != dest.args.len() {
            return Err(malformed(format!(
                "branch passes {} arguments to a block with {} parameters",
                dest.args.len(),
                params.len()
            )));
        }
        match params.len() {
            0 => {}
            // One argument cannot be overwritten before it is read.
            1 => {
                let v = self.get(dest.args[0])?.clone();
                self.set(params[0], v)?;
            }
            n => {
                // A parallel copy: read every argument before writing any parameter.
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                for i in 0..n {
                    scratch.push(self.get(dest.args[i])?.clone());
                }
                for i in (0..n).rev() {
                    let v = scratch.pop().ok_or_else(|| malformed("block arguments"))?;
                    self.set(params[i], v)?;
                }
                self.scratch = scratch;
            }
        }
        self.block = dest.block;
        self.pos = 0;
        Ok(())
    }
}

/// What the loop does after an instruction.
enum Flow {
    /// Go on with the next instruction of the block.
    Next,
    /// The instruction moved the frame itself (a branch).
    Moved,
    Call {
        callee: FuncId,
        args: Vec<Val>,
        result: Option<Value>,
        va_area: Option<VaArea>,
    },
    Return(Option<Val>),
    /// A GPU thread reached a block-wide barrier (only under [`Interpreter::launch`]).
    Barrier,
}

/// Whether `data` reads or writes memory another GPU thread may see.
fn touches_memory(data: &I) -> bool {
    matches!(
        data,
        I::Load { .. }
            | I::Store { .. }
            | I::AtomicRmw { .. }
            | I::CmpXchg { .. }
            | I::MemCopy { .. }
            | I::MemSet { .. }
    )
}

/// How a run of the execution loop ended.
pub(crate) enum Exit {
    Return(Option<Val>),
    /// The thread stopped at a barrier; its stack is ready to resume after it.
    Barrier,
    /// The thread touched memory and yields to the next one (an interleaved launch); its
    /// stack resumes after that instruction.
    Yield,
}

/// The state a GPU thread keeps between the turns of an interleaved launch.
#[derive(Default)]
pub(crate) struct Turns {
    /// Instructions run in the current phase (what fuel limits).
    pub executed: u64,
    /// Yield after each instruction that reads or writes memory.
    pub yield_after_memory: bool,
}

impl<'m> Interpreter<'m> {
    pub(crate) fn run(&mut self, func: FuncId, args: &[Val]) -> Result<Option<Val>, InterpError> {
        let module = self.module;
        let f = module.functions.get(func).ok_or_else(|| {
            ErrorKind::InvalidArgument(format!("function {func} is not in the module"))
        })?;
        let converted = self.convert_args(f, args)?;
        if f.is_declaration() {
            let tys = converted.iter().map(type_of_val).collect::<Vec<_>>();
            return Ok(self.call_external(f, converted, &tys)?);
        }
        let mut converted = converted;
        let va_area = if f.signature.varargs {
            let extra = converted.split_off(f.signature.params.len());
            let tys = extra.iter().map(type_of_val).collect::<Vec<_>>();
            Some(self.va_area(f, &extra, &tys)?)
        } else {
            None
        };
        let mut stack = Vec::new();
        self.push_frame(&mut stack, func, converted, None, va_area)?;
        let result = self.run_loop(&mut stack);
        self.kill_frames(stack);
        match result? {
            Exit::Return(v) => Ok(v),
            Exit::Barrier | Exit::Yield => Err(malformed("barrier outside a kernel launch").into()),
        }
    }

    /// Checks the argument count and converts `args` to `f`'s parameter types.
    pub(crate) fn convert_args(&self, f: &Function, args: &[Val]) -> R<Vec<Val>> {
        let sig = &f.signature;
        if args.len() != sig.params.len() && !(sig.varargs && args.len() > sig.params.len()) {
            return Err(ErrorKind::InvalidArgument(format!(
                "@{} takes {} arguments, {} given",
                f.name,
                sig.params.len(),
                args.len()
            )));
        }
        let mut converted = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match sig.params.get(i) {
                Some(ty) => converted.push(a.coerce(ty).ok_or_else(|| {
                    ErrorKind::InvalidArgument(format!(
                        "argument {i} of @{} should be a value of type {ty}, not {a:?}",
                        f.name
                    ))
                })?),
                None => converted.push(a.clone()),
            }
        }
        Ok(converted)
    }

    /// Ends the `alloca`s of every frame left on `stack`.
    pub(crate) fn kill_frames(&mut self, stack: Vec<Frame<'m>>) {
        for frame in stack {
            for base in frame.allocas {
                self.mem.kill_stack(base);
            }
        }
    }

    pub(crate) fn push_frame(
        &mut self,
        stack: &mut Vec<Frame<'m>>,
        func_id: FuncId,
        args: Vec<Val>,
        ret_to: Option<Value>,
        va_area: Option<VaArea>,
    ) -> R<()> {
        let module: &'m crate::module::Module = self.module;
        let func = module
            .functions
            .get(func_id)
            .ok_or_else(|| malformed(format!("call of unknown function {func_id}")))?;
        if stack.len() >= self.max_depth {
            return Err(ErrorKind::CallDepth { limit: self.max_depth, func: func.name.clone() });
        }
        let entry =
            func.entry_block().ok_or_else(|| malformed(format!("@{} has no body", func.name)))?;
        let params = func.dfg.block_params(entry);
        if params.len() != args.len() {
            return Err(malformed(format!(
                "@{} called with {} arguments, its entry block has {} parameters",
                func.name,
                args.len(),
                params.len()
            )));
        }
        let mut values = vec![None; func.dfg.values.len()];
        for (p, a) in params.iter().zip(args) {
            *values.get_mut(p.index()).ok_or_else(|| malformed("bad parameter"))? = Some(a);
        }
        let allocas = va_area.map_or_else(Vec::new, |a| vec![a.save, a.overflow]);
        stack.push(Frame {
            func,
            values,
            block: entry,
            pos: 0,
            allocas,
            ret_to,
            scratch: Vec::new(),
            va_area,
        });
        Ok(())
    }

    /// Runs the top of `stack` until the outermost frame returns or, in a kernel launch, a
    /// barrier is reached (the stack then resumes after the barrier).
    pub(crate) fn run_loop(&mut self, stack: &mut Vec<Frame<'m>>) -> Result<Exit, InterpError> {
        self.run_turn(stack, &mut Turns::default())
    }

    /// [`Self::run_loop`] for one turn of a GPU thread: also stops (with [`Exit::Yield`])
    /// after a memory access when `turns` asks for it.
    pub(crate) fn run_turn(
        &mut self,
        stack: &mut Vec<Frame<'m>>,
        turns: &mut Turns,
    ) -> Result<Exit, InterpError> {
        let executed = &mut turns.executed;
        loop {
            let Some(frame) = stack.last_mut() else {
                return Err(malformed("empty call stack").into());
            };
            let Some(&inst) = frame.func.layout.block_insts(frame.block).get(frame.pos) else {
                let block = frame.block;
                let err = malformed(format!("block {block} ends without a terminator"));
                return Err(self.locate(err, stack, None));
            };
            if *executed >= self.fuel {
                let err = ErrorKind::OutOfFuel { fuel: self.fuel, func: frame.func.name.clone() };
                return Err(self.locate(err, stack, Some(inst)));
            }
            *executed += 1;
            let flow = match self.exec(frame, inst) {
                Ok(flow) => flow,
                Err(e) => return Err(self.locate(e, stack, Some(inst))),
            };
            match flow {
                Flow::Next
                    if turns.yield_after_memory && touches_memory(&frame.func.dfg.insts[inst]) =>
                {
                    frame.pos += 1;
                    return Ok(Exit::Yield);
                }
                Flow::Next => frame.pos += 1,
                Flow::Moved => {}
                Flow::Barrier => {
                    frame.pos += 1;
                    return Ok(Exit::Barrier);
                }
                Flow::Call { callee, args, result, va_area } => {
                    frame.pos += 1;
                    if let Err(e) = self.push_frame(stack, callee, args, result, va_area) {
                        if let Some(caller) = stack.last_mut() {
                            caller.pos -= 1;
                        }
                        return Err(self.locate(e, stack, Some(inst)));
                    }
                }
                Flow::Return(value) => {
                    let Some(done) = stack.pop() else { continue };
                    for base in &done.allocas {
                        self.mem.kill_stack(*base);
                    }
                    let Some(caller) = stack.last_mut() else {
                        return Ok(Exit::Return(value));
                    };
                    if let Some(dest) = done.ret_to {
                        let stored = match value {
                            Some(v) => caller.set(dest, v),
                            None => {
                                Err(malformed(format!("@{} returned no value", done.func.name)))
                            }
                        };
                        if let Err(e) = stored {
                            caller.pos -= 1;
                            let call = caller
                                .func
                                .layout
                                .block_insts(caller.block)
                                .get(caller.pos)
                                .copied();
                            return Err(self.locate(e, stack, call));
                        }
                    }
                }
            }
        }
    }

    /// Attaches the location (top frame, `inst`) and the call stack to an error.
    pub(crate) fn locate(
        &self,
        kind: ErrorKind,
        stack: &[Frame<'m>],
        inst: Option<Inst>,
    ) -> InterpError {
        let mut err = InterpError::new(kind);
        err.stack = stack.iter().map(|f| f.func.name.clone()).collect();
        if let Some(frame) = stack.last() {
            let printer = FunctionPrinter::new(self.module, frame.func);
            let block = printer.block(frame.block);
            let (text, span) = match inst.filter(|i| frame.func.dfg.insts.is_valid(*i)) {
                Some(i) => (printer.inst_to_string(i), frame.func.dfg.inst_spans[i]),
                None => (String::from("<end of block>"), frame.func.dfg.block_spans[frame.block]),
            };
            err.location = Some(Box::new(ErrorLocation {
                function: frame.func.name.clone(),
                block: block.trim_start_matches('^').to_string(),
                inst: text,
                span,
            }));
        }
        err
    }

    /// Executes one instruction of the top frame.
    fn exec(&mut self, frame: &mut Frame<'m>, inst: Inst) -> R<Flow> {
        let func: &'m Function = frame.func;
        let data = func
            .dfg
            .insts
            .get(inst)
            .ok_or_else(|| malformed(format!("unknown instruction {inst}")))?;
        let result = match data {
            I::Const { ty, value: Constant::Int(v) } if ty.is_int() => {
                Val::Int(mask_to_width(*v, ty.int_bits().unwrap_or(128)))
            }
            I::Const { ty, value } => value::constant(ty, value, &|s| self.symbol_address(s))?,
            I::Unary { op, arg, .. } => value::unary(*op, frame.ty(*arg)?, frame.get(*arg)?)?,
            I::Binary { op, args, .. } => match (frame.get(args[0])?, frame.get(args[1])?) {
                (Val::Int(a), Val::Int(b)) => {
                    let bits = frame.ty(args[0])?.int_bits().unwrap_or(128);
                    Val::Int(value::int_binary(*op, bits, *a, *b)?)
                }
                _ => value::binary(
                    *op,
                    frame.ty(args[0])?,
                    frame.get(args[0])?,
                    frame.get(args[1])?,
                )?,
            },
            I::Fma { args, .. } => value::fma(
                frame.ty(args[0])?,
                frame.get(args[0])?,
                frame.get(args[1])?,
                frame.get(args[2])?,
            )?,
            I::Icmp { cond, args } => match (frame.get(args[0])?, frame.get(args[1])?) {
                (Val::Int(a), Val::Int(b)) => {
                    let bits = frame.ty(args[0])?.int_bits().unwrap_or(128);
                    Val::bool(value::icmp_scalar(*cond, bits, *a, *b))
                }
                _ => value::icmp(
                    *cond,
                    frame.ty(args[0])?,
                    frame.get(args[0])?,
                    frame.get(args[1])?,
                )?,
            },
            I::Fcmp { cond, args, .. } => {
                value::fcmp(*cond, frame.ty(args[0])?, frame.get(args[0])?, frame.get(args[1])?)?
            }
            I::Select { args, .. } => {
                value::select(frame.get(args[0])?, frame.get(args[1])?, frame.get(args[2])?)?
            }
            I::Cast { op, arg, ty } => value::cast(*op, frame.ty(*arg)?, ty, frame.get(*arg)?)?,
            I::Alloca { ty, count, align } => {
                let n = match count {
                    Some(c) => frame.int(*c)?,
                    None => 1,
                };
                let too_big = || ErrorKind::OutOfMemory { size: u64::MAX };
                let elem = checked_size(ty).ok_or_else(too_big)?;
                let size =
                    u64::try_from(n).ok().and_then(|n| n.checked_mul(elem)).ok_or_else(too_big)?;
                let align = u64::from(*align).max(ty.align());
                let base = self.mem.allocate(
                    size,
                    align,
                    AllocKind::Stack { func: func.name.clone() },
                    false,
                )?;
                frame.allocas.push(base);
                Val::Ptr(base)
            }
            I::Load { ty, ptr, .. } => self.mem.load(frame.ptr(*ptr)?, ty, Access::read("load"))?,
            I::Store { value, ptr, .. } => {
                let ty = frame.ty(*value)?;
                self.mem.store(frame.ptr(*ptr)?, ty, frame.get(*value)?, Access::write("store"))?;
                return Ok(Flow::Next);
            }
            I::PtrAdd { ptr, offset, .. } => {
                let bits = frame.ty(*offset)?.lane_type().int_bits().unwrap_or(64);
                let add = |p: &Val, o: &Val| -> R<Val> {
                    let o = crate::constant::sign_extend(o.as_int()?, bits) as u64;
                    Ok(Val::Ptr(p.as_ptr()?.wrapping_add(o)))
                };
                match (frame.get(*ptr)?, frame.get(*offset)?) {
                    // A vector of pointers with one offset, or one pointer with a vector
                    // of offsets: the scalar applies to every lane.
                    (Val::Vector(ps), o @ Val::Int(_)) => {
                        Val::Vector(ps.iter().map(|p| add(p, o)).collect::<R<_>>()?)
                    }
                    (p @ (Val::Ptr(_) | Val::Int(_)), Val::Vector(os)) => {
                        Val::Vector(os.iter().map(|o| add(p, o)).collect::<R<_>>()?)
                    }
                    (Val::Vector(ps), Val::Vector(os)) if ps.len() == os.len() => {
                        Val::Vector(ps.iter().zip(os).map(|(p, o)| add(p, o)).collect::<R<_>>()?)
                    }
                    (p, o) => add(p, o)?,
                }
            }
            I::MemCopy { dst, src, len, may_overlap, .. } => {
                let len = length(frame.int(*len)?)?;
                let op = if *may_overlap { "memmove" } else { "memcpy" };
                self.mem.copy(frame.ptr(*dst)?, frame.ptr(*src)?, len, *may_overlap, op)?;
                return Ok(Flow::Next);
            }
            I::MemSet { dst, byte, len, .. } => {
                let len = length(frame.int(*len)?)?;
                self.mem.fill(frame.ptr(*dst)?, frame.int(*byte)? as u8, len, "memset")?;
                return Ok(Flow::Next);
            }
            I::Call { callee, args, .. } => {
                return self.call_inst(frame, inst, *callee, args, None);
            }
            I::CallIndirect { sig, callee, args, .. } => {
                let addr = frame.ptr(*callee)?;
                let target = self.function_at(addr)?;
                return self.call_inst(frame, inst, target, args, Some(sig));
            }
            I::ExtractLane { vector, index } => {
                let lanes = frame.get(*vector)?.lanes()?;
                let index = frame.int(*index)?;
                lane(lanes, index)?.clone()
            }
            I::InsertLane { vector, value, index } => {
                let mut lanes = frame.get(*vector)?.lanes()?.to_vec();
                let index = frame.int(*index)?;
                lane(&lanes, index)?;
                lanes[index as usize] = frame.get(*value)?.clone();
                Val::Vector(lanes)
            }
            I::Shuffle { args, mask } => {
                let a = frame.get(args[0])?.lanes()?;
                let b = frame.get(args[1])?.lanes()?;
                let lane_ty = frame.ty(args[0])?.lane_type();
                let lanes = mask
                    .iter()
                    .map(|m| match m {
                        None => value::zero(lane_ty),
                        Some(i) => {
                            let i = *i as usize;
                            a.get(i).or_else(|| b.get(i.wrapping_sub(a.len()))).cloned().ok_or(
                                ErrorKind::LaneOutOfRange {
                                    index: i as u128,
                                    lanes: a.len() + b.len(),
                                },
                            )
                        }
                    })
                    .collect::<R<_>>()?;
                Val::Vector(lanes)
            }
            I::Reduce { op, args, .. } => {
                let v = args.first().ok_or_else(|| malformed("reduction without operand"))?;
                let start = match args.get(1) {
                    Some(s) => Some(frame.get(*s)?),
                    None => None,
                };
                value::reduce(*op, frame.ty(*v)?, frame.get(*v)?, start)?
            }
            I::ExtractValue { aggregate, indices } => {
                let mut v = frame.get(*aggregate)?;
                for index in indices {
                    v = element(v)?.get(*index as usize).ok_or_else(|| {
                        malformed(format!("extractvalue index {index} out of range"))
                    })?;
                }
                v.clone()
            }
            I::InsertValue { aggregate, value, indices } => {
                let mut whole = frame.get(*aggregate)?.clone();
                let mut slot = &mut whole;
                for index in indices {
                    slot = element_mut(slot)?.get_mut(*index as usize).ok_or_else(|| {
                        malformed(format!("insertvalue index {index} out of range"))
                    })?;
                }
                *slot = frame.get(*value)?.clone();
                whole
            }
            I::AtomicRmw { op, ptr, value, .. } => {
                let addr = frame.ptr(*ptr)?;
                let ty = frame.ty(*value)?;
                let old = self.mem.load(addr, ty, Access::read("atomicrmw"))?;
                let new = atomic_op(*op, ty, &old, frame.get(*value)?)?;
                self.mem.store(addr, ty, &new, Access::write("atomicrmw"))?;
                old
            }
            I::CmpXchg { ptr, expected, new, .. } => {
                let addr = frame.ptr(*ptr)?;
                let ty = frame.ty(*expected)?;
                let old = self.mem.load(addr, ty, Access::read("cmpxchg"))?;
                let hit = same_bits(&old, frame.get(*expected)?);
                if hit {
                    self.mem.store(addr, ty, frame.get(*new)?, Access::write("cmpxchg"))?;
                } else {
                    // A failed cmpxchg still needs write access to the location.
                    self.mem.check(
                        addr,
                        super::memory::store_size(ty)?,
                        Access::write("cmpxchg"),
                    )?;
                }
                Val::Aggregate(vec![old, Val::bool(hit)])
            }
            I::Fence { .. } => return Ok(Flow::Next),
            I::Jump { dest } => {
                frame.branch(dest)?;
                return Ok(Flow::Moved);
            }
            I::Brif { cond, then_dest, else_dest } => {
                let dest = if frame.get(*cond)?.as_bool()? { then_dest } else { else_dest };
                frame.branch(dest)?;
                return Ok(Flow::Moved);
            }
            I::Switch { value, default, cases } => {
                let v = frame.int(*value)?;
                let bits = frame.ty(*value)?.int_bits().unwrap_or(128);
                let dest = cases
                    .iter()
                    .find(|(c, _)| crate::constant::mask_to_width(*c, bits) == v)
                    .map_or(default, |(_, d)| d);
                frame.branch(dest)?;
                return Ok(Flow::Moved);
            }
            I::Return { value } => {
                let v = match value {
                    Some(v) => Some(frame.get(*v)?.clone()),
                    None => None,
                };
                return Ok(Flow::Return(v));
            }
            I::Unreachable => return Err(ErrorKind::Unreachable),
        };
        frame.set_result(inst, result)?;
        Ok(Flow::Next)
    }

    /// A direct call, or an indirect one (`sig` is the call site's signature).
    fn call_inst(
        &mut self,
        frame: &mut Frame<'m>,
        inst: Inst,
        callee: FuncId,
        args: &[Value],
        sig: Option<&Signature>,
    ) -> R<Flow> {
        let module: &'m crate::module::Module = self.module;
        let f = module
            .functions
            .get(callee)
            .ok_or_else(|| malformed(format!("call of unknown function {callee}")))?;
        if let Some(sig) = sig {
            if !compatible(sig, &f.signature) {
                return Err(ErrorKind::SignatureMismatch {
                    func: f.name.clone(),
                    actual: signature_text(&f.signature),
                    expected: signature_text(sig),
                });
            }
        }
        let mut vals = args.iter().map(|a| frame.get(*a).cloned()).collect::<R<Vec<_>>>()?;
        let result = func_result(frame.func, inst);
        if let Some(intrinsic) = VaIntrinsic::from_name(&f.name).filter(|_| f.is_declaration()) {
            self.va_intrinsic(intrinsic, frame.va_area, frame.func, &vals)?;
            return Ok(Flow::Next);
        }
        if f.is_declaration() {
            let ret = match self.gpu_intrinsic(&f.name, &vals)? {
                Some(super::grid::Intrinsic::Barrier) => return Ok(Flow::Barrier),
                Some(super::grid::Intrinsic::Value(v)) => v,
                None => {
                    let tys = args.iter().map(|a| frame.ty(*a).cloned()).collect::<R<Vec<_>>>()?;
                    self.call_external(f, vals, &tys)?
                }
            };
            if let Some(dest) = result {
                let v = ret.ok_or_else(|| malformed(format!("@{} returned no value", f.name)))?;
                frame.set(dest, v)?;
            }
            return Ok(Flow::Next);
        }
        let va_area = if f.signature.varargs {
            let extra = vals.split_off(f.signature.params.len().min(vals.len()));
            let tys = args[vals.len()..].iter().map(|a| frame.ty(*a).cloned());
            Some(self.va_area(f, &extra, &tys.collect::<R<Vec<_>>>()?)?)
        } else {
            None
        };
        Ok(Flow::Call { callee, args: vals, result, va_area })
    }
}

fn func_result(func: &Function, inst: Inst) -> Option<Value> {
    func.dfg.inst_result(inst)
}

/// Whether a call site's signature may call a function of signature `actual`.
fn compatible(site: &Signature, actual: &Signature) -> bool {
    let ptr_like = |a: &Type, b: &Type| a == b || (a.is_ptr() && b.is_ptr());
    site.ret.is_some() == actual.ret.is_some()
        && site.ret.iter().zip(&actual.ret).all(|(a, b)| ptr_like(a, b))
        && site.params.len() >= actual.params.len()
        && (site.params.len() == actual.params.len() || actual.varargs)
        && site.params.iter().zip(&actual.params).all(|(a, b)| ptr_like(a, b))
}

fn signature_text(sig: &Signature) -> String {
    let mut params: Vec<String> = sig.params.iter().map(Type::to_string).collect();
    if sig.varargs {
        params.push("...".into());
    }
    match &sig.ret {
        Some(ret) => format!("fn({}) -> {ret}", params.join(", ")),
        None => format!("fn({})", params.join(", ")),
    }
}

/// The type of a value passed from outside, for external calls made through the API.
pub(crate) fn type_of_val(v: &Val) -> Type {
    match v {
        Val::Int(_) => Type::I64,
        Val::F32(_) => Type::F32,
        Val::F64(_) => Type::F64,
        Val::Ptr(_) => Type::PTR,
        Val::Vector(lanes) => {
            Type::vector(lanes.first().map_or(Type::I64, type_of_val), lanes.len() as u32)
        }
        Val::Aggregate(fields) => Type::structure(fields.iter().map(type_of_val).collect(), false),
    }
}

fn length(len: u128) -> R<u64> {
    u64::try_from(len).map_err(|_| ErrorKind::OutOfMemory { size: u64::MAX })
}

fn lane(lanes: &[Val], index: u128) -> R<&Val> {
    usize::try_from(index)
        .ok()
        .and_then(|i| lanes.get(i))
        .ok_or(ErrorKind::LaneOutOfRange { index, lanes: lanes.len() })
}

fn element(v: &Val) -> R<&[Val]> {
    match v {
        Val::Aggregate(e) | Val::Vector(e) => Ok(e),
        other => Err(malformed(format!("index into {}", other.kind_name()))),
    }
}

fn element_mut(v: &mut Val) -> R<&mut Vec<Val>> {
    match v {
        Val::Aggregate(e) | Val::Vector(e) => Ok(e),
        other => Err(malformed(format!("index into {}", other.kind_name()))),
    }
}

/// Bitwise equality, as cmpxchg compares (pointers and integers).
fn same_bits(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::F32(x), Val::F32(y)) => x.to_bits() == y.to_bits(),
        (Val::F64(x), Val::F64(y)) => x.to_bits() == y.to_bits(),
        (Val::Ptr(x), Val::Int(y)) | (Val::Int(y), Val::Ptr(x)) => u128::from(*x) == *y,
        _ => a == b,
    }
}

fn atomic_op(op: AtomicRmwOp, ty: &Type, old: &Val, v: &Val) -> R<Val> {
    use AtomicRmwOp as A;
    let bin = |b: BinaryOp| value::binary(b, ty, old, v);
    match op {
        A::Xchg => Ok(v.clone()),
        A::Add => bin(BinaryOp::Add),
        A::Sub => bin(BinaryOp::Sub),
        A::And => bin(BinaryOp::And),
        A::Or => bin(BinaryOp::Or),
        A::Xor => bin(BinaryOp::Xor),
        A::Nand => {
            let and = bin(BinaryOp::And)?;
            let ones = value::map1(ty, &and, |t, _| {
                Ok(Val::Int(crate::constant::mask_to_width(u128::MAX, t.int_bits().unwrap_or(128))))
            })?;
            value::binary(BinaryOp::Xor, ty, &and, &ones)
        }
        A::Max => bin(BinaryOp::Smax),
        A::Min => bin(BinaryOp::Smin),
        A::Umax => bin(BinaryOp::Umax),
        A::Umin => bin(BinaryOp::Umin),
        A::Fadd => bin(BinaryOp::Fadd),
        A::Fsub => bin(BinaryOp::Fsub),
        A::Fmax => bin(BinaryOp::Fmaxnum),
        A::Fmin => bin(BinaryOp::Fminnum),
    }
}
