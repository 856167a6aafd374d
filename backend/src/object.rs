//! Object files through cranelift-object: position-independent code for the host, one
//! symbol per function and global with the input's name and linkage, externals undefined.

use adc_ir::{Diagnostic, Module};
use cranelift_object::{ObjectBuilder, ObjectModule};

use crate::BackendOptions;

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
    let builder = ObjectBuilder::new(isa, name, cranelift_module::default_libcall_names())
        .map_err(|e| Diagnostic::new(format!("cannot create the object: {e}")))?;
    let mut cm = ObjectModule::new(builder);
    crate::module::build(module, &mut cm, true, options)?;
    cm.finish().emit().map_err(|e| Diagnostic::new(format!("cannot write the object: {e}")))
}
