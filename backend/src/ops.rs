//! Scalar (per-lane) operations with adc's defined semantics, matching the interpreter:
//! integers wrap, shift amounts are taken modulo the width (Cranelift's shifts already do),
//! float-to-int casts saturate with NaN -> 0, `fminnum`/`fmaxnum` return the non-NaN
//! operand, `i1` values are `I8` 0/1 (signed operations first turn them into 0/-1).

use adc_ir::{AtomicRmwOp, BinaryOp, CastOp, FloatCC, IntCC, ReduceOp, Signature, Type, UnaryOp};
use cranelift_codegen::ir::{self, condcodes, types, InstBuilder};
use cranelift_module::Module as ClModule;

use crate::abi::scalar;
use crate::lower::{mem, Lower, R};

fn int_cc(cc: IntCC) -> condcodes::IntCC {
    use condcodes::IntCC as C;
    match cc {
        IntCC::Eq => C::Equal,
        IntCC::Ne => C::NotEqual,
        IntCC::Ugt => C::UnsignedGreaterThan,
        IntCC::Uge => C::UnsignedGreaterThanOrEqual,
        IntCC::Ult => C::UnsignedLessThan,
        IntCC::Ule => C::UnsignedLessThanOrEqual,
        IntCC::Sgt => C::SignedGreaterThan,
        IntCC::Sge => C::SignedGreaterThanOrEqual,
        IntCC::Slt => C::SignedLessThan,
        IntCC::Sle => C::SignedLessThanOrEqual,
    }
}

fn is_signed(cc: IntCC) -> bool {
    matches!(cc, IntCC::Sgt | IntCC::Sge | IntCC::Slt | IntCC::Sle)
}

impl<M: ClModule> Lower<'_, '_, M> {
    /// An `i1` (0/1 in an `I8`) as a signed `I8` (0/-1).
    fn sx1(&mut self, lane: &Type, x: ir::Value) -> ir::Value {
        if *lane == Type::I1 {
            self.b.ins().ineg(x)
        } else {
            x
        }
    }

    fn libm(&mut self, name: &str, lane: &Type, args: &[ir::Value]) -> R<ir::Value> {
        let name = if *lane == Type::F32 { format!("{name}f") } else { name.to_string() };
        let sig = Signature::new(vec![lane.clone(); args.len()], Some(lane.clone()));
        let r = self.call_external(&name, &sig, args)?;
        r.first().copied().ok_or_else(|| format!("@{name} returned nothing"))
    }

    pub fn unary(&mut self, op: UnaryOp, lane: &Type, x: ir::Value) -> R<ir::Value> {
        let i1 = *lane == Type::I1;
        let ins = self.b.ins();
        Ok(match op {
            UnaryOp::Fneg => ins.fneg(x),
            UnaryOp::Fabs => ins.fabs(x),
            UnaryOp::Sqrt => ins.sqrt(x),
            UnaryOp::Floor => ins.floor(x),
            UnaryOp::Ceil => ins.ceil(x),
            UnaryOp::Ftrunc => ins.trunc(x),
            UnaryOp::Roundeven => ins.nearest(x),
            UnaryOp::Round => {
                // Half away from zero, inline: the module may define its own `round`.
                let t = ins.trunc(x);
                let diff = self.b.ins().fsub(x, t);
                let diff = self.b.ins().fabs(diff);
                let (half, one) = if *lane == Type::F32 {
                    (self.b.ins().f32const(0.5), self.b.ins().f32const(1.0))
                } else {
                    (self.b.ins().f64const(0.5), self.b.ins().f64const(1.0))
                };
                let away = self.b.ins().fcmp(condcodes::FloatCC::GreaterThanOrEqual, diff, half);
                let step = self.b.ins().fcopysign(one, x);
                let bumped = self.b.ins().fadd(t, step);
                self.b.ins().select(away, bumped, t)
            }
            UnaryOp::Ctpop => ins.popcnt(x),
            UnaryOp::Ctlz | UnaryOp::Cttz if i1 => ins.bxor_imm_s(x, 1),
            UnaryOp::Ctlz => ins.clz(x),
            UnaryOp::Cttz => ins.ctz(x),
            UnaryOp::Bswap if matches!(lane, Type::I1 | Type::I8) => x,
            UnaryOp::Bswap => ins.bswap(x),
            UnaryOp::Bitreverse if i1 => x,
            UnaryOp::Bitreverse => ins.bitrev(x),
            UnaryOp::Iabs if i1 => x,
            UnaryOp::Iabs => {
                let neg = ins.ineg(x);
                let is_neg = self.b.ins().icmp_imm_s(condcodes::IntCC::SignedLessThan, x, 0);
                self.b.ins().select(is_neg, neg, x)
            }
            UnaryOp::Freeze => x,
        })
    }

