//! LLVM types -> adc types. Named structs are resolved through the module's type table
//! (adc structs are structural); types adc has no counterpart for (`half`, `x86_fp80`,
//! odd-width integers, scalable vectors, opaque structs by value) are errors.

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

fn convert_depth(types: &Types, ty: &TypeRef, depth: u32) -> Result<Type, String> {
    use llvm_ir::Type as L;
    // A by-value struct cannot contain itself; the cap only guards against malformed input.
    if depth > 64 {
        return Err(format!("type `{ty}` is nested too deeply"));
    }
    Ok(match ty.as_ref() {
        L::IntegerType { bits } => Type::int(*bits).ok_or_else(|| {
            format!("integer type i{bits} has no adc counterpart (i1..i128 only)")
        })?,
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
}
