//! Integers of widths adc has no type for (`i24`, `i40`, `i3`, ...; clang makes them for
//! bit-fields and unions) are legalized at import: an `iN` value lives in the next adc
//! integer `iW` (`types::container_bits`) and is always kept zero-extended, the invariant
//! every translated instruction restores. So `and`/`or`/`xor`, unsigned division and
//! compares, `lshr`, `zext`, `select` and phis need nothing; `add`/`sub`/`mul`/`shl` and
//! conversions into `iN` mask their result to N bits; signed operations (`sdiv`, `srem`,
//! `ashr`, signed compares, `sext`, `sitofp`) first sign-extend from bit N-1.
//!
//! Memory holds exactly LLVM's store size, ceil(N/8) bytes: a load or store whose size is
//! not a power of two (i24: 3 bytes) is split into power-of-two pieces, little-endian (the
//! byte order of every target adc compiles for), so an `i24` store never touches the
//! fourth byte. Inside structs and arrays an `iN` takes its container's bytes, as in
//! LLVM's layout (`types`); a value extracted from an aggregate is masked. Vectors of odd
//! widths are rejected in `types`.

use adc_ir::{BinaryOp, CastOp, InstFlags, InstructionData as D, IntCC, Type, Value};
use llvm_ir::{Instruction as I, IntPredicate, Name, Operand, TypeRef};

use crate::function::{FuncCtx, R};
use crate::types::{container_bits, extracted_type, odd_width};