    pub fn binary(
        &mut self,
        op: BinaryOp,
        lane: &Type,
        a: ir::Value,
        b: ir::Value,
    ) -> R<ir::Value> {
        use condcodes::IntCC as C;
        let i1 = *lane == Type::I1;
        let r = match op {
            BinaryOp::Add => self.b.ins().iadd(a, b),
            BinaryOp::Sub => self.b.ins().isub(a, b),
            BinaryOp::Mul => self.b.ins().imul(a, b),
            BinaryOp::Udiv | BinaryOp::Urem | BinaryOp::Sdiv | BinaryOp::Srem
                if *lane == Type::I128 =>
            {
                // Cranelift has no 128-bit division on x86-64: libgcc/compiler-rt's.
                let name = match op {
                    BinaryOp::Udiv => "__udivti3",
                    BinaryOp::Urem => "__umodti3",
                    BinaryOp::Sdiv => "__divti3",
                    _ => "__modti3",
                };
                let sig = Signature::new(vec![Type::I128, Type::I128], Some(Type::I128));
                let r = self.call_external(name, &sig, &[a, b])?;
                r.first().copied().ok_or("no result")?
            }
            BinaryOp::Udiv => self.b.ins().udiv(a, b),
            BinaryOp::Urem => self.b.ins().urem(a, b),
            BinaryOp::Sdiv | BinaryOp::Srem => {
                let (x, y) = (self.sx1(lane, a), self.sx1(lane, b));
                if op == BinaryOp::Sdiv {
                    self.b.ins().sdiv(x, y)
                } else {
                    self.b.ins().srem(x, y)
                }
            }
            BinaryOp::Shl | BinaryOp::Lshr | BinaryOp::Ashr if i1 => a,
            BinaryOp::Shl => self.b.ins().ishl(a, b),
            BinaryOp::Lshr => self.b.ins().ushr(a, b),
            BinaryOp::Ashr => self.b.ins().sshr(a, b),
            BinaryOp::And => self.b.ins().band(a, b),
            BinaryOp::Or => self.b.ins().bor(a, b),
            BinaryOp::Xor => self.b.ins().bxor(a, b),
            BinaryOp::Smin | BinaryOp::Smax | BinaryOp::Umin | BinaryOp::Umax => {
                let (x, y) = match op {
                    BinaryOp::Smin | BinaryOp::Smax => (self.sx1(lane, a), self.sx1(lane, b)),
                    _ => (a, b),
                };
                let cc = match op {
                    BinaryOp::Smin => C::SignedLessThan,
                    BinaryOp::Smax => C::SignedGreaterThan,
                    BinaryOp::Umin => C::UnsignedLessThan,
                    _ => C::UnsignedGreaterThan,
                };
                let pick_a = self.b.ins().icmp(cc, x, y);
                self.b.ins().select(pick_a, a, b)
            }
            BinaryOp::Fadd => self.b.ins().fadd(a, b),
            BinaryOp::Fsub => self.b.ins().fsub(a, b),
            BinaryOp::Fmul => self.b.ins().fmul(a, b),
            BinaryOp::Fdiv => self.b.ins().fdiv(a, b),
            BinaryOp::Frem => self.libm("fmod", lane, &[a, b])?,
            BinaryOp::Fminnum => self.fminmax(a, b, false),
            BinaryOp::Fmaxnum => self.fminmax(a, b, true),
            BinaryOp::Copysign => self.b.ins().fcopysign(a, b),
        };
        let masks = matches!(
            op,
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Sdiv | BinaryOp::Srem
        );
        Ok(if i1 && masks { self.b.ins().band_imm_s(r, 1) } else { r })
    }

