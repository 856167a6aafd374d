//! The printer: the canonical text of modules and functions. The printer is the reference
//! for the syntax; the parser accepts exactly what it prints (plus comments and spacing).

use std::collections::HashSet;
use std::fmt::{self, Write};

use cranelift_entity::SecondaryMap;

use crate::constant::{sign_extend, Constant, Symbol};
use crate::entities::{Block, Inst, Value};
use crate::function::{Function, Linkage, Signature};
use crate::instructions::*;
use crate::module::{Global, Module};
use crate::types::Type;

pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_module(&mut out, module);
    out
}

/// Prints one function; symbols are resolved through `module` (the function need not be
/// one of its members yet).
pub fn print_function(module: &Module, func: &Function) -> String {
    let mut out = String::new();
    let _ = FunctionPrinter::new(module, func).write(&mut out);
    out
}

fn write_module(out: &mut String, module: &Module) -> fmt::Result {
    let mut first = true;
    let mut separate = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push('\n');
        }
    };
    if let Some(target) = &module.target {
        separate(out);
        writeln!(out, "target {}", quoted(target))?;
    }
    for global in module.globals.values() {
        separate(out);
        write_global(out, module, global)?;
    }
    for func in module.functions.values() {
        separate(out);
        FunctionPrinter::new(module, func).write(out)?;
    }
    if !module.startup.is_empty() {
        separate(out);
        for startup in &module.startup {
            let name = module.functions.get(startup.function).map_or("?", |f| f.name.as_str());
            writeln!(out, "{} {} {}", startup.kind.keyword(), startup.priority, symbol_name(name))?;
        }
    }
    Ok(())
}

fn write_global(out: &mut String, module: &Module, global: &Global) -> fmt::Result {
    out.push_str("global ");
    write_linkage(out, global.linkage);
    if global.constant {
        out.push_str("const ");
    }
    write!(out, "{}: {}", symbol_name(&global.name), global.ty)?;
    // After a comma: `@g: ptr addrspace(3)` would read as a pointer into space 3.
    if global.addr_space != 0 {
        write!(out, ", addrspace({})", global.addr_space)?;
    }
    write!(out, ", align {}", global.align)?;
    if let Some(init) = &global.init {
        out.push_str(" = ");
        write_constant(out, module, &global.ty, init)?;
    }
    out.push('\n');
    Ok(())
}

fn write_linkage(out: &mut String, linkage: Linkage) {
    if linkage != Linkage::External {
        out.push_str(linkage.name());
        out.push(' ');
    }
}

/// `@name`, quoted when it is not a plain identifier.
pub fn symbol_name(name: &str) -> String {
    format!("@{}", identifier(name))
}

/// A name usable after `@`, `%` or `^`: kept as is when plain, quoted otherwise.
fn identifier(name: &str) -> String {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'));
    if plain {
        name.to_string()
    } else {
        quoted(name)
    }
}

/// A double-quoted string; bytes outside printable ASCII and `"`/`\` become `\XX`.
pub fn quoted(text: &str) -> String {
    quoted_bytes(text.as_bytes())
}

fn quoted_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b:02X}");
        }
    }
    out.push('"');
    out
}

fn write_flags<T: Copy + PartialEq>(
    out: &mut String,
    flags: T,
    names: &[(T, &str)],
    contains: impl Fn(T, T) -> bool,
) {
    for (flag, name) in names {
        if contains(flags, *flag) {
            out.push_str(name);
            out.push(' ');
        }
    }
}

fn write_inst_flags(out: &mut String, flags: InstFlags) {
    let mut rest = flags;
    if flags.contains(InstFlags::FAST) {
        out.push_str("fast ");
        rest = InstFlags(flags.0 & !InstFlags::FAST.0);
    }
    write_flags(out, rest, InstFlags::NAMES, |a, b| a.contains(b));
}

