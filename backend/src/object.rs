//! Object files through cranelift-object: position-independent code for the host, one
//! symbol per function and global with the input's name and linkage, externals undefined,
//! and the module's constructors and destructors in `.init_array` / `.fini_array`.

use std::collections::HashMap;

use adc_ir::{Diagnostic, Module, StartupKind};
use cranelift_object::object::write::{Object, Relocation, SectionId};
use cranelift_object::object::{
    elf, BinaryFormat, RelocationEncoding, RelocationFlags, RelocationKind, SectionFlags,
    SectionKind,
};
use cranelift_object::{ObjectBuilder, ObjectModule, ObjectProduct};

use crate::lower::ModuleIds;
use crate::BackendOptions;

/// The priority C and C++ give constructors and destructors that name none; its entries
/// go to the plain `.init_array` / `.fini_array` sections.
const DEFAULT_PRIORITY: u32 = 65535;

/// Compiles `module` to the bytes of a relocatable object file (ELF on Linux), with the
/// default options.
pub fn compile_object(module: &Module, name: &str) -> crate::Result<Vec<u8>> {
    compile_object_with(module, name, &BackendOptions::default())
}

/// Compiles `module` to the bytes of a relocatable object file under `options`.
pub fn compile_object_with(
    module: &Module,
    name: &str,
    options: &BackendOptions,
) -> crate::Result<Vec<u8>> {
    let isa = crate::host_isa(true)?;
    let builder = ObjectBuilder::new(isa.clone(), name, cranelift_module::default_libcall_names())
        .map_err(|e| Diagnostic::new(format!("cannot create the object: {e}")))?;
    let mut cm = ObjectModule::new(builder);
    let ids = crate::module::build_in_parallel(module, &mut cm, &*isa, true, options)?;
    let mut product = cm.finish();
    add_startup_functions(module, &ids, &mut product)?;
    product.emit().map_err(|e| Diagnostic::new(format!("cannot write the object: {e}")))
}

/// One pointer per constructor (destructor) in `.init_array` (`.fini_array`), or in
/// `.init_array.NNNNN` for priority NNNNN, which the linker sorts (as clang emits them).
fn add_startup_functions(
    module: &Module,
    ids: &ModuleIds,
    product: &mut ObjectProduct,
) -> crate::Result<()> {
    if module.startup.is_empty() {
        return Ok(());
    }
    if product.object.format() != BinaryFormat::Elf {
        return Err(Diagnostic::new(
            "constructors and destructors (llvm.global_ctors/dtors) are supported in ELF \
             objects only",
        ));
    }
    let mut sections: HashMap<String, SectionId> = HashMap::new();
    for startup in &module.startup {
        let (prefix, sh_type) = match startup.kind {
            StartupKind::Constructor => (".init_array", elf::SHT_INIT_ARRAY),
            StartupKind::Destructor => (".fini_array", elf::SHT_FINI_ARRAY),
        };
        let name = match startup.priority {
            DEFAULT_PRIORITY => prefix.to_string(),
            priority => format!("{prefix}.{priority:05}"),
        };
        let section = *sections
            .entry(name.clone())
            .or_insert_with(|| pointer_section(&mut product.object, name.clone(), sh_type));
        let function = ids.funcs.get(&startup.function).ok_or_else(|| {
            Diagnostic::new(format!(
                "the {} is not a function of the module",
                startup.kind.keyword()
            ))
        })?;
        let symbol = product.function_symbol(*function);
        let offset = product.object.append_section_data(section, &[0; 8], 8);
        let flags = RelocationFlags::Generic {
            kind: RelocationKind::Absolute,
            encoding: RelocationEncoding::Generic,
            size: 64,
        };
        product
            .object
            .add_relocation(section, Relocation { offset, symbol, addend: 0, flags })
            .map_err(|e| Diagnostic::new(format!("cannot add the {name} entry: {e}")))?;
    }
    Ok(())
}

/// A writable, allocated section of pointers of ELF type `sh_type`.
fn pointer_section(object: &mut Object<'static>, name: String, sh_type: u32) -> SectionId {
    let section = object.add_section(Vec::new(), name.into_bytes(), SectionKind::Elf(sh_type));
    object.section_mut(section).flags =
        SectionFlags::Elf { sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_WRITE) };
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` functions of different sizes, each calling the one before it and `sin` (so the
    /// object has relocations to local and external symbols), and a global they store to.
    fn many_functions(n: usize) -> Module {
        let mut text = String::from("global @last: f64, align 8 = 0.0\ndeclare @sin(f64) -> f64\n");
        for i in 0..n {
            text.push_str(&format!(
                "func @f{i}(%x: ptr, %n: i64) -> f64 {{\n^entry:\n  %z = const i64 0\n  \
                 %fz = const f64 0.0\n  jump ^head(%z, %fz)\n\
                 ^head(%i: i64, %s: f64):\n  %more = icmp slt i64 %i, %n\n  \
                 brif %more, ^body, ^exit\n^body:\n  %eight = const i64 8\n  \
                 %off = mul i64 %i, %eight\n  %p = ptradd ptr %x, %off\n  \
                 %v = load f64, %p, align 8\n"
            ));
            // Bodies of different lengths, so threads finish out of order.
            let mut last = "%v".to_string();
            for k in 0..(i % 7) * 3 {
                text.push_str(&format!("  %t{k} = fmul f64 {last}, %v\n"));
                last = format!("%t{k}");
            }
            text.push_str(&format!(
                "  %sv = call @sin({last})\n  %s1 = fadd f64 %s, %sv\n  %one = const i64 1\n  \
                 %i1 = add i64 %i, %one\n  jump ^head(%i1, %s1)\n^exit:\n"
            ));
            if i > 0 {
                text.push_str(&format!(
                    "  %prev = call @f{}(%x, %n)\n  %r = fadd f64 %s, %prev\n",
                    i - 1
                ));
            } else {
                text.push_str("  %r = fadd f64 %s, %fz\n");
            }
            text.push_str("  %g = const ptr @last\n  store %r, %g, align 8\n  ret %r\n}\n");
        }
        let module = adc_ir::text::parse_module(&text).expect("the module parses");
        adc_ir::verify::verify_module(&module).expect("the module verifies");
        module
    }

    #[test]
    fn parallel_codegen_gives_the_sequential_object() {
        // More functions than one batch, so batches follow each other too.
        let module = many_functions(150);
        let with = |threads| {
            let options = BackendOptions { threads, ..BackendOptions::default() };
            compile_object_with(&module, "many", &options).expect("compiles")
        };
        let sequential = with(1);
        for threads in [2, 3, 8] {
            assert!(with(threads) == sequential, "{threads} threads change the object");
        }
    }

    #[test]
    fn codegen_threads_are_bounded_by_the_bodies() {
        let options = BackendOptions { threads: 4, ..BackendOptions::default() };
        assert_eq!(options.codegen_threads(0), 1);
        assert_eq!(options.codegen_threads(1), 1);
        assert_eq!(options.codegen_threads(3), 3);
        assert_eq!(options.codegen_threads(100), 4);
        assert!(BackendOptions::default().codegen_threads(100) >= 1);
    }
}
