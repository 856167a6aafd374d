//! IR types: scalars (`i1`..`i128`, `f32`, `f64`, `ptr` with an address space), fixed
//! vectors of scalars, and by-value aggregates (structs, packed structs, arrays).
//!
//! Sizes and alignments follow the x86-64 / nvptx64 data layout that clang uses (pointers
//! are 8 bytes in every address space, `i128` is 16-aligned, vectors are aligned to their
//! size rounded up to a power of two). Aggregates are reference counted so that `Type`
//! stays cheap to clone.

use std::fmt;
use std::sync::Arc;

/// A pointer's address space. 0 is the generic (CPU) space; 1 global, 3 shared, 4 constant
/// and 5 local follow the NVPTX numbering.
pub type AddrSpace = u32;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    I1,
    I8,
    I16,
    I32,
    I64,
    I128,
    F32,
    F64,
    Ptr(AddrSpace),
    /// `<N x T>`: the element is always a scalar type.
    Vector(Arc<Type>, u32),
    /// `[N x T]`
    Array(Arc<Type>, u64),
    /// `{T, U}` or, packed (no padding, alignment 1), `<{T, U}>`.
    Struct(Arc<StructType>),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructType {
    pub fields: Vec<Type>,
    pub packed: bool,
}

impl Type {
    pub const PTR: Type = Type::Ptr(0);

    pub fn vector(elem: Type, lanes: u32) -> Type {
        Type::Vector(Arc::new(elem), lanes)
    }

    pub fn array(elem: Type, len: u64) -> Type {
        Type::Array(Arc::new(elem), len)
    }

    pub fn structure(fields: Vec<Type>, packed: bool) -> Type {
        Type::Struct(Arc::new(StructType { fields, packed }))
    }

    /// Integer type of the given bit width, if adc has one.
    pub fn int(bits: u32) -> Option<Type> {
        Some(match bits {
            1 => Type::I1,
            8 => Type::I8,
            16 => Type::I16,
            32 => Type::I32,
            64 => Type::I64,
            128 => Type::I128,
            _ => return None,
        })
    }

    /// The scalar type written `name` (`i32`, `f64`, `ptr`), without address space.
    pub fn scalar_from_name(name: &str) -> Option<Type> {
        Some(match name {
            "i1" => Type::I1,
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "i128" => Type::I128,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "ptr" => Type::Ptr(0),
            _ => return None,
        })
    }

    pub fn is_int(&self) -> bool {
        self.int_bits().is_some()
    }

    pub fn is_float(&self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }

    pub fn is_ptr(&self) -> bool {
        matches!(self, Type::Ptr(_))
    }

    pub fn is_scalar(&self) -> bool {
        !matches!(self, Type::Vector(..) | Type::Array(..) | Type::Struct(_))
    }

    pub fn is_vector(&self) -> bool {
        matches!(self, Type::Vector(..))
    }

    pub fn is_aggregate(&self) -> bool {
        matches!(self, Type::Array(..) | Type::Struct(_))
    }