    /// IEEE minNum/maxNum: a NaN operand yields the other one; `-0.0 < +0.0`.
    pub fn fminmax(&mut self, a: ir::Value, b: ir::Value, max: bool) -> ir::Value {
        use condcodes::FloatCC as F;
        let m = if max { self.b.ins().fmax(a, b) } else { self.b.ins().fmin(a, b) };
        let a_nan = self.b.ins().fcmp(F::Unordered, a, a);
        let b_nan = self.b.ins().fcmp(F::Unordered, b, b);
        let r = self.b.ins().select(b_nan, a, m);
        self.b.ins().select(a_nan, b, r)
    }

    pub fn icmp(&mut self, cc: IntCC, lane: &Type, a: ir::Value, b: ir::Value) -> ir::Value {
        let (a, b) = if is_signed(cc) { (self.sx1(lane, a), self.sx1(lane, b)) } else { (a, b) };
        self.b.ins().icmp(int_cc(cc), a, b)
    }

    pub fn fcmp(&mut self, cc: FloatCC, a: ir::Value, b: ir::Value) -> ir::Value {
        use condcodes::FloatCC as F;
        let c = match cc {
            FloatCC::False => return self.b.ins().iconst(types::I8, 0),
            FloatCC::True => return self.b.ins().iconst(types::I8, 1),
            FloatCC::Oeq => F::Equal,
            FloatCC::Ogt => F::GreaterThan,
            FloatCC::Oge => F::GreaterThanOrEqual,
            FloatCC::Olt => F::LessThan,
            FloatCC::Ole => F::LessThanOrEqual,
            FloatCC::One => F::OrderedNotEqual,
            FloatCC::Ord => F::Ordered,
            FloatCC::Ueq => F::UnorderedOrEqual,
            FloatCC::Ugt => F::UnorderedOrGreaterThan,
            FloatCC::Uge => F::UnorderedOrGreaterThanOrEqual,
            FloatCC::Ult => F::UnorderedOrLessThan,
            FloatCC::Ule => F::UnorderedOrLessThanOrEqual,
            FloatCC::Une => F::NotEqual,
            FloatCC::Uno => F::Unordered,
        };
        self.b.ins().fcmp(c, a, b)
    }

    pub fn cast(&mut self, op: CastOp, arg: adc_ir::Value, to: &Type) -> R<Vec<ir::Value>> {
        let from = self.ty(arg).clone();
        let leaves = self.get(arg)?;
        if op == CastOp::Bitcast {
            return self.bitcast(&from, &leaves, to);
        }
        let (fl, tl) = (from.lane_type().clone(), to.lane_type().clone());
        let mut out = Vec::new();
        for x in leaves {
            out.push(self.cast_lane(op, &fl, &tl, x)?);
        }
        Ok(out)
    }

