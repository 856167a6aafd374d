//! LLVM constants -> adc `Constant`s. Pure data (numbers, aggregates, addresses of
//! symbols plus a byte offset) folds into a `Constant`; constant expressions that are not
//! an address (`ptrtoint`, arithmetic, ...) fold to `None` and are materialized as
//! instructions by the function translator, or rejected in global initializers.
//!
//! A constant GEP's byte offset needs its source element type, which llvm-ir 0.11 drops
//! for LLVM >= 15; `import_bitcode_file` has the C API rewrite every constant GEP into
//! `getelementptr (i8, base, offset)` first (`crate::byte_geps`), so one index is a byte
//! count. All-zero indices need no type.

use adc_ir::{Constant, Symbol, Type};
use llvm_ir::constant::Float;
use llvm_ir::{Constant as L, ConstantRef, Name};

use crate::globals::ModuleCtx;

/// The name llvm-ir gives a global (unnamed ones are numbered).
pub fn global_name(name: &Name) -> String {
    match name {
        Name::Name(s) => s.to_string(),
        Name::Number(n) => format!("__unnamed.{n}"),
    }
}

impl ModuleCtx<'_> {
    /// The adc type of a constant.
    pub fn constant_type(&self, c: &ConstantRef) -> Result<Type, String> {
        match c.as_ref() {
            // llvm-ir types every constant GEP as `ptr` in address space 0; the base
            // knows the real address space.
            L::GetElementPtr(g) => self.constant_type(&g.address),
            L::GlobalReference { name, .. } => {
                Ok(match self.resolve_symbol(&global_name(name))? {
                    (Symbol::Global(g), _) => Type::Ptr(self.module.globals[g].addr_space),
                    (Symbol::Func(_), _) => Type::PTR,
                })
            }
            _ => crate::types::convert(&self.llvm.types, &self.llvm.types.type_of(c)),
        }
    }

    /// Byte offset of a constant GEP from its base.
    pub fn const_gep_offset(&self, c: &L) -> Result<i64, String> {
        let L::GetElementPtr(g) = c else {
            return Err("not a GEP".into());
        };
        let all_zero = g.indices.iter().all(|i| matches!(i.as_ref(), L::Int { value: 0, .. }));
        if all_zero {
            return Ok(0);
        }
        match g.indices.as_slice() {
            [index] if self.extras.constant_geps_in_bytes => match index.as_ref() {
                L::Int { bits, value } if *bits <= 64 => {
                    let shift = 64 - bits;
                    Ok(((*value << shift) as i64) >> shift)
                }
                _ => Err(format!("constant GEP `{c}` has an index that is not an integer")),
            },
            _ if self.extras.constant_geps_in_bytes => Err(format!(
                "constant GEP `{c}` has indices that are not integer constants; adc needs \
                 its byte offset"
            )),
            _ => Err(format!(
                "byte offset of constant GEP `{c}` is unknown (llvm-ir drops its source \
                 element type; import with `import_bitcode_file` to read it through the C API)"
            )),
        }
    }

    /// Folds a constant into adc data. `Ok(None)`: an expression that has to be computed
    /// by instructions. `in_global`: address-space casts of addresses fold away (an
    /// initializer has no instruction to carry them).
    pub fn fold(&self, c: &ConstantRef, in_global: bool) -> Result<Option<Constant>, String> {
        Ok(Some(match c.as_ref() {
            L::Int { bits, value } if *bits > 64 => {
                match self.extras.wide_ints.get(&(*bits, *value)) {
                    Some(Some(full)) => Constant::Int(*full),
                    Some(None) => {
                        return Err(format!(
                            "i{bits} constant with low word {value:#x} is ambiguous"
                        ))
                    }
                    // Without C-API extras the low word is all there is (see `import_module`).
                    None => Constant::Int(u128::from(*value)),
                }
            }
            L::Int { bits, value } => {
                Constant::Int(adc_ir::constant::mask_to_width(u128::from(*value), *bits))
            }
            L::Float(Float::Single(f)) => Constant::f32(*f),
            L::Float(Float::Double(f)) => Constant::f64(*f),
            L::Float(other) => {
                return Err(format!("floating-point constant {other:?} is not supported"))
            }
            L::Null(_) => Constant::Int(0),
            L::AggregateZero(_) => Constant::Zero,
            L::Undef(ty) => defined_float(ty).unwrap_or(Constant::Undef),
            L::Poison(ty) => defined_float(ty).unwrap_or(Constant::Poison),
            L::Struct { values, .. } => match self.fold_all(values, in_global)? {
                Some(elems) => Constant::Elements(elems),
                None => return Ok(None),
            },
            L::Vector(values) => match self.fold_all(values, in_global)? {
                Some(elems) => Constant::Elements(elems),
                None => return Ok(None),
            },
            L::Array { element_type, elements } => {
                let is_i8 = matches!(element_type.as_ref(), llvm_ir::Type::IntegerType { bits: 8 });
                let bytes: Option<Vec<u8>> = elements
                    .iter()
                    .map(|e| match e.as_ref() {
                        L::Int { value, .. } => Some(*value as u8),
                        _ => None,
                    })
                    .collect();
                match (is_i8, bytes) {
                    (true, Some(bytes)) => Constant::Bytes(bytes),
                    _ => match self.fold_all(elements, in_global)? {
                        Some(elems) => Constant::Elements(elems),
                        None => return Ok(None),
                    },
                }
            }
            L::GlobalReference { name, .. } => {
                let (symbol, offset) = self.resolve_symbol(&global_name(name))?;
                Constant::Address { symbol, offset }
            }
            L::GetElementPtr(g) => match self.fold(&g.address, in_global)? {
                Some(Constant::Address { symbol, offset }) => {
                    let extra = self.const_gep_offset(c)?;
                    Constant::Address { symbol, offset: offset.wrapping_add(extra) }
                }
                _ => return Ok(None),
            },
            L::BitCast(x) if self.is_ptr_constant(&x.operand) => {
                return self.fold(&x.operand, in_global)
            }
            L::AddrSpaceCast(x) if in_global => return self.fold(&x.operand, in_global),
            // `inttoptr (i64 1 to ptr)`: an absolute address (Enzyme's registration tables
            // store argument indices as pointers this way).
            L::IntToPtr(x) if in_global => match self.fold(&x.operand, in_global)? {
                Some(Constant::Int(address)) => Constant::Int(address & u128::from(u64::MAX)),
                _ => return Ok(None),
            },
            L::BlockAddress => return Err("blockaddress constants are not supported".into()),
            L::TokenNone => return Err("token constants are not supported".into()),
            L::PtrAuth { .. } => return Err("ptrauth constants are not supported".into()),
            _ => return Ok(None),
        }))
    }

    fn fold_all(
        &self,
        cs: &[ConstantRef],
        in_global: bool,
    ) -> Result<Option<Vec<Constant>>, String> {
        let mut out = Vec::with_capacity(cs.len());
        for c in cs {
            match self.fold(c, in_global)? {
                Some(k) => out.push(k),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    fn is_ptr_constant(&self, c: &ConstantRef) -> bool {
        matches!(self.llvm.types.type_of(c).as_ref(), llvm_ir::Type::PointerType { .. })
            || matches!(c.as_ref(), L::GlobalReference { .. } | L::GetElementPtr(_))
    }

    /// A global initializer: everything must fold.
    pub fn initializer(&self, c: &ConstantRef) -> Result<Constant, String> {
        self.fold(c, true)?.ok_or_else(|| {
            format!("initializer `{c}` is a constant expression adc cannot represent")
        })
    }
}

/// `poison` and `undef` floats (scalars, whole vectors, and the lanes the vectorizer
/// leaves unused: `fdiv <4 x float> %v, <poison, poison, poison, 1.75>`) become 1.0, which
/// refines them. Left as zero, an unused lane's partial derivative is infinite (1/0), and
/// its zero adjoint times infinity poisoned the used lanes' gradients with NaN.
fn defined_float(ty: &llvm_ir::TypeRef) -> Option<Constant> {
    use llvm_ir::types::FPType;
    match ty.as_ref() {
        llvm_ir::Type::FPType(FPType::Single) => Some(Constant::f32(1.0)),
        llvm_ir::Type::FPType(FPType::Double) => Some(Constant::f64(1.0)),
        llvm_ir::Type::VectorType { element_type, num_elements, .. } => {
            let lane = defined_float(element_type)?;
            Some(Constant::Elements(vec![lane; *num_elements]))
        }
        _ => None,
    }
}