fn write_func_attrs(out: &mut String, attrs: FuncAttrs) {
    for (flag, name) in FuncAttrs::NAMES {
        if attrs.contains(*flag) {
            write!(out, " {name}").ok();
        }
    }
}

fn write_param_attrs(out: &mut String, attrs: ParamAttrs) {
    for (flag, name) in ParamAttrs::NAMES {
        if attrs.contains(*flag) {
            write!(out, " {name}").ok();
        }
    }
}

/// `fn(f64, ptr, ...) -> f64` for indirect calls.
fn write_signature_type(out: &mut String, sig: &Signature) -> fmt::Result {
    out.push_str("fn(");
    write_param_types(out, sig, &[])?;
    out.push(')');
    if let Some(ret) = &sig.ret {
        write!(out, " -> {ret}")?;
    }
    Ok(())
}

fn write_param_types(out: &mut String, sig: &Signature, attrs: &[ParamAttrs]) -> fmt::Result {
    for (i, ty) in sig.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write!(out, "{ty}")?;
        write_param_attrs(out, attrs.get(i).copied().unwrap_or_default());
    }
    if sig.varargs {
        out.push_str(if sig.params.is_empty() { "..." } else { ", ..." });
    }
    Ok(())
}

/// Writes a float stored as raw bits: shortest round-trip decimal, `inf`, `-inf`, `nan`
/// (the positive quiet NaN) or the raw bits in hex for any other NaN.
fn write_float(out: &mut String, ty: &Type, bits: u64) -> fmt::Result {
    if *ty == Type::F32 {
        let value = f32::from_bits(bits as u32);
        if value.is_nan() {
            if bits as u32 == f32::NAN.to_bits() {
                out.push_str("nan");
            } else {
                write!(out, "0x{:08x}", bits as u32)?;
            }
        } else if value.is_infinite() {
            out.push_str(if value > 0.0 { "inf" } else { "-inf" });
        } else {
            write!(out, "{value:?}")?;
        }
    } else {
        let value = f64::from_bits(bits);
        if value.is_nan() {
            if bits == f64::NAN.to_bits() {
                out.push_str("nan");
            } else {
                write!(out, "0x{bits:016x}")?;
            }
        } else if value.is_infinite() {
            out.push_str(if value > 0.0 { "inf" } else { "-inf" });
        } else {
            write!(out, "{value:?}")?;
        }
    }
    Ok(())
}

/// Writes `value` read as an integer of type `ty`: `true`/`false` for `i1`, signed decimal
/// otherwise.
fn write_int(out: &mut String, ty: &Type, value: u128) -> fmt::Result {
    match ty.int_bits() {
        Some(1) => out.push_str(if value & 1 == 1 { "true" } else { "false" }),
        Some(bits) => write!(out, "{}", sign_extend(value, bits))?,
        None => write!(out, "{value}")?,
    }
    Ok(())
}

fn write_constant(out: &mut String, module: &Module, ty: &Type, c: &Constant) -> fmt::Result {
    match c {
        Constant::Zero => out.push_str("zeroinit"),
        Constant::Undef => out.push_str("undef"),
        Constant::Poison => out.push_str("poison"),
        Constant::Int(0) if ty.is_ptr() => out.push_str("null"),
        Constant::Int(v) => write_int(out, ty, *v)?,
        Constant::Float(bits) => write_float(out, ty, *bits)?,
        Constant::Bytes(bytes) => {
            out.push('c');
            out.push_str(&quoted_bytes(bytes));
        }
        Constant::Address { symbol, offset } => {
            let name = match symbol {
                Symbol::Global(g) => module.globals.get(*g).map(|g| g.name.as_str()),
                Symbol::Func(f) => module.functions.get(*f).map(|f| f.name.as_str()),
            };
            match name {
                Some(name) => out.push_str(&symbol_name(name)),
                None => write!(out, "@<invalid {symbol:?}>")?,
            }
            // Spaced: `-` is a name character, `@g-8` is the symbol named `g-8`.
            if *offset > 0 {
                write!(out, " + {offset}")?;
            } else if *offset < 0 {
                write!(out, " - {}", offset.unsigned_abs())?;
            }
        }
        Constant::Elements(elems) => {
            let (open, close) = match ty {
                Type::Struct(s) if s.packed => ("<{", "}>"),
                Type::Struct(_) => ("{", "}"),
                _ => ("[", "]"),
            };
            out.push_str(open);
            for (i, elem) in elems.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let elem_ty = ty.element_type(i as u64).cloned().unwrap_or(Type::I8);
                write_constant(out, module, &elem_ty, elem)?;
            }
            out.push_str(close);
        }
    }
    Ok(())
}

