//! Inline PTX assembly: the few templates CUDA's libdevice writes in `asm` (the 128-bit
//! integer pieces of the Payne-Hanek argument reduction of `sin`/`cos`/`tan`, 32-bit
//! multiply-adds with carry, `bfind`, approximate reciprocals and subtractions with a
//! rounding mode) become adc IR with the same meaning, so that the interpreter runs them
//! and every backend emits them. Any other template is an error naming it.
//!
//! Templates are compared with their whitespace collapsed; a one-instruction template
//! must use its operands in order (`op $0, $1, $2;`), which is what the constraint list
//! of such a call describes (outputs first).

use adc_ir::{
    BinaryOp, CastOp, Constant, FuncAttrs, InstFlags, InstructionData as D, IntCC, Signature, Type,
    UnaryOp, Value,
};
use llvm_ir::instruction::Call;

use crate::function::{FuncCtx, R};

/// `{lo, hi} = a * b + c` on 64-bit halves of 128-bit integers (`a`, `b`, `c` 64-bit).
const MAD_WIDE_U64: &str = "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi; \
mov.b64 {alo,ahi}, $2; mov.b64 {blo,bhi}, $3; mov.b64 {clo,chi}, $4; \
mad.lo.cc.u32 r0, alo, blo, clo; madc.hi.cc.u32 r1, alo, blo, chi; \
madc.hi.u32 r2, alo, bhi, 0; mad.lo.cc.u32 r1, alo, bhi, r1; \
madc.hi.cc.u32 r2, ahi, blo, r2; madc.hi.u32 r3, ahi, bhi, 0; \
mad.lo.cc.u32 r1, ahi, blo, r1; madc.lo.cc.u32 r2, ahi, bhi, r2; addc.u32 r3, r3, 0; \
mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }";

/// `{lo, hi} = a * b`, the full 128-bit product of two 64-bit integers.
const MUL_WIDE_U64: &str = "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi; \
mov.b64 {alo,ahi}, $2; mov.b64 {blo,bhi}, $3; mul.lo.u32 r0, alo, blo; \
mul.hi.u32 r1, alo, blo; mad.lo.cc.u32 r1, alo, bhi, r1; madc.hi.u32 r2, alo, bhi, 0; \
mad.lo.cc.u32 r1, ahi, blo, r1; madc.hi.cc.u32 r2, ahi, blo, r2; \
madc.hi.u32 r3, ahi, bhi, 0; mad.lo.cc.u32 r2, ahi, bhi, r2; addc.u32 r3, r3, 0; \
mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }";

/// `{lo, hi} = {alo, ahi} + {blo, bhi}` (128-bit, modulo 2^128).
const ADD_U128: &str = "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; \
mov.b64 {a0,a1}, $2; mov.b64 {a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; \
add.cc.u32 r0, a0, b0; addc.cc.u32 r1, a1, b1; addc.cc.u32 r2, a2, b2; \
addc.u32 r3, a3, b3; mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }";

/// `{lo, hi} = {alo, ahi} - {blo, bhi}` (128-bit, modulo 2^128).
const SUB_U128: &str = "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; \
mov.b64 {a0,a1}, $2; mov.b64 {a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; \
sub.cc.u32 r0, a0, b0; subc.cc.u32 r1, a1, b1; subc.cc.u32 r2, a2, b2; \
subc.u32 r3, a3, b3; mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }";

/// `{lo, hi} = a * b + c` on 32-bit halves of a 64-bit integer (`a`, `b`, `c` 32-bit).
const MAD_WIDE_U32: &str = "{ mad.lo.cc.u32 $0, $2, $3, $4; madc.hi.u32 $1, $2, $3, 0; }";

/// `{iN, iN}`, what an asm call with two integer outputs returns.
fn int_pair(bits: u32) -> Type {
    let int = if bits == 32 { Type::I32 } else { Type::I64 };
    Type::structure(vec![int.clone(), int], false)
}