impl<'a> FuncCtx<'_, 'a> {
    /// The width of an odd integer type, `None` for every other type.
    fn odd(&self, ty: &TypeRef) -> Option<u32> {
        odd_width(ty)
    }

    fn odd_operand(&self, op: &Operand) -> Option<u32> {
        self.odd(&self.m.llvm.types.type_of(op))
    }

    /// Translates `inst` when it computes on an odd-width integer; `None` when it does not
    /// (or when the ordinary translation is already exact for it, as for `select`).
    pub fn odd_width_instruction(&mut self, inst: &'a I) -> Option<R<()>> {
        let binary = match inst {
            I::Add(i) => Some((BinaryOp::Add, &i.operand0, &i.operand1, &i.dest)),
            I::Sub(i) => Some((BinaryOp::Sub, &i.operand0, &i.operand1, &i.dest)),
            I::Mul(i) => Some((BinaryOp::Mul, &i.operand0, &i.operand1, &i.dest)),
            I::UDiv(i) => Some((BinaryOp::Udiv, &i.operand0, &i.operand1, &i.dest)),
            I::SDiv(i) => Some((BinaryOp::Sdiv, &i.operand0, &i.operand1, &i.dest)),
            I::URem(i) => Some((BinaryOp::Urem, &i.operand0, &i.operand1, &i.dest)),
            I::SRem(i) => Some((BinaryOp::Srem, &i.operand0, &i.operand1, &i.dest)),
            I::And(i) => Some((BinaryOp::And, &i.operand0, &i.operand1, &i.dest)),
            I::Or(i) => Some((BinaryOp::Or, &i.operand0, &i.operand1, &i.dest)),
            I::Xor(i) => Some((BinaryOp::Xor, &i.operand0, &i.operand1, &i.dest)),
            I::Shl(i) => Some((BinaryOp::Shl, &i.operand0, &i.operand1, &i.dest)),
            I::LShr(i) => Some((BinaryOp::Lshr, &i.operand0, &i.operand1, &i.dest)),
            I::AShr(i) => Some((BinaryOp::Ashr, &i.operand0, &i.operand1, &i.dest)),
            _ => None,
        };
        if let Some((op, a, b, dest)) = binary {
            let bits = self.odd_operand(a)?;
            return Some(self.odd_binary(op, bits, a, b, dest));
        }
        match inst {
            I::ICmp(i) => {
                let bits = self.odd_operand(&i.operand0)?;
                Some(self.odd_icmp(i.predicate, bits, &i.operand0, &i.operand1, &i.dest))
            }
            I::Trunc(i) => self.odd_resize(Resize::Trunc, &i.operand, &i.to_type, &i.dest),
            I::ZExt(i) => self.odd_resize(Resize::Zext, &i.operand, &i.to_type, &i.dest),
            I::SExt(i) => self.odd_resize(Resize::Sext, &i.operand, &i.to_type, &i.dest),
            I::FPToUI(i) => self.odd_into(CastOp::Fptoui, &i.operand, &i.to_type, &i.dest),
            I::FPToSI(i) => self.odd_into(CastOp::Fptosi, &i.operand, &i.to_type, &i.dest),
            I::PtrToInt(i) => self.odd_into(CastOp::Ptrtoint, &i.operand, &i.to_type, &i.dest),
            I::SIToFP(i) => {
                let bits = self.odd_operand(&i.operand)?;
                Some(self.odd_sitofp(bits, &i.operand, &i.to_type, &i.dest))
            }
            I::BitCast(i) => {
                let bits = self.odd_operand(&i.operand).or_else(|| self.odd(&i.to_type))?;
                Some(self.odd_bitcast(bits, &i.operand, &i.to_type, &i.dest))
            }
            I::Load(i) => {
                let bits = self.odd(&i.loaded_ty)?;
                if i.atomicity.is_some() {
                    return Some(Err(format!("atomic load of i{bits} is not supported")));
                }
                Some(self.odd_load(bits, &i.address, i.alignment, i.volatile, &i.dest))
            }
            I::Store(i) => {
                let bits = self.odd_operand(&i.value)?;
                if i.atomicity.is_some() {
                    return Some(Err(format!("atomic store of i{bits} is not supported")));
                }
                Some(self.odd_store(bits, &i.value, &i.address, i.alignment, i.volatile))
            }
            I::AtomicRMW(i) => {
                let bits = self.odd_operand(&i.value)?;
                Some(Err(format!("atomicrmw on i{bits} is not supported")))
            }
            I::CmpXchg(i) => {
                let bits = self.odd_operand(&i.expected)?;
                Some(Err(format!("cmpxchg on i{bits} is not supported")))
            }
            I::Call(call) => self.odd_intrinsic(call),
            I::ExtractValue(i) => {
                // An aggregate read from memory as a whole carries the bytes above N.
                let types = &self.m.llvm.types;
                let aggregate_type = types.type_of(&i.aggregate);
                let bits = self.odd(&extracted_type(types, &aggregate_type, &i.indices)?)?;
                Some((|| {
                    let aggregate = self.operand(&i.aggregate)?;
                    let v = self.val(D::ExtractValue { aggregate, indices: i.indices.clone() })?;
                    let v = self.mask(v, bits)?;
                    self.define(&i.dest, v);
                    Ok(())
                })())
            }
            _ => None,
        }
    }

    /// Intrinsics see the container, which is exact only for those that commute with zero
    /// extension; the others on odd widths are refused. Calls of ordinary functions pass
    /// values as they are (both sides keep the invariant).
    fn odd_intrinsic(&self, call: &llvm_ir::instruction::Call) -> Option<R<()>> {
        let either::Either::Right(Operand::ConstantOperand(callee)) = &call.function else {
            return None;
        };
        let llvm_ir::Constant::GlobalReference { name: Name::Name(name), .. } = callee.as_ref()
        else {
            return None;
        };
        let name = name.as_str();
        if !name.starts_with("llvm.") {
            return None;
        }
        let result_bits = match call.function_ty.as_ref() {
            llvm_ir::Type::FuncType { result_type, .. } => self.odd(result_type),
            _ => None,
        };
        let bits = call.arguments.iter().find_map(|(a, _)| self.odd_operand(a)).or(result_bits)?;
        let exact_on_container = ["llvm.umin.", "llvm.umax.", "llvm.ctpop."];
        if exact_on_container.iter().any(|p| name.starts_with(p)) {
            return None;
        }
        Some(Err(format!("intrinsic {name} on i{bits} is not supported")))
    }

    /// Keeps the low `bits` bits of a value in its container.
    /// `bitcast <N x i1> to iN` and back, as clang -O2's vectorizer makes them for
    /// "any lane" tests (`icmp ne i4 %bits, 0`): lane k is bit k (LLVM's order), and the
    /// integer lives zero-extended in its container like every odd width. Other bitcasts
    /// of odd widths are refused.
    fn odd_bitcast(&mut self, bits: u32, operand: &Operand, to: &TypeRef, dest: &'a Name) -> R<()> {
        let from = self.m.llvm.types.type_of(operand);
        let mask_lanes = |ty: &TypeRef| match ty.as_ref() {
            llvm_ir::Type::VectorType { element_type, num_elements, scalable: false } => {
                matches!(element_type.as_ref(), llvm_ir::Type::IntegerType { bits: 1 })
                    .then_some(*num_elements as u32)
            }
            _ => None,
        };
        let refused = || Err(format!("bitcast of an i{bits} value is not supported"));
        let v = self.operand(operand)?;
        if mask_lanes(&from) == Some(bits) && self.odd(to) == Some(bits) {
            let container = int_type(container_bits(bits))?;
            let mut acc = self.iconst(&container, 0);
            for lane in 0..bits {
                let index = self.iconst(&Type::I64, i128::from(lane));
                let bit = self.val(D::ExtractLane { vector: v, index })?;
                let wide =
                    self.val(D::Cast { op: CastOp::Zext, arg: bit, ty: container.clone() })?;
                let amount = self.iconst(&container, i128::from(lane));
                let placed = self.val(D::Binary {
                    op: BinaryOp::Shl,
                    flags: InstFlags::empty(),
                    args: [wide, amount],
                })?;
                acc = self.val(D::Binary {
                    op: BinaryOp::Or,
                    flags: InstFlags::empty(),
                    args: [acc, placed],
                })?;
            }
            self.define(dest, acc);
            return Ok(());
        }
        if self.odd(&from) == Some(bits) && mask_lanes(to) == Some(bits) {
            let container = self.ty(v);
            let vector_ty = Type::vector(Type::I1, bits);
            let mut acc = self.val(D::Const { ty: vector_ty, value: adc_ir::Constant::Zero })?;
            for lane in 0..bits {
                let amount = self.iconst(&container, i128::from(lane));
                let shifted = self.val(D::Binary {
                    op: BinaryOp::Lshr,
                    flags: InstFlags::empty(),
                    args: [v, amount],
                })?;
                let bit = self.val(D::Cast { op: CastOp::Trunc, arg: shifted, ty: Type::I1 })?;
                let index = self.iconst(&Type::I64, i128::from(lane));
                acc = self.val(D::InsertLane { vector: acc, value: bit, index })?;
            }
            self.define(dest, acc);
            return Ok(());
        }
        refused()
    }

    fn mask(&mut self, v: Value, bits: u32) -> R<Value> {
        let ty = self.ty(v);
        let mask = self.iconst(&ty, ((1u128 << bits) - 1) as i128);
        self.val(D::Binary { op: BinaryOp::And, flags: InstFlags::empty(), args: [v, mask] })
    }

    /// The container value whose bits above `bits - 1` copy bit `bits - 1`.
    fn sign_extend_in(&mut self, v: Value, bits: u32) -> R<Value> {
        let ty = self.ty(v);
        let shift = ty.int_bits().ok_or("sign extension of a non-integer")? - bits;
        let amount = self.iconst(&ty, i128::from(shift));
        let flags = InstFlags::empty();
        let up = self.val(D::Binary { op: BinaryOp::Shl, flags, args: [v, amount] })?;
        self.val(D::Binary { op: BinaryOp::Ashr, flags, args: [up, amount] })
    }

    fn odd_binary(
        &mut self,
        op: BinaryOp,
        bits: u32,
        a: &Operand,
        b: &Operand,
        dest: &'a Name,
    ) -> R<()> {
        let (mut x, mut y) = (self.operand(a)?, self.operand(b)?);
        // Flags (nuw, nsw, exact, disjoint) speak of N-bit arithmetic; they are dropped.
        let flags = InstFlags::empty();
        let signed = matches!(op, BinaryOp::Sdiv | BinaryOp::Srem | BinaryOp::Ashr);
        if signed {
            x = self.sign_extend_in(x, bits)?;
            if op != BinaryOp::Ashr {
                y = self.sign_extend_in(y, bits)?;
            }
        }
        let mut v = self.val(D::Binary { op, flags, args: [x, y] })?;
        let may_leave_range =
            signed || matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl);
        if may_leave_range {
            v = self.mask(v, bits)?;
        }
        self.define(dest, v);
        Ok(())
    }

    fn odd_icmp(
        &mut self,
        predicate: IntPredicate,
        bits: u32,
        a: &Operand,
        b: &Operand,
        dest: &'a Name,
    ) -> R<()> {
        let (mut x, mut y) = (self.operand(a)?, self.operand(b)?);
        let cond = crate::instructions::int_cc(predicate);
        if matches!(cond, IntCC::Slt | IntCC::Sle | IntCC::Sgt | IntCC::Sge) {
            x = self.sign_extend_in(x, bits)?;
            y = self.sign_extend_in(y, bits)?;
        }
        let v = self.val(D::Icmp { cond, args: [x, y] })?;
        self.define(dest, v);
        Ok(())
    }

    /// `trunc`, `zext` or `sext` where the source or the result has an odd width.
    fn odd_resize(
        &mut self,
        kind: Resize,
        x: &Operand,
        to: &TypeRef,
        dest: &'a Name,
    ) -> Option<R<()>> {
        let from_bits = self.odd_operand(x);
        let to_bits = self.odd(to);
        if from_bits.is_none() && to_bits.is_none() {
            return None;
        }
        Some((|| {
            let mut v = self.operand(x)?;
            let to_ty = self.convert_type(to)?;
            if let (Resize::Sext, Some(bits)) = (kind, from_bits) {
                v = self.sign_extend_in(v, bits)?;
            }
            let (from_w, to_w) = (
                self.ty(v).int_bits().ok_or("integer resize of a non-integer")?,
                to_ty.int_bits().ok_or("integer resize to a non-integer")?,
            );
            let op = match kind {
                Resize::Trunc => CastOp::Trunc,
                Resize::Zext => CastOp::Zext,
                Resize::Sext => CastOp::Sext,
            };
            if from_w != to_w {
                v = self.cast_value(op, v, to_ty)?;
            }
            // A zero extension of a canonical value is canonical; the others may set bits
            // above the result's width.
            if let (Some(bits), Resize::Trunc | Resize::Sext) = (to_bits, kind) {
                v = self.mask(v, bits)?;
            }
            self.define(dest, v);
            Ok(())
        })())
    }

    /// A conversion into an odd-width integer (`fptoui`, `fptosi`, `ptrtoint`).
    fn odd_into(&mut self, op: CastOp, x: &Operand, to: &TypeRef, dest: &'a Name) -> Option<R<()>> {
        let bits = self.odd(to)?;
        Some((|| {
            let arg = self.operand(x)?;
            let ty = self.convert_type(to)?;
            let v = self.cast_value(op, arg, ty)?;
            let v = self.mask(v, bits)?;
            self.define(dest, v);
            Ok(())
        })())
    }

    fn odd_sitofp(&mut self, bits: u32, x: &Operand, to: &TypeRef, dest: &'a Name) -> R<()> {
        let arg = self.operand(x)?;
        let arg = self.sign_extend_in(arg, bits)?;
        let ty = self.convert_type(to)?;
        let v = self.cast_value(CastOp::Sitofp, arg, ty)?;
        self.define(dest, v);
        Ok(())
    }

    fn odd_load(
        &mut self,
        bits: u32,
        address: &Operand,
        align: u32,
        volatile: bool,
        dest: &'a Name,
    ) -> R<()> {
        let ptr = self.operand(address)?;
        let container = int_type(container_bits(bits))?;
        let mut v: Option<Value> = None;
        for (offset, piece_bits) in pieces(bits) {
            let piece = int_type(piece_bits)?;
            let at = self.byte_address(ptr, offset)?;
            let (inst, part) = self.ins(D::Load {
                ty: piece.clone(),
                ptr: at,
                align: piece_align(align, offset, piece_bits),
                volatile,
            });
            self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
            let mut part = part.ok_or("load without result")?;
            if piece != container {
                part = self.cast_value(CastOp::Zext, part, container.clone())?;
            }
            if offset > 0 {
                let shift = self.iconst(&container, i128::from(offset * 8));
                part = self.val(D::Binary {
                    op: BinaryOp::Shl,
                    flags: InstFlags::empty(),
                    args: [part, shift],
                })?;
            }
            v = Some(match v {
                None => part,
                Some(acc) => self.val(D::Binary {
                    op: BinaryOp::Or,
                    flags: InstFlags::DISJOINT,
                    args: [acc, part],
                })?,
            });
        }
        let v = v.ok_or("load of an empty integer")?;
        // Bits of the last byte above N are not part of the value.
        let v = if bits.is_multiple_of(8) { v } else { self.mask(v, bits)? };
        self.define(dest, v);
        Ok(())
    }

    fn odd_store(
        &mut self,
        bits: u32,
        value: &Operand,
        address: &Operand,
        align: u32,
        volatile: bool,
    ) -> R<()> {
        let v = self.operand(value)?;
        let ptr = self.operand(address)?;
        let container = self.ty(v);
        for (offset, piece_bits) in pieces(bits) {
            let piece = int_type(piece_bits)?;
            let mut part = v;
            if offset > 0 {
                let shift = self.iconst(&container, i128::from(offset * 8));
                part = self.val(D::Binary {
                    op: BinaryOp::Lshr,
                    flags: InstFlags::empty(),
                    args: [part, shift],
                })?;
            }
            if piece != container {
                part = self.cast_value(CastOp::Trunc, part, piece)?;
            }
            let at = self.byte_address(ptr, offset)?;
            let (inst, _) = self.ins(D::Store {
                value: part,
                ptr: at,
                align: piece_align(align, offset, piece_bits),
                volatile,
            });
            self.func.dfg.tbaa[inst] = self.extra.tbaa.clone();
        }
        Ok(())
    }

    fn byte_address(&mut self, ptr: Value, offset: u32) -> R<Value> {
        if offset == 0 {
            return Ok(ptr);
        }
        let offset = self.iconst(&Type::I64, i128::from(offset));
        self.val(D::PtrAdd { flags: InstFlags::INBOUNDS, ptr, offset })
    }
}

