//! Non-terminator instructions: arithmetic with its flags, compares, casts, memory
//! (alloca, load/store, atomics), GEP -> `ptradd` with data-layout byte offsets, vector
//! and aggregate operations, and constant expressions materialized as instructions.
//! Calls are in `calls.rs`.

use adc_ir::{
    AtomicRmwOp, BinaryOp, CastOp, Constant, FloatCC, InstFlags, InstructionData as D, IntCC,
    Ordering, Type, UnaryOp, Value,
};
use llvm_ir::instruction::{Atomicity, MemoryOrdering, RMWBinOp};
use llvm_ir::{
    Constant as C, ConstantRef, FPPredicate, Instruction as I, IntPredicate, Name, Operand, TypeRef,
};

use crate::function::{fast_math_flags, FuncCtx, R};

pub fn int_cc(p: IntPredicate) -> IntCC {
    match p {
        IntPredicate::EQ => IntCC::Eq,
        IntPredicate::NE => IntCC::Ne,
        IntPredicate::UGT => IntCC::Ugt,
        IntPredicate::UGE => IntCC::Uge,
        IntPredicate::ULT => IntCC::Ult,
        IntPredicate::ULE => IntCC::Ule,
        IntPredicate::SGT => IntCC::Sgt,
        IntPredicate::SGE => IntCC::Sge,
        IntPredicate::SLT => IntCC::Slt,
        IntPredicate::SLE => IntCC::Sle,
    }
}

pub fn float_cc(p: FPPredicate) -> FloatCC {
    match p {
        FPPredicate::False => FloatCC::False,
        FPPredicate::OEQ => FloatCC::Oeq,
        FPPredicate::OGT => FloatCC::Ogt,
        FPPredicate::OGE => FloatCC::Oge,
        FPPredicate::OLT => FloatCC::Olt,
        FPPredicate::OLE => FloatCC::Ole,
        FPPredicate::ONE => FloatCC::One,
        FPPredicate::ORD => FloatCC::Ord,
        FPPredicate::UNO => FloatCC::Uno,
        FPPredicate::UEQ => FloatCC::Ueq,
        FPPredicate::UGT => FloatCC::Ugt,
        FPPredicate::UGE => FloatCC::Uge,
        FPPredicate::ULT => FloatCC::Ult,
        FPPredicate::ULE => FloatCC::Ule,
        FPPredicate::UNE => FloatCC::Une,
        FPPredicate::True => FloatCC::True,
    }
}

fn ordering(o: MemoryOrdering) -> Ordering {
    match o {
        MemoryOrdering::Unordered => Ordering::Unordered,
        MemoryOrdering::Monotonic | MemoryOrdering::NotAtomic => Ordering::Monotonic,
        MemoryOrdering::Acquire => Ordering::Acquire,
        MemoryOrdering::Release => Ordering::Release,
        MemoryOrdering::AcquireRelease => Ordering::AcqRel,
        MemoryOrdering::SequentiallyConsistent => Ordering::SeqCst,
    }
}

fn int_flags(nuw: bool, nsw: bool, exact: bool) -> InstFlags {
    let mut f = InstFlags::empty();
    if nuw {
        f.insert(InstFlags::NUW);
    }
    if nsw {
        f.insert(InstFlags::NSW);
    }
    if exact {
        f.insert(InstFlags::EXACT);
    }
    f
}