    fn cast_lane(&mut self, op: CastOp, from: &Type, to: &Type, x: ir::Value) -> R<ir::Value> {
        let tcl = self.cl(to)?;
        let fcl = self.cl(from)?;
        Ok(match op {
            CastOp::Zext | CastOp::Ptrtoint | CastOp::Inttoptr => {
                if tcl == fcl {
                    if *to == Type::I1 && *from != Type::I1 {
                        self.b.ins().band_imm_s(x, 1)
                    } else {
                        x
                    }
                } else if tcl.bits() > fcl.bits() {
                    self.b.ins().uextend(tcl, x)
                } else {
                    let r = self.b.ins().ireduce(tcl, x);
                    if *to == Type::I1 {
                        self.b.ins().band_imm_s(r, 1)
                    } else {
                        r
                    }
                }
            }
            CastOp::Sext => {
                let x = self.sx1(from, x);
                if tcl == fcl {
                    x
                } else {
                    self.b.ins().sextend(tcl, x)
                }
            }
            CastOp::Trunc => {
                let r = if tcl == fcl { x } else { self.b.ins().ireduce(tcl, x) };
                if *to == Type::I1 {
                    self.b.ins().band_imm_s(r, 1)
                } else {
                    r
                }
            }
            CastOp::Fptosi | CastOp::Fptoui => self.float_to_int(op == CastOp::Fptosi, to, x)?,
            CastOp::Sitofp | CastOp::Uitofp => {
                let signed = op == CastOp::Sitofp;
                let x = match from {
                    Type::I128 => {
                        let name = match (signed, to) {
                            (true, Type::F32) => "__floattisf",
                            (true, _) => "__floattidf",
                            (false, Type::F32) => "__floatuntisf",
                            (false, _) => "__floatuntidf",
                        };
                        let sig = Signature::new(vec![Type::I128], Some(to.clone()));
                        let r = self.call_external(name, &sig, &[x])?;
                        return r.first().copied().ok_or_else(|| "no result".to_string());
                    }
                    Type::I1 | Type::I8 | Type::I16 => {
                        let x = if signed { self.sx1(from, x) } else { x };
                        if signed {
                            self.b.ins().sextend(types::I32, x)
                        } else {
                            self.b.ins().uextend(types::I32, x)
                        }
                    }
                    _ => x,
                };
                if signed {
                    self.b.ins().fcvt_from_sint(tcl, x)
                } else {
                    self.b.ins().fcvt_from_uint(tcl, x)
                }
            }
            CastOp::Fpext => self.b.ins().fpromote(tcl, x),
            CastOp::Fptrunc => self.b.ins().fdemote(tcl, x),
            CastOp::Addrspacecast => x,
            CastOp::Bitcast => return Err("bitcast is not per lane".into()),
        })
    }

