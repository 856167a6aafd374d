//! Types and signatures: how adc types become Cranelift values and ABI parameters.
//!
//! Every adc value is a list of Cranelift "leaves": a scalar is one leaf (`i1` is an `I8`
//! holding 0 or 1, `ptr` an `I64`), a struct or array is the concatenation of its fields'
//! leaves. A vector has one of two forms:
//! - the *lane form*, one scalar leaf per lane, which every vector has without SIMD and
//!   which the per-lane code of `ops.rs` works on;
//! - the *SIMD form* (when SIMD is on): a float vector whose lane type is `f64` or `f32` and
//!   whose byte size is a multiple of 16 is `size / 16` 128-bit chunks (`F64X2`/`F32X4`),
//!   lanes in order (an `<8 x f64>` is four `F64X2` leaves).
//!
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

/// One leaf of an adc value.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf {
    /// A scalar, or one lane of a vector in lane form.
    Scalar(Type),
    /// Consecutive lanes of a float vector in SIMD form: `F64X2` or `F32X4`.
    Chunk(ir::Type),
}

impl Leaf {
    /// The Cranelift type of the leaf.
    pub fn cl(&self) -> Result<ir::Type, String> {
        match self {
            Leaf::Scalar(t) => scalar(t).ok_or_else(|| format!("no machine type for {t}")),
            Leaf::Chunk(t) => Ok(*t),
        }
    }
}

/// The 128-bit chunk type of a vector that has a SIMD form: lanes of `f64` or `f32`, a
/// byte size that is a non-zero multiple of 16.
pub fn simd_chunk(ty: &Type) -> Option<ir::Type> {
    let Type::Vector(elem, n) = ty else { return None };
    let chunk = match **elem {
        Type::F64 => types::F64X2,
        Type::F32 => types::F32X4,
        _ => return None,
    };
    // The lanes' bytes, not the padded size (a <3 x f32> occupies 16 bytes in an array).
    let bytes = u64::from(*n) * elem.size();
    (bytes > 0 && bytes % 16 == 0).then_some(chunk)
}

/// The leaves of `ty`, in order: vectors in SIMD form where they have one and `simd` is
/// on, in lane form otherwise.
pub fn leaves(ty: &Type, simd: bool) -> Result<Vec<Leaf>, String> {
    Ok(machine_layout(ty, simd)?.into_iter().map(|(_, leaf)| leaf).collect())
}

/// Each leaf's byte offset in memory (see [`leaves`]). Vectors of `i1` are bit-packed in
/// memory and have no byte offsets: their lanes are listed at offset 0.
pub fn machine_layout(ty: &Type, simd: bool) -> Result<Vec<(u64, Leaf)>, String> {
    let mut out = Vec::new();
    push_machine(ty, 0, simd, &mut out)?;
    Ok(out)
}

fn push_machine(
    ty: &Type,
    base: u64,
    simd: bool,
    out: &mut Vec<(u64, Leaf)>,
) -> Result<(), String> {
    if out.len() > MAX_LEAVES {
        return Err(format!("aggregate type {ty} is too large to keep in SSA values"));
    }
    match ty {
        Type::Vector(elem, n) => match simd_chunk(ty).filter(|_| simd) {
            Some(chunk) => {
                for k in 0..(u64::from(*n) * elem.size()) / 16 {
                    out.push((base + 16 * k, Leaf::Chunk(chunk)));
                }
            }
            None => {
                let bit_packed = **elem == Type::I1;
                for k in 0..u64::from(*n) {
                    let offset = if bit_packed { base } else { base + k * elem.size() };
                    out.push((offset, Leaf::Scalar((**elem).clone())));
                }
            }
        },
        Type::Array(elem, n) => {
            if (*n as usize).saturating_add(out.len()) > MAX_LEAVES * 4 {
                return Err(format!("aggregate type {ty} is too large to keep in SSA values"));
            }
            for k in 0..*n {
                push_machine(elem, base + k * elem.size(), simd, out)?;
            }
        }
        Type::Struct(s) => {
            for (field, offset) in s.fields.iter().zip(s.field_offsets()) {
                push_machine(field, base + offset, simd, out)?;
            }
        }
        scalar => out.push((base, Leaf::Scalar(scalar.clone()))),
    }
    Ok(())
}

/// The adc scalar types of every leaf of `ty` in lane form, in order.
pub fn leaf_types(ty: &Type) -> Result<Vec<Type>, String> {
    // The lane form has no chunks.
    let scalars = leaves(ty, false)?.into_iter().filter_map(|leaf| match leaf {
        Leaf::Scalar(t) => Some(t),
        Leaf::Chunk(_) => None,
    });
    Ok(scalars.collect())
}

/// Number of leaves of `ty`.
pub fn leaf_count(ty: &Type) -> Result<usize, String> {
    leaf_types(ty).map(|l| l.len())
}