impl<'a> FuncCtx<'_, 'a> {
    pub fn convert_type(&self, ty: &TypeRef) -> R<Type> {
        crate::types::convert(&self.m.llvm.types, ty)
    }

    pub fn fmf(&self) -> InstFlags {
        fast_math_flags(self.extra.fast_math)
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        flags: InstFlags,
        a: &Operand,
        b: &Operand,
        dest: &'a Name,
    ) -> R<()> {
        let args = [self.operand(a)?, self.operand(b)?];
        let v = self.val(D::Binary { op, flags, args })?;
        self.define(dest, v);
        Ok(())
    }

    fn cast(&mut self, op: CastOp, x: &Operand, to: &TypeRef, dest: &'a Name) -> R<()> {
        let arg = self.operand(x)?;
        let ty = self.convert_type(to)?;
        let v = self.cast_value(op, arg, ty)?;
        self.define(dest, v);
        Ok(())
    }

    /// A cast; pointer-to-same-pointer bitcasts (left over from typed pointers) vanish.
    pub fn cast_value(&mut self, op: CastOp, arg: Value, ty: Type) -> R<Value> {
        if op == CastOp::Bitcast && self.ty(arg) == ty {
            return Ok(arg);
        }
        self.val(D::Cast { op, arg, ty })
    }

    /// An integer value as `i64` (sign-extended or truncated, as LLVM does for GEP indices).
    pub fn index_to_i64(&mut self, v: Value, signed: bool) -> R<Value> {
        let bits = self.ty(v).int_bits().ok_or("index is not an integer")?;
        match bits.cmp(&64) {
            std::cmp::Ordering::Equal => Ok(v),
            std::cmp::Ordering::Less => {
                self.cast_value(if signed { CastOp::Sext } else { CastOp::Zext }, v, Type::I64)
            }
            std::cmp::Ordering::Greater => self.cast_value(CastOp::Trunc, v, Type::I64),
        }
    }

    pub fn instruction(&mut self, inst: &'a I) -> R<()> {
        if let Some(result) = self.odd_width_instruction(inst) {
            return result;
        }
        match inst {
            I::Add(i) => self.binary(
                BinaryOp::Add,
                int_flags(i.nuw, i.nsw, false),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::Sub(i) => self.binary(
                BinaryOp::Sub,
                int_flags(i.nuw, i.nsw, false),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::Mul(i) => self.binary(
                BinaryOp::Mul,
                int_flags(i.nuw, i.nsw, false),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::UDiv(i) => self.binary(
                BinaryOp::Udiv,
                int_flags(false, false, i.exact),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::SDiv(i) => self.binary(
                BinaryOp::Sdiv,
                int_flags(false, false, i.exact),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::URem(i) => {
                self.binary(BinaryOp::Urem, InstFlags::empty(), &i.operand0, &i.operand1, &i.dest)
            }
            I::SRem(i) => {
                self.binary(BinaryOp::Srem, InstFlags::empty(), &i.operand0, &i.operand1, &i.dest)
            }
            I::And(i) => {
                self.binary(BinaryOp::And, InstFlags::empty(), &i.operand0, &i.operand1, &i.dest)
            }
            I::Or(i) => {
                let flags =
                    if self.extra.disjoint { InstFlags::DISJOINT } else { InstFlags::empty() };
                self.binary(BinaryOp::Or, flags, &i.operand0, &i.operand1, &i.dest)
            }
            I::Xor(i) => {
                self.binary(BinaryOp::Xor, InstFlags::empty(), &i.operand0, &i.operand1, &i.dest)
            }
            I::Shl(i) => self.binary(
                BinaryOp::Shl,
                int_flags(i.nuw, i.nsw, false),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::LShr(i) => self.binary(
                BinaryOp::Lshr,
                int_flags(false, false, i.exact),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::AShr(i) => self.binary(
                BinaryOp::Ashr,
                int_flags(false, false, i.exact),
                &i.operand0,
                &i.operand1,
                &i.dest,
            ),
            I::FAdd(i) => {
                self.binary(BinaryOp::Fadd, self.fmf(), &i.operand0, &i.operand1, &i.dest)
            }
            I::FSub(i) => {
                self.binary(BinaryOp::Fsub, self.fmf(), &i.operand0, &i.operand1, &i.dest)
            }
            I::FMul(i) => {
                self.binary(BinaryOp::Fmul, self.fmf(), &i.operand0, &i.operand1, &i.dest)
            }
            I::FDiv(i) => {
                self.binary(BinaryOp::Fdiv, self.fmf(), &i.operand0, &i.operand1, &i.dest)
            }
            I::FRem(i) => {
                self.binary(BinaryOp::Frem, self.fmf(), &i.operand0, &i.operand1, &i.dest)
            }
            I::FNeg(i) => {
                let arg = self.operand(&i.operand)?;
                let v = self.val(D::Unary { op: UnaryOp::Fneg, flags: self.fmf(), arg })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::ExtractElement(i) => {
                let vector = self.operand(&i.vector)?;
                let index = self.operand(&i.index)?;
                let v = self.val(D::ExtractLane { vector, index })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::InsertElement(i) => {
                let vector = self.operand(&i.vector)?;
                let value = self.operand(&i.element)?;
                let index = self.operand(&i.index)?;
                let v = self.val(D::InsertLane { vector, value, index })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::ShuffleVector(i) => {
                let args = [self.operand(&i.operand0)?, self.operand(&i.operand1)?];
                let mask = shuffle_mask(&self.m.llvm.types, &i.mask)?;
                let v = self.val(D::Shuffle { args, mask })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::ExtractValue(i) => {
                let aggregate = self.operand(&i.aggregate)?;
                let v = self.val(D::ExtractValue { aggregate, indices: i.indices.clone() })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::InsertValue(i) => {
                let aggregate = self.operand(&i.aggregate)?;
                let value = self.operand(&i.element)?;
                let v =
                    self.val(D::InsertValue { aggregate, value, indices: i.indices.clone() })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Alloca(i) => {
                let ty = self.convert_type(&i.allocated_type)?;
                let count = match i.num_elements.as_constant() {
                    Some(C::Int { value: 1, .. }) => None,
                    _ => {
                        let n = self.operand(&i.num_elements)?;
                        Some(self.index_to_i64(n, false)?)
                    }
                };
                let v = self.val(D::Alloca { ty, count, align: i.alignment.max(1) })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Load(i) => {
                let ty = self.convert_type(&i.loaded_ty)?;
                let ptr = self.operand(&i.address)?;
                let order = i.atomicity.as_ref().map(|a| ordering(a.mem_ordering));
                if order == Some(Ordering::SeqCst) {
                    self.ins(D::Fence { ordering: Ordering::SeqCst });
                }
                let (inst, v) =
                    self.ins(D::Load { ty, ptr, align: i.alignment.max(1), volatile: i.volatile });
                self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
                // An atomic load is a load plus the fence its ordering implies; adc has no
                // atomic loads (C programs rarely use them, kernels use atomicrmw).
                if matches!(order, Some(Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst)) {
                    self.ins(D::Fence { ordering: Ordering::Acquire });
                }
                self.define(&i.dest, v.ok_or("load without result")?);
                Ok(())
            }
            I::Store(i) => {
                let value = self.operand(&i.value)?;
                let ptr = self.operand(&i.address)?;
                let order = i.atomicity.as_ref().map(|a| ordering(a.mem_ordering));
                if matches!(order, Some(Ordering::Release | Ordering::AcqRel | Ordering::SeqCst)) {
                    self.ins(D::Fence { ordering: Ordering::Release });
                }
                let (inst, _) = self.ins(D::Store {
                    value,
                    ptr,
                    align: i.alignment.max(1),
                    volatile: i.volatile,
                });
                self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
                if order == Some(Ordering::SeqCst) {
                    self.ins(D::Fence { ordering: Ordering::SeqCst });
                }
                Ok(())
            }
            I::Fence(i) => {
                self.ins(D::Fence { ordering: ordering(i.atomicity.mem_ordering) });
                Ok(())
            }
            I::CmpXchg(i) => {
                let ptr = self.operand(&i.address)?;
                let expected = self.operand(&i.expected)?;
                let new = self.operand(&i.replacement)?;
                let v = self.val(D::CmpXchg {
                    ptr,
                    expected,
                    new,
                    success: ordering(i.atomicity.mem_ordering),
                    failure: ordering(i.failure_memory_ordering),
                    weak: i.weak,
                    volatile: i.volatile,
                })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::AtomicRMW(i) => {
                let op = rmw_op(&i.operation)?;
                let ptr = self.operand(&i.address)?;
                let value = self.operand(&i.value)?;
                let Atomicity { mem_ordering, .. } = &i.atomicity;
                let v = self.val(D::AtomicRmw {
                    op,
                    ptr,
                    value,
                    ordering: ordering(*mem_ordering),
                    volatile: i.volatile,
                })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::GetElementPtr(i) => {
                let base = self.operand(&i.address)?;
                let v = self.gep(base, &i.source_element_type, &i.indices, i.in_bounds)?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Trunc(i) => self.cast(CastOp::Trunc, &i.operand, &i.to_type, &i.dest),
            I::ZExt(i) => self.cast(CastOp::Zext, &i.operand, &i.to_type, &i.dest),
            I::SExt(i) => self.cast(CastOp::Sext, &i.operand, &i.to_type, &i.dest),
            I::FPTrunc(i) => self.cast(CastOp::Fptrunc, &i.operand, &i.to_type, &i.dest),
            I::FPExt(i) => self.cast(CastOp::Fpext, &i.operand, &i.to_type, &i.dest),
            I::FPToUI(i) => self.cast(CastOp::Fptoui, &i.operand, &i.to_type, &i.dest),
            I::FPToSI(i) => self.cast(CastOp::Fptosi, &i.operand, &i.to_type, &i.dest),
            I::UIToFP(i) => self.cast(CastOp::Uitofp, &i.operand, &i.to_type, &i.dest),
            I::SIToFP(i) => self.cast(CastOp::Sitofp, &i.operand, &i.to_type, &i.dest),
            I::PtrToInt(i) => self.cast(CastOp::Ptrtoint, &i.operand, &i.to_type, &i.dest),
            I::IntToPtr(i) => self.cast(CastOp::Inttoptr, &i.operand, &i.to_type, &i.dest),
            I::BitCast(i) => self.cast(CastOp::Bitcast, &i.operand, &i.to_type, &i.dest),
            I::AddrSpaceCast(i) => {
                self.cast(CastOp::Addrspacecast, &i.operand, &i.to_type, &i.dest)
            }
            I::ICmp(i) => {
                let args = [self.operand(&i.operand0)?, self.operand(&i.operand1)?];
                let v = self.val(D::Icmp { cond: int_cc(i.predicate), args })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::FCmp(i) => {
                let args = [self.operand(&i.operand0)?, self.operand(&i.operand1)?];
                let v =
                    self.val(D::Fcmp { cond: float_cc(i.predicate), flags: self.fmf(), args })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Phi(_) => Err("phi after a non-phi instruction".into()),
            I::Select(i) => {
                let args = [
                    self.operand(&i.condition)?,
                    self.operand(&i.true_value)?,
                    self.operand(&i.false_value)?,
                ];
                let v = self.val(D::Select { flags: self.fmf(), args })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Freeze(i) => {
                let arg = self.operand(&i.operand)?;
                let v =
                    self.val(D::Unary { op: UnaryOp::Freeze, flags: InstFlags::empty(), arg })?;
                self.define(&i.dest, v);
                Ok(())
            }
            I::Call(call) => self.call(call),
            I::VAArg(_) => Err("the LLVM `va_arg` instruction is not supported: adc implements the x86-64 `va_list` that clang reads with explicit loads (clang never emits `va_arg` for x86-64)".into()),
            I::LandingPad(_) | I::CatchPad(_) | I::CleanupPad(_) => {
                Err("exception handling (landingpad/catchpad/cleanuppad) is not supported".into())
            }
        }
    }

    /// GEP -> one `ptradd`: constant indices fold into one byte offset, each variable
    /// index becomes `index * element size` (indices sign-extended or truncated to i64).
    /// A vector GEP (a vector of pointers, or vector indices: clang -O2's vectorizer
    /// builds its runtime alias checks from them) becomes one scalar GEP per lane.
    pub fn gep(
        &mut self,
        base: Value,
        source: &TypeRef,
        indices: &[Operand],
        in_bounds: bool,
    ) -> R<Value> {
        let mut lanes = self.ty(base).is_vector().then(|| self.ty(base).lanes());
        let mut steps = Vec::with_capacity(indices.len());
        for index in indices {
            let step = self.gep_index(index)?;
            if let GepIndex::Lanes(l) = &step {
                lanes = Some(l.len() as u32);
            }
            steps.push(step);
        }
        let Some(lanes) = lanes else {
            return self.scalar_gep(base, source, &steps, in_bounds);
        };
        let ty = Type::vector(self.ty(base).lane_type().clone(), lanes);
        let mut result = self.constant(ty, Constant::Undef);
        for lane in 0..lanes {
            let at = self.iconst(&Type::I32, i128::from(lane));
            let lane_base = if self.ty(base).is_vector() {
                self.val(D::ExtractLane { vector: base, index: at })?
            } else {
                base
            };
            let mut lane_steps = Vec::with_capacity(steps.len());
            for step in &steps {
                lane_steps.push(match step {
                    GepIndex::Lanes(values) => GepIndex::Constant(values[lane as usize]),
                    GepIndex::Value(v) if self.ty(*v).is_vector() => {
                        GepIndex::Value(self.val(D::ExtractLane { vector: *v, index: at })?)
                    }
                    scalar => scalar.clone(),
                });
            }
            let value = self.scalar_gep(lane_base, source, &lane_steps, in_bounds)?;
            result = self.val(D::InsertLane { vector: result, value, index: at })?;
        }
        Ok(result)
    }

    /// One GEP index: a constant (sign-extended to 64 bits), a vector constant's lanes, or
    /// a value (vector values are split per lane by the caller).
    fn gep_index(&mut self, index: &Operand) -> R<GepIndex> {
        let lane = |c: &C| match c {
            C::Int { bits, value } => {
                Ok(adc_ir::constant::sign_extend(u128::from(*value), (*bits).min(64)) as i64)
            }
            // A poison lane's address is never used: any offset does.
            C::Undef(_) | C::Poison(_) => Ok(0),
            other => Err(format!("GEP index lane `{other}` is not an integer constant")),
        };
        match index.as_constant() {
            Some(c @ C::Int { .. }) => lane(c).map(GepIndex::Constant),
            Some(C::Vector(elements)) => {
                Ok(GepIndex::Lanes(elements.iter().map(|e| lane(e)).collect::<R<Vec<_>>>()?))
            }
            Some(C::AggregateZero(ty)) => match ty.as_ref() {
                llvm_ir::Type::VectorType { num_elements, .. } => {
                    Ok(GepIndex::Lanes(vec![0; *num_elements]))
                }
                _ => Err("GEP index is a zero aggregate that is not a vector".into()),
            },
            _ => Ok(GepIndex::Value(self.operand(index)?)),
        }
    }

    fn scalar_gep(
        &mut self,
        base: Value,
        source: &TypeRef,
        indices: &[GepIndex],
        in_bounds: bool,
    ) -> R<Value> {
        let mut ty = self.convert_type(source)?;
        let mut constant: i64 = 0;
        let mut variable: Option<Value> = None;
        // The array (of two or more elements: `[1 x T]` and `[0 x T]` are how C spells
        // trailing flexible arrays) that the first variable index after the pointer step
        // selects in, as a byte range from the base; `None` once that is not knowable.
        let mut bounds: Option<(u64, u64)> = None;
        let mut bounded_so_far = true;
        for (k, index) in indices.iter().enumerate() {
            let (scale, next) = if k == 0 {
                (ty.size() as i64, ty.clone())
            } else {
                match &ty {
                    Type::Struct(_) => {
                        let &GepIndex::Constant(field) = index else {
                            return Err("struct GEP index is not a constant".into());
                        };
                        let field = field as u64;
                        let offset =
                            ty.element_offset(field).ok_or("struct GEP index out of range")?;
                        constant = constant.wrapping_add(offset as i64);
                        ty = ty.element_type(field).ok_or("struct GEP index out of range")?.clone();
                        continue;
                    }
                    Type::Array(elem, _) | Type::Vector(elem, _) => {
                        (elem.size() as i64, (**elem).clone())
                    }
                    other => return Err(format!("GEP indexes into non-aggregate type {other}")),
                }
            };
            match index {
                &GepIndex::Constant(k) => {
                    constant = constant.wrapping_add(k.wrapping_mul(scale));
                }
                GepIndex::Lanes(_) => return Err("vector GEP index left unsplit".into()),
                &GepIndex::Value(v) => {
                    if bounded_so_far && variable.is_none() {
                        bounds = match (&ty, u64::try_from(constant)) {
                            (Type::Array(elem, n), Ok(start)) if k > 0 && in_bounds && *n >= 2 => {
                                Some((start, start + n * elem.size()))
                            }
                            _ => None,
                        };
                        bounded_so_far = false;
                    }
                    if self.ty(v).is_vector() {
                        return Err("vector GEP index left unsplit".into());
                    }
                    let v = self.index_to_i64(v, true)?;
                    let term = if scale == 1 {
                        v
                    } else {
                        let s = self.iconst(&Type::I64, i128::from(scale));
                        let flags = if in_bounds { InstFlags::NSW } else { InstFlags::empty() };
                        self.val(D::Binary { op: BinaryOp::Mul, flags, args: [v, s] })?
                    };
                    variable = Some(match variable {
                        None => term,
                        Some(acc) => self.val(D::Binary {
                            op: BinaryOp::Add,
                            flags: InstFlags::empty(),
                            args: [acc, term],
                        })?,
                    });
                }
            }
            ty = next;
        }
        let offset = match (variable, constant) {
            (None, 0) => return Ok(base),
            (None, c) => self.iconst(&Type::I64, i128::from(c)),
            (Some(v), 0) => v,
            (Some(v), c) => {
                let c = self.iconst(&Type::I64, i128::from(c));
                self.val(D::Binary { op: BinaryOp::Add, flags: InstFlags::empty(), args: [v, c] })?
            }
        };
        let flags = if in_bounds { InstFlags::INBOUNDS } else { InstFlags::empty() };
        let (inst, result) = self.ins(D::PtrAdd { flags, ptr: base, offset });
        self.func.dfg.index_bounds[inst] = bounds;
        result.ok_or_else(|| "`ptradd` with ill-typed operands".into())
    }

    /// A constant operand as a value: folded data becomes one `const`; other constant
    /// expressions are computed by instructions.
    pub fn materialize(&mut self, c: &ConstantRef) -> R<Value> {
        let ty = self.m.constant_type(c)?;
        if let Some(k) = self.m.fold(c, false)? {
            return Ok(self.constant(ty, k));
        }
        let cast = |op: CastOp, x: &ConstantRef, to: &TypeRef, cx: &mut Self| -> R<Value> {
            let v = cx.const_value(x)?;
            let to = cx.convert_type(to)?;
            cx.cast_value(op, v, to)
        };
        match c.as_ref() {
            C::GetElementPtr(g) => {
                let base = self.const_value(&g.address)?;
                let offset = self.m.const_gep_offset(c)?;
                if offset == 0 {
                    return Ok(base);
                }
                let offset = self.iconst(&Type::I64, i128::from(offset));
                let flags = if g.in_bounds { InstFlags::INBOUNDS } else { InstFlags::empty() };
                self.val(D::PtrAdd { flags, ptr: base, offset })
            }
            C::Trunc(x) => cast(CastOp::Trunc, &x.operand, &x.to_type, self),
            C::PtrToInt(x) => cast(CastOp::Ptrtoint, &x.operand, &x.to_type, self),
            C::IntToPtr(x) => cast(CastOp::Inttoptr, &x.operand, &x.to_type, self),
            C::BitCast(x) => cast(CastOp::Bitcast, &x.operand, &x.to_type, self),
            C::AddrSpaceCast(x) => cast(CastOp::Addrspacecast, &x.operand, &x.to_type, self),
            C::Add(x) => self.const_binary(BinaryOp::Add, &x.operand0, &x.operand1),
            C::Sub(x) => self.const_binary(BinaryOp::Sub, &x.operand0, &x.operand1),
            C::Mul(x) => self.const_binary(BinaryOp::Mul, &x.operand0, &x.operand1),
            C::Xor(x) => self.const_binary(BinaryOp::Xor, &x.operand0, &x.operand1),
            C::ExtractElement(x) => {
                let vector = self.const_value(&x.vector)?;
                let index = self.const_value(&x.index)?;
                self.val(D::ExtractLane { vector, index })
            }
            C::InsertElement(x) => {
                let vector = self.const_value(&x.vector)?;
                let value = self.const_value(&x.element)?;
                let index = self.const_value(&x.index)?;
                self.val(D::InsertLane { vector, value, index })
            }
            C::ShuffleVector(x) => {
                let args = [self.const_value(&x.operand0)?, self.const_value(&x.operand1)?];
                let mask = shuffle_mask(&self.m.llvm.types, &x.mask)?;
                self.val(D::Shuffle { args, mask })
            }
            C::Vector(elems) => {
                let mut acc = self.constant(ty, Constant::Undef);
                for (k, e) in elems.iter().enumerate() {
                    let value = self.const_value(e)?;
                    let index = self.iconst(&Type::I32, k as i128);
                    acc = self.val(D::InsertLane { vector: acc, value, index })?;
                }
                Ok(acc)
            }
            C::Struct { values: elems, .. } | C::Array { elements: elems, .. } => {
                let mut acc = self.constant(ty, Constant::Undef);
                for (k, e) in elems.iter().enumerate() {
                    let value = self.const_value(e)?;
                    acc = self.val(D::InsertValue {
                        aggregate: acc,
                        value,
                        indices: vec![k as u32],
                    })?;
                }
                Ok(acc)
            }
            other => Err(format!("constant expression `{other}` is not supported")),
        }
    }

    fn const_binary(&mut self, op: BinaryOp, a: &ConstantRef, b: &ConstantRef) -> R<Value> {
        let args = [self.const_value(a)?, self.const_value(b)?];
        self.val(D::Binary { op, flags: InstFlags::empty(), args })
    }
}

/// A GEP index as the importer splits it (see `gep_index`).
#[derive(Clone)]
enum GepIndex {
    Constant(i64),
    /// A constant vector index: one constant per lane.
    Lanes(Vec<i64>),
    Value(Value),
}

fn rmw_op(op: &RMWBinOp) -> R<AtomicRmwOp> {
    Ok(match op {
        RMWBinOp::Xchg => AtomicRmwOp::Xchg,
        RMWBinOp::Add => AtomicRmwOp::Add,
        RMWBinOp::Sub => AtomicRmwOp::Sub,
        RMWBinOp::And => AtomicRmwOp::And,
        RMWBinOp::Nand => AtomicRmwOp::Nand,
        RMWBinOp::Or => AtomicRmwOp::Or,
        RMWBinOp::Xor => AtomicRmwOp::Xor,
        RMWBinOp::Max => AtomicRmwOp::Max,
        RMWBinOp::Min => AtomicRmwOp::Min,
        RMWBinOp::UMax => AtomicRmwOp::Umax,
        RMWBinOp::UMin => AtomicRmwOp::Umin,
        RMWBinOp::FAdd => AtomicRmwOp::Fadd,
        RMWBinOp::FSub => AtomicRmwOp::Fsub,
        RMWBinOp::FMax => AtomicRmwOp::Fmax,
        RMWBinOp::FMin => AtomicRmwOp::Fmin,
        other => return Err(format!("atomicrmw {other} is not supported")),
    })
}

/// A shufflevector mask constant -> lane indices (`None` for undef/poison lanes).
fn shuffle_mask(types: &llvm_ir::types::Types, mask: &ConstantRef) -> R<Vec<Option<u32>>> {
    match mask.as_ref() {
        C::Vector(lanes) => lanes
            .iter()
            .map(|l| match l.as_ref() {
                C::Int { value, .. } => Ok(Some(*value as u32)),
                C::Undef(_) | C::Poison(_) => Ok(None),
                other => Err(format!("shuffle mask lane `{other}` is not a constant")),
            })
            .collect(),
        C::AggregateZero(_) | C::Undef(_) | C::Poison(_) => {
            let llvm_ir::Type::VectorType { num_elements, .. } =
                types.type_of(mask).as_ref().clone()
            else {
                return Err("shuffle mask is not a vector".into());
            };
            let lane = if matches!(mask.as_ref(), C::AggregateZero(_)) { Some(0) } else { None };
            Ok(vec![lane; num_elements])
        }
        other => Err(format!("shuffle mask `{other}` is not supported")),
    }
}