    /// Saturating float-to-int conversion to any width (NaN gives 0).
    fn float_to_int(&mut self, signed: bool, to: &Type, x: ir::Value) -> R<ir::Value> {
        use condcodes::IntCC as C;
        let (lo, hi): (i64, i64) = match (to, signed) {
            (Type::I32 | Type::I64, _) => {
                let tcl = self.cl(to)?;
                return Ok(if signed {
                    self.b.ins().fcvt_to_sint_sat(tcl, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(tcl, x)
                });
            }
            (Type::I128, _) => return self.float_to_i128(signed, x),
            (Type::I1, true) => (-1, 0),
            (Type::I1, false) => (0, 1),
            (Type::I8, true) => (-128, 127),
            (Type::I8, false) => (0, 255),
            (Type::I16, true) => (-32768, 32767),
            (Type::I16, false) => (0, 65535),
            _ => return Err(format!("float to {to}")),
        };
        let wide = if signed {
            self.b.ins().fcvt_to_sint_sat(types::I32, x)
        } else {
            self.b.ins().fcvt_to_uint_sat(types::I32, x)
        };
        let (lt, gt) = if signed {
            (C::SignedLessThan, C::SignedGreaterThan)
        } else {
            (C::UnsignedLessThan, C::UnsignedGreaterThan)
        };
        let lo_v = self.b.ins().iconst(types::I32, lo);
        let hi_v = self.b.ins().iconst(types::I32, hi);
        let below = self.b.ins().icmp(lt, wide, lo_v);
        let r = self.b.ins().select(below, lo_v, wide);
        let above = self.b.ins().icmp(gt, r, hi_v);
        let r = self.b.ins().select(above, hi_v, r);
        let tcl = self.cl(to)?;
        let r = self.b.ins().ireduce(tcl, r);
        Ok(if *to == Type::I1 { self.b.ins().band_imm_s(r, 1) } else { r })
    }

    /// Saturating float -> i128 through libgcc's `__fix*ti`, which is undefined out of
    /// range: the saturation and NaN -> 0 happen here.
    fn float_to_i128(&mut self, signed: bool, x: ir::Value) -> R<ir::Value> {
        use condcodes::FloatCC as F;
        let fty = self.b.func.dfg.value_type(x);
        let is_f32 = fty == types::F32;
        let lane = if is_f32 { Type::F32 } else { Type::F64 };
        let c = |b: &mut cranelift_frontend::FunctionBuilder, v: f64| {
            if is_f32 {
                b.ins().f32const(v as f32)
            } else {
                b.ins().f64const(v)
            }
        };
        let (lo_f, hi_f) =
            if signed { (-(2f64.powi(127)), 2f64.powi(127)) } else { (0.0, 2f64.powi(128)) };
        let lo_v = c(&mut self.b, lo_f);
        let hi_v = c(&mut self.b, hi_f);
        // Clamp into range first so that the library call is always defined.
        let zero = c(&mut self.b, 0.0);
        let is_nan = self.b.ins().fcmp(F::Unordered, x, x);
        let x0 = self.b.ins().select(is_nan, zero, x);
        let below = self.b.ins().fcmp(F::LessThan, x0, lo_v);
        let x1 = self.b.ins().select(below, lo_v, x0);
        let above = self.b.ins().fcmp(F::GreaterThanOrEqual, x1, hi_v);
        let x2 = self.b.ins().select(above, zero, x1);
        let name = match (signed, is_f32) {
            (true, true) => "__fixsfti",
            (true, false) => "__fixdfti",
            (false, true) => "__fixunssfti",
            (false, false) => "__fixunsdfti",
        };
        let sig = Signature::new(vec![lane], Some(Type::I128));
        let r = self.call_external(name, &sig, &[x2])?;
        let r = *r.first().ok_or("no result")?;
        let max = if signed { i128::MAX as u128 } else { u128::MAX };
        let max = self.iconst(types::I128, max);
        Ok(self.b.ins().select(above, max, r))
    }

    /// Same-size reinterpretation: scalars directly, anything else through a stack slot.
    fn bitcast(&mut self, from: &Type, leaves: &[ir::Value], to: &Type) -> R<Vec<ir::Value>> {
        if from.is_scalar() && to.is_scalar() {
            let (fcl, tcl) = (self.cl(from)?, self.cl(to)?);
            return Ok(vec![if fcl == tcl {
                leaves[0]
            } else {
                self.b.ins().bitcast(tcl, mem(), leaves[0])
            }]);
        }
        if let Some(r) = self.bool_vector_bitcast(from, leaves, to) {
            return Ok(r);
        }
        let size = from.size().max(to.size()).max(1);
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            u32::try_from(size).map_err(|_| "bitcast of a huge value")?,
            4,
        ));
        let p = self.b.ins().stack_addr(types::I64, slot, 0);
        self.store(from, leaves, p, false)?;
        self.load(to, p, false)
    }

    /// `<N x i1>` <-> `iN`: lane k is bit k (vectors of i1 are bit-packed).
    fn bool_vector_bitcast(
        &mut self,
        from: &Type,
        leaves: &[ir::Value],
        to: &Type,
    ) -> Option<Vec<ir::Value>> {
        if let (Type::Vector(elem, n), Some(bits)) = (from, to.int_bits()) {
            if **elem != Type::I1 || *n != bits {
                return None;
            }
            let cl = scalar(to)?;
            let mut acc = self.iconst(cl, 0);
            for (k, lane) in leaves.iter().enumerate() {
                let wide = if cl == types::I8 { *lane } else { self.b.ins().uextend(cl, *lane) };
                let shifted = self.b.ins().ishl_imm_s(wide, k as i64);
                acc = self.b.ins().bor(acc, shifted);
            }
            return Some(vec![acc]);
        }
        if let (Some(bits), Type::Vector(elem, n)) = (from.int_bits(), to) {
            if **elem != Type::I1 || *n != bits {
                return None;
            }
            let x = leaves[0];
            let mut out = Vec::new();
            for k in 0..*n {
                let shifted = self.b.ins().ushr_imm_s(x, i64::from(k));
                let narrow = if from.int_bits() == Some(8) {
                    shifted
                } else {
                    self.b.ins().ireduce(types::I8, shifted)
                };
                out.push(self.b.ins().band_imm_s(narrow, 1));
            }
            return Some(out);
        }
        None
    }

    pub fn reduce(
        &mut self,
        op: ReduceOp,
        lane: &Type,
        lanes: &[ir::Value],
        start: Option<ir::Value>,
    ) -> R<ir::Value> {
        let bin = op.binary_op();
        let mut iter = lanes.iter().copied();
        let mut acc = match start {
            Some(s) => s,
            None => iter.next().ok_or("reduction of an empty vector")?,
        };
        for x in iter {
            acc = self.binary(bin, lane, acc, x)?;
        }
        Ok(acc)
    }

    pub fn atomic_rmw(
        &mut self,
        op: AtomicRmwOp,
        ty: &Type,
        p: ir::Value,
        x: ir::Value,
    ) -> R<ir::Value> {
        use cranelift_codegen::ir::AtomicRmwOp as A;
        if matches!(ty, Type::I1 | Type::I128) || !ty.is_scalar() {
            return Err(format!("atomicrmw on {ty} is not supported"));
        }
        let cl = self.cl(ty)?;
        let native = match op {
            AtomicRmwOp::Xchg if !ty.is_float() => Some(A::Xchg),
            AtomicRmwOp::Add => Some(A::Add),
            AtomicRmwOp::Sub => Some(A::Sub),
            AtomicRmwOp::And => Some(A::And),
            AtomicRmwOp::Nand => Some(A::Nand),
            AtomicRmwOp::Or => Some(A::Or),
            AtomicRmwOp::Xor => Some(A::Xor),
            AtomicRmwOp::Max => Some(A::Smax),
            AtomicRmwOp::Min => Some(A::Smin),
            AtomicRmwOp::Umax => Some(A::Umax),
            AtomicRmwOp::Umin => Some(A::Umin),
            _ => None,
        };
        if let Some(a) = native {
            return Ok(self.b.ins().atomic_rmw(cl, mem(), a, p, x));
        }
        // Float operations and float exchange: a compare-and-swap loop on the bits.
        let icl = if *ty == Type::F32 { types::I32 } else { types::I64 };
        let head = self.b.create_block();
        let done = self.b.create_block();
        let old_bits = self.b.ins().load(icl, mem(), p, 0);
        self.b.ins().jump(head, &[ir::BlockArg::Value(old_bits)]);
        self.b.switch_to_block(head);
        let cur = self.b.append_block_param(head, icl);
        let cur_f = self.b.ins().bitcast(cl, mem(), cur);
        let new_f = match op {
            AtomicRmwOp::Fadd => self.b.ins().fadd(cur_f, x),
            AtomicRmwOp::Fsub => self.b.ins().fsub(cur_f, x),
            AtomicRmwOp::Fmax => self.fminmax(cur_f, x, true),
            AtomicRmwOp::Fmin => self.fminmax(cur_f, x, false),
            _ => x,
        };
        let new_bits = self.b.ins().bitcast(icl, mem(), new_f);
        let seen = self.b.ins().atomic_cas(mem(), p, cur, new_bits);
        let ok = self.b.ins().icmp(condcodes::IntCC::Equal, seen, cur);
        self.b.ins().brif(ok, done, &[], head, &[ir::BlockArg::Value(seen)]);
        self.b.switch_to_block(done);
        Ok(self.b.ins().bitcast(cl, mem(), cur))
    }
}
