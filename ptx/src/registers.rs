//! Virtual registers: one class per IR scalar type, numbered per class within a function.
//! ptxas allocates physical registers, so every SSA value simply gets a fresh one; the
//! declarations (`.reg .f64 %fd<N>;`) are written once the body is known.

use std::collections::HashMap;

use adc_ir::{Type, Value};

/// A PTX register class.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RegClass {
    Pred,
    /// 16-bit registers also hold `i8` values (PTX has no 8-bit registers); only the low
    /// byte is meaningful, so instructions that read the high bits normalize first.
    B16,
    B32,
    B64,
    F32,
    F64,
}

impl RegClass {
    pub const ALL: [RegClass; 6] =
        [RegClass::Pred, RegClass::B16, RegClass::B32, RegClass::B64, RegClass::F32, RegClass::F64];

    /// The register class of an IR type, if it has one.
    pub fn of(ty: &Type) -> Option<RegClass> {
        Some(match ty {
            Type::I1 => RegClass::Pred,
            Type::I8 | Type::I16 => RegClass::B16,
            Type::I32 => RegClass::B32,
            Type::I64 | Type::Ptr(_) => RegClass::B64,
            Type::F32 => RegClass::F32,
            Type::F64 => RegClass::F64,
            _ => return None,
        })
    }

    fn prefix(self) -> &'static str {
        match self {
            RegClass::Pred => "%p",
            RegClass::B16 => "%rs",
            RegClass::B32 => "%r",
            RegClass::B64 => "%rd",
            RegClass::F32 => "%f",
            RegClass::F64 => "%fd",
        }
    }

    /// The type written in `.reg` declarations.
    fn decl_type(self) -> &'static str {
        match self {
            RegClass::Pred => ".pred",
            RegClass::B16 => ".b16",
            RegClass::B32 => ".b32",
            RegClass::B64 => ".b64",
            RegClass::F32 => ".f32",
            RegClass::F64 => ".f64",
        }
    }
}

/// Hands out registers for one function.
#[derive(Default)]
pub struct Registers {
    counts: HashMap<RegClass, u32>,
    values: HashMap<Value, String>,
}

impl Registers {
    /// A fresh register of `class` (temporaries, parameter copies).
    pub fn fresh(&mut self, class: RegClass) -> String {
        let count = self.counts.entry(class).or_insert(0);
        *count += 1;
        format!("{}{}", class.prefix(), count)
    }

    /// The register holding `value`, allocated on first use.
    pub fn value(&mut self, value: Value, class: RegClass) -> String {
        if let Some(name) = self.values.get(&value) {
            return name.clone();
        }
        let name = self.fresh(class);
        self.values.insert(value, name.clone());
        name
    }

    /// `.reg` lines for every class used, PTX's `%name<N>` form declaring `%name0..N-1`.
    pub fn declarations(&self) -> String {
        let mut out = String::new();
        for class in RegClass::ALL {
            if let Some(count) = self.counts.get(&class) {
                out.push_str(&format!(
                    "\t.reg {} {}<{}>;\n",
                    class.decl_type(),
                    class.prefix(),
                    count + 1
                ));
            }
        }
        out
    }
}

/// A PTX identifier for an IR symbol name. PTX identifiers are `[A-Za-z_$][A-Za-z0-9_$]*`;
/// other bytes are spelled `$XX` (hex) so that distinct names stay distinct.
pub fn symbol_name(name: &str) -> String {
    let mut out = String::new();
    for (i, byte) in name.bytes().enumerate() {
        let ok = byte.is_ascii_alphabetic()
            || byte == b'_'
            || (i > 0 && byte.is_ascii_digit())
            || (byte == b'$' && i > 0);
        if ok {
            out.push(byte as char);
        } else {
            out.push_str(&format!("$_{byte:02x}"));
        }
    }
    if out.is_empty() {
        out.push_str("$_empty");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_names_are_escaped() {
        assert_eq!(symbol_name("_Z5saxpyifPKfPf"), "_Z5saxpyifPKfPf");
        assert_eq!(symbol_name("a.b"), "a$_2eb");
        assert_eq!(symbol_name("1x"), "$_31x");
    }

    #[test]
    fn registers_are_declared_per_class() {
        let mut regs = Registers::default();
        assert_eq!(regs.fresh(RegClass::F64), "%fd1");
        assert_eq!(regs.fresh(RegClass::F64), "%fd2");
        assert_eq!(regs.fresh(RegClass::Pred), "%p1");
        assert_eq!(regs.declarations(), "\t.reg .pred %p<2>;\n\t.reg .f64 %fd<3>;\n");
    }
}