/// The template with every run of whitespace turned into one space.
pub fn normalize(template: &str) -> String {
    template.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `op $0, $1, ...;` -> (`op`, number of operands), when the operands are in order.
fn single_instruction(template: &str) -> Option<(&str, usize)> {
    let body = template.strip_suffix(';')?.trim();
    let (op, operands) = body.split_once(' ')?;
    let operands: Vec<&str> = operands.split(',').map(str::trim).collect();
    let in_order = operands.iter().enumerate().all(|(k, o)| *o == format!("${k}"));
    in_order.then_some((op, operands.len()))
}

impl<'a> FuncCtx<'_, 'a> {
    /// Translates a call to inline assembly whose template the C-API walk recorded.
    pub fn inline_asm(&mut self, call: &'a Call) -> R<()> {
        let Some(template) = self.extra.asm.clone() else {
            return Err("inline assembly (its template is unknown without the C-API \
                        walk over the bitcode)"
                .into());
        };
        let text = normalize(&template);
        let mut args = Vec::with_capacity(call.arguments.len());
        for (op, _) in &call.arguments {
            args.push(self.operand(op)?);
        }
        let ret = self.call_signature(call)?.ret;
        let unsupported = || format!("inline assembly `{text}` is not supported");
        let int_args = |ctx: &Self, bits: u32, n: usize| {
            args.len() == n && args.iter().all(|a| ctx.ty(*a).int_bits() == Some(bits))
        };
        let pair = |bits: u32| ret.as_ref() == Some(&int_pair(bits));
        let result = match text.as_str() {
            MAD_WIDE_U64 if int_args(self, 64, 3) && pair(64) => {
                let (lo, hi) = self.mul_wide_u64(args[0], args[1])?;
                let zero = self.iconst(&Type::I64, 0);
                let (lo, hi) = self.add_u128((lo, hi), (args[2], zero))?;
                self.pair(lo, hi, 64)?
            }
            MUL_WIDE_U64 if int_args(self, 64, 2) && pair(64) => {
                let (lo, hi) = self.mul_wide_u64(args[0], args[1])?;
                self.pair(lo, hi, 64)?
            }
            ADD_U128 if int_args(self, 64, 4) && pair(64) => {
                let (lo, hi) = self.add_u128((args[0], args[1]), (args[2], args[3]))?;
                self.pair(lo, hi, 64)?
            }
            SUB_U128 if int_args(self, 64, 4) && pair(64) => {
                let (lo, hi) = self.sub_u128((args[0], args[1]), (args[2], args[3]))?;
                self.pair(lo, hi, 64)?
            }
            MAD_WIDE_U32 if int_args(self, 32, 3) && pair(32) => {
                let wide: Vec<Value> = args
                    .iter()
                    .map(|a| self.val(D::Cast { op: CastOp::Zext, arg: *a, ty: Type::I64 }))
                    .collect::<R<_>>()?;
                let product = self.int_op(BinaryOp::Mul, wide[0], wide[1])?;
                // (2^32 - 1)^2 + 2^32 - 1 < 2^64: the 64-bit sum is exact.
                let sum = self.int_op(BinaryOp::Add, product, wide[2])?;
                let lo = self.val(D::Cast { op: CastOp::Trunc, arg: sum, ty: Type::I32 })?;
                let shift = self.iconst(&Type::I64, 32);
                let high = self.int_op(BinaryOp::Lshr, sum, shift)?;
                let hi = self.val(D::Cast { op: CastOp::Trunc, arg: high, ty: Type::I32 })?;
                self.pair(lo, hi, 32)?
            }
            _ => {
                let (op, operands) = single_instruction(&text).ok_or_else(unsupported)?;
                self.single_asm(op, operands, &args, ret.as_ref()).ok_or_else(unsupported)??
            }
        };
        if let Some(dest) = &call.dest {
            self.define(dest, result);
        }
        Ok(())
    }

    /// One PTX instruction; `None` when it is not one adc translates.
    fn single_asm(
        &mut self,
        op: &str,
        operands: usize,
        args: &[Value],
        ret: Option<&Type>,
    ) -> Option<R<Value>> {
        let float_ty = |suffix: &str| match suffix {
            "f32" => Some(Type::F32),
            "f64" => Some(Type::F64),
            _ => None,
        };
        let arg_types_are = |ctx: &Self, ty: &Type| args.iter().all(|a| &ctx.ty(*a) == ty);
        let parts: Vec<&str> = op.split('.').collect();
        match parts.as_slice() {
            // sub with a rounding mode is add of the negation, which is exact.
            ["sub", rounding @ ("rn" | "rz" | "rm" | "rp"), rest @ ..] => {
                let (ftz, suffix) = match rest {
                    ["ftz", s] => (".ftz", *s),
                    [s] => ("", *s),
                    _ => return None,
                };
                let ty = float_ty(suffix)?;
                if operands != 3 || args.len() != 2 || !arg_types_are(self, &ty) || ret != Some(&ty)
                {
                    return None;
                }
                let a = args[0];
                let b = args[1];
                Some((|| {
                    if *rounding == "rn" && ftz.is_empty() {
                        return self.val(D::Binary {
                            op: BinaryOp::Fsub,
                            flags: InstFlags::empty(),
                            args: [a, b],
                        });
                    }
                    let negated = self.val(D::Unary {
                        op: UnaryOp::Fneg,
                        flags: InstFlags::empty(),
                        arg: b,
                    })?;
                    let letter = if ty == Type::F32 { "f" } else { "d" };
                    let name = format!("llvm.nvvm.add.{rounding}{ftz}.{letter}");
                    self.nvvm_call(&name, &[a, negated], ty)
                })())
            }
            ["rcp", "approx", "ftz", suffix @ ("f32" | "f64")]
            | ["rsqrt", "approx", "ftz", suffix @ ("f32" | "f64")] => {
                let ty = float_ty(suffix)?;
                if operands != 2 || args.len() != 1 || !arg_types_are(self, &ty) || ret != Some(&ty)
                {
                    return None;
                }
                let letter = if ty == Type::F32 { "f" } else { "d" };
                let name = format!("llvm.nvvm.{}.approx.ftz.{letter}", parts[0]);
                Some(self.nvvm_call(&name, args, ty))
            }
            // The shift that brings the highest set bit to bit 31; all ones for zero.
            ["bfind", "shiftamt", "u32"] => {
                if operands != 2 || !arg_types_are(self, &Type::I32) || ret != Some(&Type::I32) {
                    return None;
                }
                let x = args[0];
                Some((|| {
                    let zeros = self.val(D::Unary {
                        op: UnaryOp::Ctlz,
                        flags: InstFlags::empty(),
                        arg: x,
                    })?;
                    let zero = self.iconst(&Type::I32, 0);
                    let is_zero = self.val(D::Icmp { cond: IntCC::Eq, args: [x, zero] })?;
                    let none = self.iconst(&Type::I32, -1);
                    self.val(D::Select { flags: InstFlags::empty(), args: [is_zero, none, zeros] })
                })())
            }
            _ => None,
        }
    }

    fn nvvm_call(&mut self, name: &str, args: &[Value], ty: Type) -> R<Value> {
        let params = vec![ty.clone(); args.len()];
        let attrs = FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN | FuncAttrs::READNONE;
        let callee = self.m.declare(name, Signature::new(params, Some(ty)), attrs);
        self.val(D::Call { callee, args: args.to_vec(), attrs })
    }

    fn int_op(&mut self, op: BinaryOp, a: Value, b: Value) -> R<Value> {
        self.val(D::Binary { op, flags: InstFlags::empty(), args: [a, b] })
    }

    /// The 128-bit product of two 64-bit integers as (low, high) words; the high word is
    /// `llvm.nvvm.mulhi.ull`, PTX's `mul.hi.u64`.
    fn mul_wide_u64(&mut self, a: Value, b: Value) -> R<(Value, Value)> {
        let lo = self.int_op(BinaryOp::Mul, a, b)?;
        let attrs = FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN | FuncAttrs::READNONE;
        let sig = Signature::new(vec![Type::I64, Type::I64], Some(Type::I64));
        let callee = self.m.declare("llvm.nvvm.mulhi.ull", sig, attrs);
        let hi = self.val(D::Call { callee, args: vec![a, b], attrs })?;
        Ok((lo, hi))
    }

    fn add_u128(&mut self, a: (Value, Value), b: (Value, Value)) -> R<(Value, Value)> {
        let lo = self.int_op(BinaryOp::Add, a.0, b.0)?;
        let wrapped = self.val(D::Icmp { cond: IntCC::Ult, args: [lo, a.0] })?;
        let carry = self.val(D::Cast { op: CastOp::Zext, arg: wrapped, ty: Type::I64 })?;
        let hi = self.int_op(BinaryOp::Add, a.1, b.1)?;
        let hi = self.int_op(BinaryOp::Add, hi, carry)?;
        Ok((lo, hi))
    }

    fn sub_u128(&mut self, a: (Value, Value), b: (Value, Value)) -> R<(Value, Value)> {
        let lo = self.int_op(BinaryOp::Sub, a.0, b.0)?;
        let wrapped = self.val(D::Icmp { cond: IntCC::Ult, args: [a.0, b.0] })?;
        let borrow = self.val(D::Cast { op: CastOp::Zext, arg: wrapped, ty: Type::I64 })?;
        let hi = self.int_op(BinaryOp::Sub, a.1, b.1)?;
        let hi = self.int_op(BinaryOp::Sub, hi, borrow)?;
        Ok((lo, hi))
    }

    /// The `{iN, iN}` struct an asm call with two outputs returns.
    fn pair(&mut self, lo: Value, hi: Value, bits: u32) -> R<Value> {
        let undef = self.constant(int_pair(bits), Constant::Undef);
        let with_lo = self.val(D::InsertValue { aggregate: undef, value: lo, indices: vec![0] })?;
        self.val(D::InsertValue { aggregate: with_lo, value: hi, indices: vec![1] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_matched_after_collapsing_whitespace() {
        assert_eq!(
            normalize(
                "{\n\tmad.lo.cc.u32   $0, $2, $3, $4;\n\tmadc.hi.u32     $1, $2, $3,  0;\n\t}"
            ),
            MAD_WIDE_U32
        );
        assert_eq!(
            single_instruction("rcp.approx.ftz.f32 $0,$1;"),
            Some(("rcp.approx.ftz.f32", 2))
        );
        assert_eq!(single_instruction("sub.rm.f64 $0, $1, $2;"), Some(("sub.rm.f64", 3)));
        assert_eq!(single_instruction("sub.rm.f64 $0, $2, $1;"), None);
        assert_eq!(single_instruction("bar.sync 0;"), None);
    }
}