/// Each leaf's byte offset in memory and adc scalar type, in lane form. Vectors of `i1`
/// are bit-packed in memory and have no byte offsets: an error.
pub fn leaf_layout(ty: &Type) -> Result<Vec<(u64, Type)>, String> {
    let layout = memory_layout(ty, false)?;
    Ok(layout
        .into_iter()
        .filter_map(|(offset, leaf)| match leaf {
            Leaf::Scalar(t) => Some((offset, t)),
            Leaf::Chunk(_) => None,
        })
        .collect())
}

/// [`machine_layout`] for a memory access: an error for types holding a bit-packed vector
/// of `i1`, whose lanes have no byte offsets.
pub fn memory_layout(ty: &Type, simd: bool) -> Result<Vec<(u64, Leaf)>, String> {
    if let Some(bits) = bool_vector_in(ty) {
        return Err(format!("memory access to the bit-packed vector {bits}"));
    }
    machine_layout(ty, simd)
}

fn bool_vector_in(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Vector(elem, _) if **elem == Type::I1 => Some(ty),
        Type::Array(elem, _) => bool_vector_in(elem),
        Type::Struct(s) => s.fields.iter().find_map(bool_vector_in),
        _ => None,
    }
}

/// Leaves of each field/element of an aggregate at `indices`: the range of leaves that
/// `extractvalue`/`insertvalue` address (vectors in SIMD form when `simd`).
pub fn leaf_range(
    ty: &Type,
    indices: &[u32],
    simd: bool,
) -> Result<std::ops::Range<usize>, String> {
    let mut start = 0;
    let mut ty = ty.clone();
    for &index in indices {
        let mut skipped = 0;
        for k in 0..index {
            let field = ty.element_type(u64::from(k)).ok_or("bad aggregate index")?;
            skipped += leaves(field, simd)?.len();
        }
        start += skipped;
        ty = ty.element_type(u64::from(index)).ok_or("bad aggregate index")?.clone();
    }
    Ok(start..start + leaves(&ty, simd)?.len())
}

/// Cranelift parameters for one adc parameter.
fn params_of(
    ty: &Type,
    attrs: ParamAttrs,
    simd: bool,
    out: &mut Vec<AbiParam>,
) -> Result<(), String> {
    if attrs.contains(ParamAttrs::SRET) {
        out.push(AbiParam::special(types::I64, ArgumentPurpose::StructReturn));
        return Ok(());
    }
    for leaf in leaves(ty, simd)? {
        let mut param = AbiParam::new(leaf.cl()?);
        if leaf == Leaf::Scalar(Type::I1) || attrs.contains(ParamAttrs::ZEROEXT) {
            param = param.uext();
        } else if attrs.contains(ParamAttrs::SIGNEXT) {
            param = param.sext();
        }
        out.push(param);
    }
    Ok(())
}

/// The bytes a `byval` argument of `size` bytes occupies in the argument area.
pub fn byval_slot_size(size: u32) -> u32 {
    size.next_multiple_of(8)
}

/// The Cranelift signature of an adc signature. `param_attrs` may be shorter than the
/// parameter list (missing entries are empty); `byval` gives the byte size of each `byval`
/// parameter's pointee. `extra` are the types of variadic arguments at a call site.
/// `simd` passes vectors in SIMD form (only between functions adc compiles: the C ABI
/// of vectors is not modelled).
pub fn signature(
    sig: &Signature,
    param_attrs: &[ParamAttrs],
    byval: &[Option<u32>],
    extra: &[Type],
    call_conv: CallConv,
    simd: bool,
) -> Result<ir::Signature, String> {
    let mut out = ir::Signature::new(call_conv);
    for (i, ty) in sig.params.iter().enumerate() {
        let attrs = param_attrs.get(i).copied().unwrap_or_default();
        match byval.get(i).copied().flatten() {
            // The x86-64 ABI gives a by-value struct whole eightbytes of the argument area,
            // and Cranelift insists on that size (a 20-byte struct takes 24); the caller
            // copies such a struct into a slot that large first (`Lower::call`).
            Some(size) if attrs.contains(ParamAttrs::BYVAL) => out.params.push(AbiParam::special(
                types::I64,
                ArgumentPurpose::StructArgument(byval_slot_size(size)),
            )),
            _ => {
                let mut plain = attrs;
                plain.0 &= !ParamAttrs::BYVAL.0;
                params_of(ty, plain, simd, &mut out.params)?;
            }
        }
    }
    for ty in extra {
        params_of(ty, ParamAttrs::empty(), simd, &mut out.params)?;
    }
    if let Some(ret) = &sig.ret {
        for leaf in leaves(ret, simd)? {
            let param = AbiParam::new(leaf.cl()?);
            out.returns.push(if leaf == Leaf::Scalar(Type::I1) { param.uext() } else { param });
        }
    }
    Ok(out)
}