/// Prints one function, giving every value and block a unique name.
pub struct FunctionPrinter<'a> {
    module: &'a Module,
    func: &'a Function,
    value_names: SecondaryMap<Value, String>,
    block_names: SecondaryMap<Block, String>,
}

impl<'a> FunctionPrinter<'a> {
    pub fn new(module: &'a Module, func: &'a Function) -> FunctionPrinter<'a> {
        let dfg = &func.dfg;
        let value_names = unique_names(dfg.values.keys().map(|v| (v, dfg.value_name(v))), |v| {
            format!("v{}", v.as_u32())
        });
        let block_names = unique_names(dfg.blocks.keys().map(|b| (b, dfg.block_name(b))), |b| {
            format!("bb{}", b.as_u32())
        });
        FunctionPrinter { module, func, value_names, block_names }
    }

    pub fn value(&self, v: Value) -> String {
        if self.func.dfg.values.is_valid(v) {
            format!("%{}", identifier(&self.value_names[v]))
        } else {
            format!("%<invalid {v}>")
        }
    }

    pub fn block(&self, b: Block) -> String {
        if self.func.dfg.blocks.is_valid(b) {
            format!("^{}", identifier(&self.block_names[b]))
        } else {
            format!("^<invalid {b}>")
        }
    }

    fn ty(&self, v: Value) -> String {
        match self.func.dfg.values.get(v) {
            Some(data) => data.ty.to_string(),
            None => "<invalid>".to_string(),
        }
    }

    pub fn write(&self, out: &mut String) -> fmt::Result {
        let func = self.func;
        let keyword = if func.is_declaration() { "declare" } else { "func" };
        write!(out, "{keyword} ")?;
        write_linkage(out, func.linkage);
        write!(out, "{}(", symbol_name(&func.name))?;
        if func.is_declaration() {
            write_param_types(out, &func.signature, &func.param_attrs)?;
        } else {
            for (i, param) in func.params().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write!(out, "{}: {}", self.value(*param), self.ty(*param))?;
                write_param_attrs(out, func.param_attrs.get(i).copied().unwrap_or_default());
            }
            if func.signature.varargs {
                out.push_str(if func.params().is_empty() { "..." } else { ", ..." });
            }
        }
        out.push(')');
        if let Some(ret) = &func.signature.ret {
            write!(out, " -> {ret}")?;
        }
        write_func_attrs(out, func.attrs);
        if func.is_declaration() {
            out.push('\n');
            return Ok(());
        }
        out.push_str(" {\n");
        for (index, &block) in func.layout.blocks().iter().enumerate() {
            out.push_str(&self.block(block));
            let params = func.dfg.block_params(block);
            if index > 0 && !params.is_empty() {
                out.push('(');
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write!(out, "{}: {}", self.value(*p), self.ty(*p))?;
                }
                out.push(')');
            }
            out.push_str(":\n");
            for &inst in func.layout.block_insts(block) {
                out.push_str("  ");
                self.write_inst(out, inst)?;
                out.push('\n');
            }
        }
        out.push_str("}\n");
        Ok(())
    }

    /// One instruction without indentation or newline, e.g. `%x = fadd f64 %a, %b`.
    pub fn inst_to_string(&self, inst: Inst) -> String {
        let mut out = String::new();
        let _ = self.write_inst(&mut out, inst);
        out
    }

    fn block_call(&self, call: &BlockCall) -> String {
        let mut s = self.block(call.block);
        if !call.args.is_empty() {
            s.push('(');
            s.push_str(&self.values(&call.args));
            s.push(')');
        }
        s
    }

    fn values(&self, values: &[Value]) -> String {
        values.iter().map(|v| self.value(*v)).collect::<Vec<_>>().join(", ")
    }

    fn write_inst(&self, out: &mut String, inst: Inst) -> fmt::Result {
        use InstructionData as I;
        let dfg = &self.func.dfg;
        let data = &dfg.insts[inst];
        if let Some(result) = dfg.inst_result(inst) {
            write!(out, "{} = ", self.value(result))?;
        }
        let result_ty = || dfg.inst_result(inst).map(|v| self.ty(v)).unwrap_or_default();
        out.push_str(data.opcode_name());
        out.push(' ');
        match data {
            I::Const { ty, value } => {
                write!(out, "{ty} ")?;
                write_constant(out, self.module, ty, value)?;
            }
            I::Unary { flags, arg, .. } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}", result_ty(), self.value(*arg))?;
            }
            I::Binary { flags, args, .. } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}", result_ty(), self.values(args))?;
            }
            I::Fma { flags, args } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}", result_ty(), self.values(args))?;
            }
            I::Icmp { cond, args } => {
                write!(out, "{cond} {} {}", self.ty(args[0]), self.values(args))?;
            }
            I::Fcmp { cond, flags, args } => {
                write_inst_flags(out, *flags);
                write!(out, "{cond} {} {}", self.ty(args[0]), self.values(args))?;
            }
            I::Select { flags, args } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}", result_ty(), self.values(args))?;
            }
            I::Cast { arg, ty, .. } => write!(out, "{} to {ty}", self.value(*arg))?,
            I::Alloca { ty, count, align } => {
                write!(out, "{ty}")?;
                if let Some(count) = count {
                    write!(out, ", {}", self.value(*count))?;
                }
                write!(out, ", align {align}")?;
            }
            I::Load { ty, ptr, align, volatile } => {
                if *volatile {
                    out.push_str("volatile ");
                }
                write!(out, "{ty}, {}, align {align}", self.value(*ptr))?;
            }
            I::Store { value, ptr, align, volatile } => {
                if *volatile {
                    out.push_str("volatile ");
                }
                write!(out, "{}, {}, align {align}", self.value(*value), self.value(*ptr))?;
            }
            I::PtrAdd { flags, ptr, offset } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}, {}", self.ty(*ptr), self.value(*ptr), self.value(*offset))?;
            }
            I::MemCopy { dst, src, len, volatile, .. } => {
                if *volatile {
                    out.push_str("volatile ");
                }
                out.push_str(&self.values(&[*dst, *src, *len]));
            }
            I::MemSet { dst, byte, len, volatile } => {
                if *volatile {
                    out.push_str("volatile ");
                }
                out.push_str(&self.values(&[*dst, *byte, *len]));
            }
            I::Call { callee, args, attrs } => {
                match self.module.functions.get(*callee) {
                    Some(f) => out.push_str(&symbol_name(&f.name)),
                    None => write!(out, "@<invalid {callee}>")?,
                }
                write!(out, "({})", self.values(args))?;
                write_func_attrs(out, *attrs);
            }
            I::CallIndirect { sig, callee, args, attrs } => {
                write_signature_type(out, sig)?;
                write!(out, " {}({})", self.value(*callee), self.values(args))?;
                write_func_attrs(out, *attrs);
            }
            I::ExtractLane { vector, index } => {
                write!(out, "{} {}", self.ty(*vector), self.values(&[*vector, *index]))?;
            }
            I::InsertLane { vector, value, index } => {
                let operands = self.values(&[*vector, *value, *index]);
                write!(out, "{} {operands}", self.ty(*vector))?;
            }
            I::Shuffle { args, mask } => {
                write!(out, "{} {}, [", self.ty(args[0]), self.values(args))?;
                for (i, lane) in mask.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    match lane {
                        Some(lane) => write!(out, "{lane}")?,
                        None => out.push_str("undef"),
                    }
                }
                out.push(']');
            }
            I::Reduce { flags, args, .. } => {
                write_inst_flags(out, *flags);
                write!(out, "{} {}", self.ty(args[0]), self.values(args))?;
            }
            I::ExtractValue { aggregate, indices } => {
                write!(out, "{} {}", self.ty(*aggregate), self.value(*aggregate))?;
                for index in indices {
                    write!(out, ", {index}")?;
                }
            }
            I::InsertValue { aggregate, value, indices } => {
                let operands = self.values(&[*aggregate, *value]);
                write!(out, "{} {operands}", self.ty(*aggregate))?;
                for index in indices {
                    write!(out, ", {index}")?;
                }
            }
            I::AtomicRmw { op, ptr, value, ordering, volatile } => {
                if *volatile {
                    out.push_str("volatile ");
                }
                let operands = self.values(&[*ptr, *value]);
                write!(out, "{op} {} {operands} {ordering}", self.ty(*value))?;
            }
            I::CmpXchg { ptr, expected, new, success, failure, weak, volatile } => {
                if *weak {
                    out.push_str("weak ");
                }
                if *volatile {
                    out.push_str("volatile ");
                }
                let operands = self.values(&[*ptr, *expected, *new]);
                write!(out, "{} {operands} {success} {failure}", self.ty(*expected))?;
            }
            I::Fence { ordering } => write!(out, "{ordering}")?,
            I::Jump { dest } => out.push_str(&self.block_call(dest)),
            I::Brif { cond, then_dest, else_dest } => {
                let (t, e) = (self.block_call(then_dest), self.block_call(else_dest));
                write!(out, "{}, {t}, {e}", self.value(*cond))?;
            }
            I::Switch { value, default, cases } => {
                write!(out, "{}, {} [", self.value(*value), self.block_call(default))?;
                let ty = dfg.values.get(*value).map(|d| d.ty.clone()).unwrap_or(Type::I64);
                for (i, (case, dest)) in cases.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_int(out, &ty, *case)?;
                    write!(out, ": {}", self.block_call(dest))?;
                }
                out.push(']');
            }
            I::Return { value } => {
                if let Some(value) = value {
                    out.push_str(&self.value(*value));
                }
            }
            I::Unreachable => {}
        }
        // Mnemonics without operands leave a trailing space.
        while out.ends_with(' ') {
            out.pop();
        }
        if let Some(loc) = &dfg.debug_locs[inst] {
            write!(out, " !{}:{}:{}", quoted(&loc.file), loc.line, loc.column)?;
        }
        Ok(())
    }
}

/// Picks a unique name per entity: its own name when it has one that is still free,
/// otherwise a fallback such as `v7`, suffixed with `.N` until it is free.
fn unique_names<K: cranelift_entity::EntityRef>(
    entities: impl Iterator<Item = (K, Option<impl AsRef<str>>)>,
    fallback: impl Fn(K) -> String,
) -> SecondaryMap<K, String> {
    let mut names = SecondaryMap::new();
    let mut taken = HashSet::new();
    let mut unnamed = Vec::new();
    for (entity, name) in entities {
        match name {
            Some(name) if taken.insert(name.as_ref().to_string()) => {
                names[entity] = name.as_ref().to_string();
            }
            _ => unnamed.push(entity),
        }
    }
    for entity in unnamed {
        let base = fallback(entity);
        let mut name = base.clone();
        let mut n = 1;
        while !taken.insert(name.clone()) {
            name = format!("{base}.{n}");
            n += 1;
        }
        names[entity] = name;
    }
    names
}
