//! Global variables as data objects: initializers serialized to bytes with relocations
//! for addresses of globals and functions; all-zero initializers become zero-initialized
//! data; `const` globals are read-only.

use adc_ir::{Constant, Symbol, Type};

/// A pointer-sized relocation inside a data object.
pub struct DataReloc {
    pub offset: u64,
    pub symbol: Symbol,
    pub addend: i64,
}

/// Writes `value` of type `ty` at `offset` into `bytes`, collecting relocations.
pub fn write_constant(
    ty: &Type,
    value: &Constant,
    offset: u64,
    bytes: &mut [u8],
    relocs: &mut Vec<DataReloc>,
) -> Result<(), String> {
    let at = offset as usize;
    let size = ty.size() as usize;
    let slot = bytes.get_mut(at..at + size).ok_or("initializer larger than its type")?;
    match (value, ty) {
        (Constant::Zero | Constant::Undef | Constant::Poison, _) => {}
        (Constant::Int(v), _) => slot.copy_from_slice(&v.to_le_bytes()[..size]),
        (Constant::Float(bits), Type::F32) => {
            slot.copy_from_slice(&(*bits as u32).to_le_bytes());
        }
        (Constant::Float(bits), _) => slot.copy_from_slice(&bits.to_le_bytes()[..size]),
        (Constant::Bytes(b), _) => {
            slot.get_mut(..b.len()).ok_or("string longer than its array")?.copy_from_slice(b)
        }
        (Constant::Elements(elems), _) => {
            if let Type::Vector(elem, _) = ty {
                if **elem == Type::I1 {
                    // Bit-packed in memory, lane 0 in the lowest bit.
                    for (k, e) in elems.iter().enumerate() {
                        if matches!(e, Constant::Int(1)) {
                            slot[k / 8] |= 1 << (k % 8);
                        }
                    }
                    return Ok(());
                }
            }
            for (k, e) in elems.iter().enumerate() {
                let et = ty.element_type(k as u64).ok_or("initializer shape mismatch")?;
                let eo = ty.element_offset(k as u64).ok_or("initializer shape mismatch")?;
                write_constant(et, e, offset + eo, bytes, relocs)?;
            }
        }
        (Constant::Address { symbol, offset: addend }, _) => {
            relocs.push(DataReloc { offset, symbol: *symbol, addend: *addend });
        }
    }
    Ok(())
}