#[derive(Clone, Copy)]
enum Resize {
    Trunc,
    Zext,
    Sext,
}

fn int_type(bits: u32) -> R<Type> {
    Type::int(bits).ok_or_else(|| format!("no adc integer of {bits} bits"))
}

/// The power-of-two accesses (byte offset, bits) that cover an `iN`'s store size,
/// largest first.
fn pieces(bits: u32) -> Vec<(u32, u32)> {
    let mut remaining = bits.div_ceil(8);
    let mut offset = 0;
    let mut out = Vec::new();
    while remaining > 0 {
        let bytes = 1u32 << (31 - remaining.leading_zeros()).min(4);
        out.push((offset, bytes * 8));
        offset += bytes;
        remaining -= bytes;
    }
    out
}

/// The alignment a piece at `offset` keeps from the access's alignment.
fn piece_align(align: u32, offset: u32, piece_bits: u32) -> u32 {
    let align = align.max(1);
    let from_offset = if offset == 0 { align } else { 1 << offset.trailing_zeros() };
    align.min(from_offset).min(piece_bits / 8).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_store_size_exactly() {
        assert_eq!(pieces(24), vec![(0, 16), (2, 8)]);
        assert_eq!(pieces(40), vec![(0, 32), (4, 8)]);
        assert_eq!(pieces(56), vec![(0, 32), (4, 16), (6, 8)]);
        assert_eq!(pieces(17), vec![(0, 16), (2, 8)]);
        assert_eq!(pieces(3), vec![(0, 8)]);
        assert_eq!(pieces(31), vec![(0, 32)]);
        assert_eq!(pieces(120), vec![(0, 64), (8, 32), (12, 16), (14, 8)]);
        for bits in 1..=128 {
            let total: u32 = pieces(bits).iter().map(|(_, b)| b / 8).sum();
            assert_eq!(total, bits.div_ceil(8), "i{bits}");
        }
    }

    #[test]
    fn pieces_keep_only_the_alignment_their_offset_allows() {
        assert_eq!(piece_align(4, 0, 16), 2);
        assert_eq!(piece_align(4, 2, 8), 1);
        assert_eq!(piece_align(8, 4, 32), 4);
        assert_eq!(piece_align(1, 4, 32), 1);
    }
}

