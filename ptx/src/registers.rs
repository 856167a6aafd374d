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
/// every other byte, a leading digit and `$` itself are spelled `$_XX` (hex). `$` then
/// only starts an escape, so the spelling decodes back: distinct names stay distinct.
pub fn symbol_name(name: &str) -> String {
    let mut out = String::new();
    for (i, byte) in name.bytes().enumerate() {
        let ok = byte.is_ascii_alphabetic() || byte == b'_' || (i > 0 && byte.is_ascii_digit());
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
        assert_eq!(symbol_name("a$b"), "a$_24b");
    }

    /// The inverse of `symbol_name`: exists, so the mapping is injective.
    fn decode(spelled: &str) -> Vec<u8> {
        if spelled == "$_empty" {
            return Vec::new();
        }
        let bytes = spelled.as_bytes();
        let (mut out, mut i) = (Vec::new(), 0);
        while i < bytes.len() {
            if bytes[i] == b'$' {
                assert_eq!(bytes[i + 1], b'_', "{spelled}: `$` only starts an escape");
                let hex = std::str::from_utf8(&bytes[i + 2..i + 4]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 4;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn symbol_names_are_injective() {
        // Names that collided when `$` was kept: `a.` and `a$_2e`, `$` and `$_24`.
        let names = [
            "a.",
            "a$_2e",
            "a$",
            "a$_24",
            "$",
            "$_24",
            "",
            "$_empty",
            "x1",
            "1x",
            "$_31x",
            "a.b",
            "a$_2eb",
            "a_2eb",
            "é",
            "$_c3$_a9",
            "__nv_sin",
            "llvm.nvvm.barrier0",
        ];
        let mut seen = std::collections::HashMap::new();
        for name in names {
            let spelled = symbol_name(name);
            assert!(
                spelled.bytes().enumerate().all(|(i, b)| b.is_ascii_alphabetic()
                    || b == b'_'
                    || b == b'$'
                    || (i > 0 && b.is_ascii_digit())),
                "{spelled} is not a PTX identifier"
            );
            assert_eq!(decode(&spelled), name.as_bytes(), "{name} -> {spelled}");
            if let Some(other) = seen.insert(spelled.clone(), name) {
                panic!("{name} and {other} both map to {spelled}");
            }
        }
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