    /// Bit width of an integer type.
    pub fn int_bits(&self) -> Option<u32> {
        Some(match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 => 16,
            Type::I32 => 32,
            Type::I64 => 64,
            Type::I128 => 128,
            _ => return None,
        })
    }

    /// Bit width of a scalar (integers, floats, pointers).
    pub fn scalar_bits(&self) -> Option<u32> {
        match self {
            Type::F32 => Some(32),
            Type::F64 => Some(64),
            Type::Ptr(_) => Some(64),
            _ => self.int_bits(),
        }
    }

    /// The lane type of a vector, or the type itself for a scalar.
    pub fn lane_type(&self) -> &Type {
        match self {
            Type::Vector(elem, _) => elem,
            other => other,
        }
    }

    /// Number of lanes: the vector length, 1 for a scalar.
    pub fn lanes(&self) -> u32 {
        match self {
            Type::Vector(_, n) => *n,
            _ => 1,
        }
    }

    /// The same shape with another lane type: `<4 x f64>` with `i1` is `<4 x i1>`.
    pub fn with_lane(&self, lane: Type) -> Type {
        match self {
            Type::Vector(_, n) => Type::vector(lane, *n),
            _ => lane,
        }
    }

    /// Size in bytes as stored in memory (LLVM's alloc size: padded to the alignment).
    pub fn size(&self) -> u64 {
        match self {
            Type::I1 | Type::I8 => 1,
            Type::I16 => 2,
            Type::I32 | Type::F32 => 4,
            Type::I64 | Type::F64 | Type::Ptr(_) => 8,
            Type::I128 => 16,
            Type::Vector(elem, n) => {
                let bits = elem.vector_lane_bits() * u64::from(*n);
                round_up(bits.div_ceil(8), self.align())
            }
            Type::Array(elem, n) => elem.size() * n,
            Type::Struct(s) => s.layout().0,
        }
    }

    /// ABI alignment in bytes.
    pub fn align(&self) -> u64 {
        match self {
            Type::Vector(elem, n) => {
                let bytes = (elem.vector_lane_bits() * u64::from(*n)).div_ceil(8);
                bytes.max(1).next_power_of_two()
            }
            Type::Array(elem, _) => elem.align(),
            Type::Struct(s) => s.layout().1,
            Type::I1 | Type::I8 => 1,
            other => other.size(),
        }
    }

    /// Vectors of `i1` are bit-packed in memory, as in LLVM.
    fn vector_lane_bits(&self) -> u64 {
        match self {
            Type::I1 => 1,
            other => other.size() * 8,
        }
    }

    /// Byte offset of field `index` of a struct, or of element `index` of an array/vector.
    pub fn element_offset(&self, index: u64) -> Option<u64> {
        match self {
            Type::Struct(s) => s.field_offsets().get(index as usize).copied(),
            Type::Array(elem, n) if index < *n => Some(elem.size() * index),
            Type::Vector(elem, n) if index < u64::from(*n) && **elem != Type::I1 => {
                Some(elem.size() * index)
            }
            _ => None,
        }
    }

    /// Type of field/element `index` of an aggregate or vector.
    pub fn element_type(&self, index: u64) -> Option<&Type> {
        match self {
            Type::Struct(s) => s.fields.get(index as usize),
            Type::Array(elem, n) if index < *n => Some(elem),
            Type::Vector(elem, n) if index < u64::from(*n) => Some(elem),
            _ => None,
        }
    }
}

impl StructType {
    /// (size, alignment) with C layout rules, or packed layout.
    pub fn layout(&self) -> (u64, u64) {
        let mut offset = 0;
        let mut align = 1;
        for field in &self.fields {
            let field_align = if self.packed { 1 } else { field.align() };
            offset = round_up(offset, field_align) + field.size();
            align = align.max(field_align);
        }
        (round_up(offset, align), align)
    }

    pub fn field_offsets(&self) -> Vec<u64> {
        let mut offset = 0;
        self.fields
            .iter()
            .map(|field| {
                let field_align = if self.packed { 1 } else { field.align() };
                let here = round_up(offset, field_align);
                offset = here + field.size();
                here
            })
            .collect()
    }
}

fn round_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align.max(1)) * align.max(1)
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::I1 => f.write_str("i1"),
            Type::I8 => f.write_str("i8"),
            Type::I16 => f.write_str("i16"),
            Type::I32 => f.write_str("i32"),
            Type::I64 => f.write_str("i64"),
            Type::I128 => f.write_str("i128"),
            Type::F32 => f.write_str("f32"),
            Type::F64 => f.write_str("f64"),
            Type::Ptr(0) => f.write_str("ptr"),
            Type::Ptr(space) => write!(f, "ptr addrspace({space})"),
            Type::Vector(elem, n) => write!(f, "<{n} x {elem}>"),
            Type::Array(elem, n) => write!(f, "[{n} x {elem}]"),
            Type::Struct(s) => {
                f.write_str(if s.packed { "<{" } else { "{" })?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                f.write_str(if s.packed { "}>" } else { "}" })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_matches_c() {
        let s = Type::structure(vec![Type::I8, Type::F64, Type::I32], false);
        assert_eq!((s.size(), s.align()), (24, 8));
        assert_eq!(s.element_offset(1), Some(8));
        assert_eq!(s.element_offset(2), Some(16));
        let packed = Type::structure(vec![Type::I8, Type::F64], true);
        assert_eq!((packed.size(), packed.align()), (9, 1));
    }

    #[test]
    fn vector_layout() {
        let v = Type::vector(Type::F64, 4);
        assert_eq!((v.size(), v.align()), (32, 32));
        let v3 = Type::vector(Type::F32, 3);
        assert_eq!((v3.size(), v3.align()), (16, 16));
        assert_eq!(Type::vector(Type::I1, 8).size(), 1);
    }

    #[test]
    fn display() {
        let t = Type::structure(vec![Type::Ptr(1), Type::array(Type::F32, 4)], true);
        assert_eq!(t.to_string(), "<{ptr addrspace(1), [4 x f32]}>");
    }
}