#[cfg(test)]
mod semantics {
    use adc_ir::interp::{Interpreter, Val};

    /// i24 operations imported from LLVM text and run in the interpreter, against the same
    /// operations computed here on 24-bit two's complement.
    const OPS: &str = r#"
define i32 @wrap(i32 %a, i32 %b) {
  %x = trunc i32 %a to i24
  %y = trunc i32 %b to i24
  %s = add i24 %x, %y
  %m = mul i24 %s, %y
  %l = shl i24 %m, 3
  %r = zext i24 %l to i32
  ret i32 %r
}
define i32 @signed(i32 %a, i32 %b) {
  %x = trunc i32 %a to i24
  %y = trunc i32 %b to i24
  %q = sdiv i24 %x, %y
  %m = srem i24 %x, %y
  %h = ashr i24 %x, 5
  %s = add i24 %q, %m
  %t = xor i24 %s, %h
  %r = sext i24 %t to i32
  ret i32 %r
}
define i32 @compare(i32 %a, i32 %b) {
  %x = trunc i32 %a to i24
  %y = trunc i32 %b to i24
  %lt = icmp slt i24 %x, %y
  %ult = icmp ult i24 %x, %y
  %l = zext i1 %lt to i32
  %u = zext i1 %ult to i32
  %u2 = shl i32 %u, 1
  %r = or i32 %l, %u2
  ret i32 %r
}
define double @to_float(i32 %a) {
  %x = trunc i32 %a to i24
  %f = sitofp i24 %x to double
  ret double %f
}
define i64 @widen(i32 %a) {
  %x = trunc i32 %a to i24
  %w = sext i24 %x to i40
  %d = mul i40 %w, 1000003
  %r = sext i40 %d to i64
  ret i64 %r
}
define i64 @memory(i32 %a) {
  %p = alloca i64, align 8
  store i64 -1, ptr %p, align 8
  %q = getelementptr i8, ptr %p, i64 2
  %x = trunc i32 %a to i24
  store i24 %x, ptr %q, align 1
  %back = load i24, ptr %q, align 1
  %same = icmp eq i24 %back, %x
  %w = load i64, ptr %p, align 8
  %r = select i1 %same, i64 %w, i64 0
  ret i64 %r
}
"#;

