//! Constants: the payload of `const` instructions and of global initializers. A constant
//! carries no type of its own; it is read against the type of the instruction or global
//! that holds it (an `Int` under `f64` is not valid, the verifier checks the pairing).

use crate::entities::{FuncId, GlobalId};
use crate::types::Type;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Constant {
    /// An integer, zero-extended to 128 bits and masked to its type's width. Under a
    /// pointer type: an absolute address, 0 being `null`.
    Int(u128),
    /// The raw IEEE bits of an `f32` (low 32 bits) or `f64`.
    Float(u64),
    /// All-zero bytes of any type (`zeroinit`).
    Zero,
    /// Any value of the type; adc may pick whichever is convenient.
    Undef,
    /// A value whose use has undefined behaviour; treated like `undef` by adc.
    Poison,
    /// Elements of a vector or array, or fields of a struct, in order.
    Elements(Vec<Constant>),
    /// The bytes of an `[N x i8]` array (`c"..."` in the text form).
    Bytes(Vec<u8>),
    /// The address of a global or function plus a byte offset: a relocation.
    Address { symbol: Symbol, offset: i64 },
}

/// Something with an address in the module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Symbol {
    Global(GlobalId),
    Func(FuncId),
}

impl Constant {
    /// Calls `found` with every function whose address this constant holds.
    pub fn for_each_function_address(&self, found: &mut dyn FnMut(FuncId)) {
        match self {
            Constant::Address { symbol: Symbol::Func(f), .. } => found(*f),
            Constant::Elements(items) => {
                items.iter().for_each(|c| c.for_each_function_address(found))
            }
            _ => {}
        }
    }

    /// Calls `rewrite` on every function id whose address this constant holds.
    pub fn for_each_function_address_mut(&mut self, rewrite: &mut dyn FnMut(&mut FuncId)) {
        match self {
            Constant::Address { symbol: Symbol::Func(f), .. } => rewrite(f),
            Constant::Elements(items) => {
                items.iter_mut().for_each(|c| c.for_each_function_address_mut(rewrite))
            }
            _ => {}
        }
    }

    /// The address of function `f` (`const ptr @f`).
    pub fn function(f: FuncId) -> Constant {
        Constant::Address { symbol: Symbol::Func(f), offset: 0 }
    }

    pub fn int(ty: &Type, value: i128) -> Constant {
        Constant::Int(mask_to_width(value as u128, ty.int_bits().unwrap_or(128)))
    }

    pub fn f64(value: f64) -> Constant {
        Constant::Float(value.to_bits())
    }

    pub fn f32(value: f32) -> Constant {
        Constant::Float(u64::from(value.to_bits()))
    }

    /// Whether this constant is a valid value of `ty`.
    pub fn fits(&self, ty: &Type) -> bool {
        match (self, ty) {
            (Constant::Zero | Constant::Undef | Constant::Poison, _) => true,
            (Constant::Int(v), t) if t.is_int() => {
                *v == mask_to_width(*v, t.int_bits().unwrap_or(128))
            }
            (Constant::Int(v), Type::Ptr(_)) => *v <= u128::from(u64::MAX),
            (Constant::Float(bits), Type::F32) => *bits <= u64::from(u32::MAX),
            (Constant::Float(_), Type::F64) => true,
            (Constant::Address { .. }, Type::Ptr(_)) => true,
            (Constant::Bytes(bytes), Type::Array(elem, n)) => {
                **elem == Type::I8 && bytes.len() as u64 == *n
            }
            (Constant::Elements(elems), Type::Array(elem, n)) => {
                elems.len() as u64 == *n && elems.iter().all(|e| e.fits(elem))
            }
            (Constant::Elements(elems), Type::Vector(elem, n)) => {
                elems.len() as u64 == u64::from(*n) && elems.iter().all(|e| e.fits(elem))
            }
            (Constant::Elements(elems), Type::Struct(s)) => {
                elems.len() == s.fields.len() && elems.iter().zip(&s.fields).all(|(e, t)| e.fits(t))
            }
            _ => false,
        }
    }
}

/// Keeps the low `bits` bits of `value`.
pub fn mask_to_width(value: u128, bits: u32) -> u128 {
    if bits >= 128 {
        value
    } else {
        value & ((1u128 << bits) - 1)
    }
}

/// Sign-extends the low `bits` bits of `value` to an `i128`.
pub fn sign_extend(value: u128, bits: u32) -> i128 {
    if bits >= 128 {
        value as i128
    } else {
        let shift = 128 - bits;
        ((value << shift) as i128) >> shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_constants_are_masked() {
        assert_eq!(Constant::int(&Type::I8, -1), Constant::Int(0xff));
        assert_eq!(sign_extend(0xff, 8), -1);
        assert!(Constant::Int(0xff).fits(&Type::I8));
        assert!(!Constant::Int(0x100).fits(&Type::I8));
    }

    #[test]
    fn aggregates_fit_elementwise() {
        let t = Type::structure(vec![Type::I32, Type::F64], false);
        let c = Constant::Elements(vec![Constant::Int(1), Constant::f64(2.0)]);
        assert!(c.fits(&t));
        assert!(!Constant::Elements(vec![Constant::Int(1)]).fits(&t));
    }
}
