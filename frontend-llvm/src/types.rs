//! LLVM types -> adc types. Named structs are resolved through the module's type table
//! (adc structs are structural); types adc has no counterpart for (`half`, `x86_fp80`,
//! scalable vectors, opaque structs by value) are errors. An odd-width integer (`i24`)
//! becomes the next adc integer (see `odd_ints`), also inside structs and arrays: LLVM lays
//! an `iN` out in its alloc size, which is that integer's size and alignment on the targets
//! adc compiles for. Vectors of them are bit-packed and an error.

use adc_ir::Type;
use llvm_ir::types::{FPType, NamedStructDef, Types};
use llvm_ir::TypeRef;

/// Converts a first-class (value) type. `void` is not one: see `return_type`.
pub fn convert(types: &Types, ty: &TypeRef) -> Result<Type, String> {
    convert_depth(types, ty, 0)
}

/// `None` for `void`.
pub fn return_type(types: &Types, ty: &TypeRef) -> Result<Option<Type>, String> {
    match ty.as_ref() {
        llvm_ir::Type::VoidType => Ok(None),
        _ => convert(types, ty).map(Some),
    }
}

/// The width of an integer type adc has no type for but legalizes (`i24` -> 24);
/// `None` for every other type.
pub fn odd_width(ty: &TypeRef) -> Option<u32> {
    match ty.as_ref() {
        llvm_ir::Type::IntegerType { bits } if *bits < 128 && Type::int(*bits).is_none() => {
            Some(*bits)
        }
        _ => None,
    }
}

/// The adc integer width an odd width lives in: the next of 8, 16, 32, 64, 128.
pub fn container_bits(bits: u32) -> u32 {
    bits.next_power_of_two().max(8)
}

/// The type `extractvalue` reads from an aggregate of type `aggregate` at `indices`, looking
/// through named structs (llvm-ir's own `get_type` panics on them); `None` when an index
/// leaves the aggregate or a struct is opaque.
pub fn extracted_type(types: &Types, aggregate: &TypeRef, indices: &[u32]) -> Option<TypeRef> {
    let mut current = aggregate.clone();
    for &index in indices {
        while let llvm_ir::Type::NamedStructType { name } = current.as_ref() {
            match types.named_struct_def(name)? {
                NamedStructDef::Defined(def) => current = def.clone(),
                NamedStructDef::Opaque => return None,
            }
        }
        current = match current.as_ref() {
            llvm_ir::Type::ArrayType { element_type, .. } => element_type.clone(),
            llvm_ir::Type::StructType { element_types, .. } => {
                element_types.get(index as usize)?.clone()
            }
            _ => return None,
        };
    }
    Some(current)
}

fn convert_depth(types: &Types, ty: &TypeRef, depth: u32) -> Result<Type, String> {
    use llvm_ir::Type as L;
    // A by-value struct cannot contain itself; the cap only guards against malformed input.
    if depth > 64 {
        return Err(format!("type `{ty}` is nested too deeply"));
    }
    Ok(match ty.as_ref() {
        L::IntegerType { bits } => match Type::int(*bits) {
            Some(t) => t,
            None if *bits < 128 => Type::int(container_bits(*bits))
                .ok_or_else(|| format!("integer type i{bits} has no adc container"))?,
            None => {
                return Err(format!("integer type i{bits} has no adc counterpart (i1..i128 only)"))
            }
        },
        L::FPType(FPType::Single) => Type::F32,
        L::FPType(FPType::Double) => Type::F64,
        L::FPType(other) => {
            return Err(format!("floating-point type `{other:?}` is not supported (f32/f64 only)"))
        }
        L::PointerType { addr_space } => Type::Ptr(*addr_space),
        L::VectorType { element_type, num_elements, scalable } => {
            if *scalable {
                return Err("scalable vectors are not supported".into());
            }
            if let Some(bits) = odd_width(element_type) {
                return Err(format!(
                    "vectors of i{bits} are not supported (their lanes are bit-packed)"
                ));
            }
            let elem = convert_depth(types, element_type, depth + 1)?;
            if !elem.is_scalar() {
                return Err(format!("vector of non-scalar `{element_type}`"));
            }
            Type::vector(elem, *num_elements as u32)
        }
        L::ArrayType { element_type, num_elements } => {
            Type::array(convert_depth(types, element_type, depth + 1)?, *num_elements as u64)
        }
        L::StructType { element_types, is_packed } => {
            let fields = element_types
                .iter()
                .map(|t| convert_depth(types, t, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            Type::structure(fields, *is_packed)
        }
        L::NamedStructType { name } => match types.named_struct_def(name) {
            Some(NamedStructDef::Defined(def)) => convert_depth(types, def, depth + 1)?,
            Some(NamedStructDef::Opaque) | None => {
                return Err(format!("opaque struct type %{name} used by value"))
            }
        },
        L::VoidType => return Err("`void` used as a value type".into()),
        other => return Err(format!("type `{other}` is not supported")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_through_the_type_table() {
        let module = llvm_ir::Module::from_ir_str(
            "%struct.S = type { i8, double, [2 x <4 x float>] }\n\
             @g = global %struct.S zeroinitializer\n",
        )
        .unwrap();
        let ty = module.types.named_struct("struct.S");
        let t = convert(&module.types, &ty).unwrap();
        assert_eq!(t.to_string(), "{i8, f64, [2 x <4 x f32>]}");
        assert_eq!(t.size(), 48);
        let half = module.types.fp(FPType::Half);
        assert!(convert(&module.types, &half).is_err());
    }

    #[test]
    fn odd_widths_live_in_the_next_adc_integer() {
        let module = llvm_ir::Module::from_ir_str("@g = global i8 0\n").unwrap();
        let types = &module.types;
        assert_eq!(convert(types, &types.int(24)).unwrap(), Type::I32);
        assert_eq!(convert(types, &types.int(40)).unwrap(), Type::I64);
        assert_eq!(convert(types, &types.int(3)).unwrap(), Type::I8);
        assert_eq!(convert(types, &types.int(100)).unwrap(), Type::I128);
        assert!(convert(types, &types.int(256)).is_err());
        let array = types.array_of(types.int(24), 2);
        assert_eq!(convert(types, &array).unwrap().to_string(), "[2 x i32]");
        let vector = types.vector_of(types.int(24), 2, false);
        let error = convert(types, &vector).unwrap_err();
        assert!(error.contains("vectors of i24"), "{error}");
        assert_eq!(odd_width(&types.int(24)), Some(24));
        assert_eq!(odd_width(&types.int(32)), None);
    }
}