    fn sx(v: i64, bits: u32) -> i64 {
        (v << (64 - bits)) >> (64 - bits)
    }

    fn run(name: &str, args: &[u32]) -> Val {
        let llvm = llvm_ir::Module::from_ir_str(OPS).expect("valid LLVM text");
        let module = crate::import_module(&llvm).expect("imports");
        adc_ir::verify::verify_module(&module).expect("verifies");
        let f = module.function_by_name(name).expect("defined");
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let args: Vec<Val> = args.iter().map(|&a| Val::Int(u128::from(a))).collect();
        interp.call(f, &args).expect("runs").expect("returns")
    }

    fn int(v: Val) -> u128 {
        match v {
            Val::Int(n) => n,
            other => panic!("not an integer: {other:?}"),
        }
    }

    #[test]
    fn i24_arithmetic_wraps_and_signs_like_llvm() {
        let samples: [i64; 7] = [0, 1, -1, 0x7f_ffff, -0x80_0000, 123_456, -98_765];
        for &a in &samples {
            for &b in &samples {
                let (ua, ub) = (a as u32, b as u32);
                let wrap = ((((a + b) * b) << 3) & 0xff_ffff) as u128;
                assert_eq!(int(run("wrap", &[ua, ub])), wrap, "wrap({a}, {b})");
                let (x, y) = (sx(a, 24), sx(b, 24));
                let lt = u128::from(x < y) | (u128::from((x & 0xff_ffff) < (y & 0xff_ffff)) << 1);
                assert_eq!(int(run("compare", &[ua, ub])), lt, "compare({a}, {b})");
                if y != 0 && !(x == -0x80_0000 && y == -1) {
                    let t = sx((x / y + x % y) ^ (x >> 5), 24);
                    assert_eq!(
                        int(run("signed", &[ua, ub])),
                        u128::from(t as u32),
                        "signed({a}, {b})"
                    );
                }
            }
            let x = sx(a, 24);
            assert_eq!(run("to_float", &[a as u32]), Val::F64(x as f64), "to_float({a})");
            let widened = sx(x * 1_000_003, 40);
            assert_eq!(int(run("widen", &[a as u32])), u128::from(widened as u64), "widen({a})");
            // Bytes 2..5 hold the value, the others stay 0xff.
            let bytes = !(0xff_ffffu64 << 16) | (((x as u64) & 0xff_ffff) << 16);
            assert_eq!(int(run("memory", &[a as u32])), u128::from(bytes), "memory({a})");
        }
    }
}
