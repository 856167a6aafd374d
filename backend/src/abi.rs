//! Types and signatures: how adc types become Cranelift values and ABI parameters.
//!
//! Every adc value is a list of Cranelift scalar "leaves": a scalar is one leaf (`i1` is an
//! `I8` holding 0 or 1, `ptr` an `I64`), a vector is one leaf per lane (vectors are
//! lowered lane by lane), a struct or array is the concatenation of its fields' leaves.
//! A function parameter or return value of aggregate type is passed as its leaves, which
//! matches clang's x86-64 coercions (`{double, double}` in xmm0/xmm1, `{i64, i64}` in
//! rax/rdx, `{i64, double}` in rax/xmm0).

use adc_ir::{ParamAttrs, Signature, Type};
use cranelift_codegen::ir::{self, types, AbiParam, ArgumentPurpose};
use cranelift_codegen::isa::CallConv;

/// Aggregates with more leaves than this are rejected instead of being split into SSA.
pub const MAX_LEAVES: usize = 4096;

/// The Cranelift type of one scalar adc type.
pub fn scalar(ty: &Type) -> Option<ir::Type> {
    Some(match ty {
        Type::I1 | Type::I8 => types::I8,
        Type::I16 => types::I16,
        Type::I32 => types::I32,
        Type::I64 | Type::Ptr(_) => types::I64,
        Type::I128 => types::I128,
        Type::F32 => types::F32,
        Type::F64 => types::F64,
        _ => return None,
    })
}

/// The adc scalar types of every leaf of `ty`, in order.
pub fn leaf_types(ty: &Type) -> Result<Vec<Type>, String> {
    let mut out = Vec::new();
    push_leaves(ty, &mut out)?;
    Ok(out)
}

fn push_leaves(ty: &Type, out: &mut Vec<Type>) -> Result<(), String> {
    if out.len() > MAX_LEAVES {
        return Err(format!("aggregate type {ty} is too large to keep in SSA values"));
    }
    match ty {
        Type::Vector(elem, n) => {
            for _ in 0..*n {
                out.push((**elem).clone());
            }
        }
        Type::Array(elem, n) => {
            if (*n as usize).saturating_add(out.len()) > MAX_LEAVES * 4 {
                return Err(format!("aggregate type {ty} is too large to keep in SSA values"));
            }
            for _ in 0..*n {
                push_leaves(elem, out)?;
            }
        }
        Type::Struct(s) => {
            for field in &s.fields {
                push_leaves(field, out)?;
            }
        }
        scalar => out.push(scalar.clone()),
    }
    Ok(())
}

/// Number of leaves of `ty`.
pub fn leaf_count(ty: &Type) -> Result<usize, String> {
    leaf_types(ty).map(|l| l.len())
}

/// Each leaf's byte offset in memory and adc scalar type. Vectors of `i1` are bit-packed in
/// memory and have no byte offsets: an error.
pub fn leaf_layout(ty: &Type) -> Result<Vec<(u64, Type)>, String> {
    let mut out = Vec::new();
    push_layout(ty, 0, &mut out)?;
    Ok(out)
}

fn push_layout(ty: &Type, base: u64, out: &mut Vec<(u64, Type)>) -> Result<(), String> {
    if out.len() > MAX_LEAVES {
        return Err(format!("aggregate type {ty} is too large to keep in SSA values"));
    }
    match ty {
        Type::Vector(elem, n) => {
            if **elem == Type::I1 {
                return Err(format!("memory access to the bit-packed vector {ty}"));
            }
            for k in 0..u64::from(*n) {
                out.push((base + k * elem.size(), (**elem).clone()));
            }
        }
        Type::Array(elem, n) => {
            for k in 0..*n {
                push_layout(elem, base + k * elem.size(), out)?;
            }
        }
        Type::Struct(s) => {
            for (field, offset) in s.fields.iter().zip(s.field_offsets()) {
                push_layout(field, base + offset, out)?;
            }
        }
        scalar => out.push((base, scalar.clone())),
    }
    Ok(())
}

/// Leaves of each field/element of an aggregate at `indices`: the range of leaves that
/// `extractvalue`/`insertvalue` address.
pub fn leaf_range(ty: &Type, indices: &[u32]) -> Result<std::ops::Range<usize>, String> {
    let mut start = 0;
    let mut ty = ty.clone();
    for &index in indices {
        let mut skipped = 0;
        for k in 0..index {
            let field = ty.element_type(u64::from(k)).ok_or("bad aggregate index")?;
            skipped += leaf_count(field)?;
        }
        start += skipped;
        ty = ty.element_type(u64::from(index)).ok_or("bad aggregate index")?.clone();
    }
    Ok(start..start + leaf_count(&ty)?)
}

/// Cranelift parameters for one adc parameter.
fn params_of(ty: &Type, attrs: ParamAttrs, out: &mut Vec<AbiParam>) -> Result<(), String> {
    if attrs.contains(ParamAttrs::SRET) {
        out.push(AbiParam::special(types::I64, ArgumentPurpose::StructReturn));
        return Ok(());
    }
    for leaf in leaf_types(ty)? {
        let cl = scalar(&leaf).ok_or_else(|| format!("no machine type for {leaf}"))?;
        let mut param = AbiParam::new(cl);
        if leaf == Type::I1 || attrs.contains(ParamAttrs::ZEROEXT) {
            param = param.uext();
        } else if attrs.contains(ParamAttrs::SIGNEXT) {
            param = param.sext();
        }
        out.push(param);
    }
    Ok(())
}

/// The Cranelift signature of an adc signature. `param_attrs` may be shorter than the
/// parameter list (missing entries are empty); `byval` gives the byte size of each `byval`
/// parameter's pointee. `extra` are the types of variadic arguments at a call site.
pub fn signature(
    sig: &Signature,
    param_attrs: &[ParamAttrs],
    byval: &[Option<u32>],
    extra: &[Type],
    call_conv: CallConv,
) -> Result<ir::Signature, String> {
    let mut out = ir::Signature::new(call_conv);
    for (i, ty) in sig.params.iter().enumerate() {
        let attrs = param_attrs.get(i).copied().unwrap_or_default();
        match byval.get(i).copied().flatten() {
            Some(size) if attrs.contains(ParamAttrs::BYVAL) => out
                .params
                .push(AbiParam::special(types::I64, ArgumentPurpose::StructArgument(size))),
            _ => {
                let mut plain = attrs;
                plain.0 &= !ParamAttrs::BYVAL.0;
                params_of(ty, plain, &mut out.params)?;
            }
        }
    }
    for ty in extra {
        params_of(ty, ParamAttrs::empty(), &mut out.params)?;
    }
    if let Some(ret) = &sig.ret {
        for leaf in leaf_types(ret)? {
            let cl = scalar(&leaf).ok_or_else(|| format!("no machine type for {leaf}"))?;
            let param = AbiParam::new(cl);
            out.returns.push(if leaf == Type::I1 { param.uext() } else { param });
        }
    }
    Ok(out)
}
