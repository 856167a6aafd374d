//! Module-level translation: symbols first (every function and global gets its id before
//! anything refers to it), then global initializers, aliases, declarations with their
//! attributes, and finally function bodies (`function.rs`).

use std::collections::HashMap;

use adc_ir::{
    Constant, FuncAttrs, FuncId, Function, Global, GlobalId, Linkage, Module, ParamAttrs,
    Signature, StartupFunction, StartupKind, Symbol, Type,
};
use llvm_ir::function::{CallingConvention, FunctionAttribute, MemoryEffect, ParameterAttribute};
use llvm_ir::module::Linkage as L;
use llvm_ir::ConstantRef;

use crate::constants::global_name;
use crate::error::ImportError;
use crate::extras::Extras;
use crate::types;

pub struct ModuleCtx<'a> {
    pub llvm: &'a llvm_ir::Module,
    pub extras: &'a Extras,
    pub module: Module,
    pub funcs: HashMap<String, FuncId>,
    pub globals: HashMap<String, GlobalId>,
    /// Alias name -> its aliasee (resolved lazily; see `resolve_symbol`).
    aliases: HashMap<String, ConstantRef>,
}

/// Intrinsics that become instructions get no declaration; nvvm ones stay calls.
pub fn is_expanded_intrinsic(name: &str) -> bool {
    (name.starts_with("llvm.") && !name.starts_with("llvm.nvvm."))
        || crate::intrinsics::nvvm_rounded_op(name).is_some()
}

fn linkage(l: &L) -> Linkage {
    match l {
        L::Internal => Linkage::Internal,
        L::Private => Linkage::Private,
        L::WeakAny | L::LinkOnceAny => Linkage::Weak,
        L::WeakODR => Linkage::WeakOdr,
        L::LinkOnceODR | L::LinkOnceODRAutoHide => Linkage::LinkOnceOdr,
        L::Common => Linkage::Common,
        L::ExternalWeak => Linkage::ExternWeak,
        _ => Linkage::External,
    }
}

/// Function attributes adc tracks; `memory(...)` becomes readnone/readonly/writeonly/
/// argmemonly.
pub fn func_attrs(attrs: &[FunctionAttribute]) -> FuncAttrs {
    let mut out = FuncAttrs::empty();
    for a in attrs {
        match a {
            FunctionAttribute::NoInline => out.insert(FuncAttrs::NOINLINE),
            FunctionAttribute::AlwaysInline => out.insert(FuncAttrs::ALWAYSINLINE),
            FunctionAttribute::NoUnwind => out.insert(FuncAttrs::NOUNWIND),
            FunctionAttribute::WillReturn => out.insert(FuncAttrs::WILLRETURN),
            FunctionAttribute::NoReturn => out.insert(FuncAttrs::NORETURN),
            FunctionAttribute::NoFree => out.insert(FuncAttrs::NOFREE),
            FunctionAttribute::ReadNone => out.insert(FuncAttrs::READNONE),
            FunctionAttribute::ReadOnly => out.insert(FuncAttrs::READONLY),
            FunctionAttribute::WriteOnly => out.insert(FuncAttrs::WRITEONLY),
            FunctionAttribute::ArgMemOnly => out.insert(FuncAttrs::ARGMEMONLY),
            FunctionAttribute::Memory { default, argmem, inaccessible_mem } => {
                let all = [default, argmem, inaccessible_mem];
                let reads =
                    all.iter().any(|e| matches!(e, MemoryEffect::Read | MemoryEffect::ReadWrite));
                let writes =
                    all.iter().any(|e| matches!(e, MemoryEffect::Write | MemoryEffect::ReadWrite));
                match (reads, writes) {
                    (false, false) => out.insert(FuncAttrs::READNONE),
                    (true, false) => out.insert(FuncAttrs::READONLY),
                    (false, true) => out.insert(FuncAttrs::WRITEONLY),
                    (true, true) => {}
                }
                let only_args = *default == MemoryEffect::None
                    && *inaccessible_mem == MemoryEffect::None
                    && *argmem != MemoryEffect::None;
                if only_args {
                    out.insert(FuncAttrs::ARGMEMONLY);
                }
            }
            _ => {}
        }
    }
    out
}

/// Byte size of a `byval` parameter's pointee, for the ABI.
pub fn byval_size(types: &llvm_ir::types::Types, attrs: &[ParameterAttribute]) -> Option<u32> {
    attrs.iter().find_map(|a| match a {
        ParameterAttribute::ByVal(ty) => {
            crate::types::convert(types, ty).ok().and_then(|t| u32::try_from(t.size()).ok())
        }
        _ => None,
    })
}

/// The byte size of the aggregate behind an `sret` parameter.
fn sret_size(types: &llvm_ir::types::Types, attrs: &[ParameterAttribute]) -> Option<u32> {
    attrs.iter().find_map(|a| match a {
        ParameterAttribute::SRet(ty) => {
            crate::types::convert(types, ty).ok().and_then(|t| u32::try_from(t.size()).ok())
        }
        _ => None,
    })
}

pub fn param_attrs(attrs: &[ParameterAttribute]) -> ParamAttrs {
    let mut out = ParamAttrs::empty();
    for a in attrs {
        match a {
            ParameterAttribute::NoAlias => out.insert(ParamAttrs::NOALIAS),
            ParameterAttribute::NoCapture => out.insert(ParamAttrs::NOCAPTURE),
            ParameterAttribute::NonNull => out.insert(ParamAttrs::NONNULL),
            ParameterAttribute::ZeroExt => out.insert(ParamAttrs::ZEROEXT),
            ParameterAttribute::SignExt => out.insert(ParamAttrs::SIGNEXT),
            // The backend passes these by the System V rules (`byval`: a copy in the
            // stack's argument area; `sret`: the pointer also returned in rax). A byval
            // callee still copies its argument on entry (`FuncCtx::copy_byval_params`), so
            // the interpreter and passes may keep treating it as a plain pointer.
            ParameterAttribute::ByVal(_) => out.insert(ParamAttrs::BYVAL),
            ParameterAttribute::SRet(_) => out.insert(ParamAttrs::SRET),
            _ => {}
        }
    }
    out
}

impl<'a> ModuleCtx<'a> {
    /// Resolves a symbol name (alias-aware) to what it addresses.
    pub fn resolve_symbol(&self, name: &str) -> Result<(Symbol, i64), String> {
        self.resolve_depth(name, 0)
    }

    fn resolve_depth(&self, name: &str, depth: u32) -> Result<(Symbol, i64), String> {
        if let Some(f) = self.funcs.get(name) {
            return Ok((Symbol::Func(*f), 0));
        }
        if let Some(g) = self.globals.get(name) {
            return Ok((Symbol::Global(*g), 0));
        }
        let Some(aliasee) = self.aliases.get(name) else {
            return Err(format!("reference to unknown symbol @{name} (ifunc or intrinsic?)"));
        };
        if depth > 16 {
            return Err(format!("alias @{name} is part of a cycle"));
        }
        match self.fold(aliasee, true)? {
            Some(Constant::Address { symbol, offset }) => Ok((symbol, offset)),
            _ => {
                Err(format!("alias @{name} = `{aliasee}` does not resolve to a symbol plus offset"))
            }
        }
    }

    /// A libm (or helper) declaration by name, created on first use.
    pub fn declare(&mut self, name: &str, sig: Signature, attrs: FuncAttrs) -> FuncId {
        if let Some(f) = self.funcs.get(name) {
            return *f;
        }
        let mut func = Function::new(name, sig);
        func.attrs = attrs;
        let id = self.module.add_function(func);
        self.funcs.insert(name.to_string(), id);
        id
    }
}

pub fn translate_module(llvm: &llvm_ir::Module, extras: &Extras) -> Result<Module, ImportError> {
    let (module, skipped) = translate_module_with(llvm, extras, false)?;
    debug_assert!(skipped.is_empty());
    Ok(module)
}

/// Translates `llvm`; with `keep_going`, a function whose body cannot be translated stays
/// a declaration and its error is returned beside the module instead of failing.
pub fn translate_module_with(
    llvm: &llvm_ir::Module,
    extras: &Extras,
    keep_going: bool,
) -> Result<(Module, Vec<ImportError>), ImportError> {
    let mut skipped = Vec::new();
    let mut m = ModuleCtx {
        llvm,
        extras,
        module: Module::new(),
        funcs: HashMap::new(),
        globals: HashMap::new(),
        aliases: HashMap::new(),
    };
    m.module.target = llvm.target_triple.clone().filter(|t| !t.is_empty());
    let types = &llvm.types;

    // Functions: defined ones in order, then declarations.
    for f in &llvm.functions {
        let sig = signature(types, &f.parameters, &f.return_type, f.is_var_arg)
            .map_err(|reason| ImportError::Function { function: f.name.clone(), reason })?;
        let mut func = Function::new(f.name.clone(), sig);
        func.linkage = linkage(&f.linkage);
        func.attrs = func_attrs(&f.function_attributes);
        if f.return_attributes.contains(&ParameterAttribute::NoAlias) {
            func.attrs.insert(FuncAttrs::NOALIAS_RETURN);
        }
        if f.calling_convention == CallingConvention::PTX_Kernel || extras.kernels.contains(&f.name)
        {
            func.attrs.insert(FuncAttrs::KERNEL);
        }
        func.param_attrs = f.parameters.iter().map(|p| param_attrs(&p.attributes)).collect();
        func.byval_sizes = f.parameters.iter().map(|p| byval_size(types, &p.attributes)).collect();
        func.sret_size = f.parameters.first().and_then(|p| sret_size(types, &p.attributes));
        let id = m.module.add_function(func);
        m.funcs.insert(f.name.clone(), id);
    }
    for d in &llvm.func_declarations {
        if is_expanded_intrinsic(&d.name) {
            continue;
        }
        let sig = signature(types, &d.parameters, &d.return_type, d.is_var_arg)
            .map_err(|reason| ImportError::Function { function: d.name.clone(), reason })?;
        let mut func = Function::new(d.name.clone(), sig);
        func.linkage = linkage(&d.linkage);
        if d.return_attributes.contains(&ParameterAttribute::NoAlias) {
            func.attrs.insert(FuncAttrs::NOALIAS_RETURN);
        }
        func.param_attrs = d.parameters.iter().map(|p| param_attrs(&p.attributes)).collect();
        func.byval_sizes = d.parameters.iter().map(|p| byval_size(types, &p.attributes)).collect();
        let id = m.module.add_function(func);
        m.funcs.insert(d.name.clone(), id);
    }

    // Globals: ids and types first, initializers once every symbol exists.
    let mut pending = Vec::new();
    for g in &llvm.global_vars {
        let name = global_name(&g.name);
        if name == "llvm.used" || name == "llvm.compiler.used" {
            continue;
        }
        let err = |reason: String| ImportError::Global { global: name.clone(), reason };
        let startup_kind = match name.as_str() {
            "llvm.global_ctors" => Some(StartupKind::Constructor),
            "llvm.global_dtors" => Some(StartupKind::Destructor),
            _ => None,
        };
        if let Some(kind) = startup_kind {
            if let Some(init) = &g.initializer {
                let startup = startup_functions(&m, kind, init).map_err(err)?;
                m.module.startup.extend(startup);
            }
            continue;
        }
        if name.starts_with("llvm.") {
            return Err(err("this special LLVM global is not supported".into()));
        }
        if g.thread_local_mode != llvm_ir::module::ThreadLocalMode::NotThreadLocal {
            return Err(err("thread-local globals are not supported".into()));
        }
        let ty = match &g.initializer {
            Some(init) => types::convert(types, &types.type_of(init)).map_err(err)?,
            None => extras.global_types.get(&name).cloned().unwrap_or(Type::array(Type::I8, 0)),
        };
        let id = m.module.add_global(Global {
            name: name.clone(),
            ty: ty.clone(),
            linkage: linkage(&g.linkage),
            constant: g.is_constant,
            // LLVM's 0 means "the type's ABI alignment".
            align: if g.alignment == 0 { ty.align() as u32 } else { g.alignment },
            addr_space: g.addr_space,
            init: None,
        });
        m.globals.insert(name, id);
        if let Some(init) = &g.initializer {
            pending.push((id, init));
        }
    }
    for a in &llvm.global_aliases {
        m.aliases.insert(global_name(&a.name), a.aliasee.clone());
    }
    for a in &llvm.global_aliases {
        let name = global_name(&a.name);
        m.resolve_symbol(&name).map_err(|reason| ImportError::Global { global: name, reason })?;
    }
    for (id, init) in pending {
        let value = m.initializer(init).map_err(|reason| ImportError::Global {
            global: m.module.globals[id].name.clone(),
            reason,
        })?;
        m.module.globals[id].init = Some(value);
    }

    for f in &llvm.functions {
        if f.linkage == L::AvailableExternally {
            // Its body is a copy of one defined elsewhere: keep the declaration only.
            continue;
        }
        let id = m.funcs[&f.name];
        match crate::function::translate_function(&mut m, f, id) {
            Ok(func) => m.module.functions[id] = func,
            Err(e) if keep_going => skipped.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok((m.module, skipped))
}

/// The entries `{ i32 priority, ptr function, ptr data }` of `llvm.global_ctors` or
/// `llvm.global_dtors`. The data field (the global whose comdat decides whether the entry
/// is kept) needs nothing here: every symbol of the module is kept.
fn startup_functions(
    m: &ModuleCtx<'_>,
    kind: StartupKind,
    init: &ConstantRef,
) -> Result<Vec<StartupFunction>, String> {
    use llvm_ir::Constant as C;
    let entries = match init.as_ref() {
        C::Array { elements, .. } => elements.as_slice(),
        C::AggregateZero(_) => &[],
        other => return Err(format!("unexpected initializer {other}")),
    };
    let mut out = Vec::new();
    for entry in entries {
        let C::Struct { values, .. } = entry.as_ref() else {
            return Err(format!("unexpected entry {entry}"));
        };
        let (priority, function) = match values.as_slice() {
            [priority, function, ..] => (priority.as_ref(), function.as_ref()),
            _ => return Err(format!("unexpected entry {entry}")),
        };
        let C::Int { value: priority, .. } = priority else {
            return Err(format!("entry {entry}: the priority is not an integer"));
        };
        let C::GlobalReference { name, .. } = function else {
            return Err(format!("entry {entry}: not a function"));
        };
        let name = global_name(name);
        let function =
            *m.funcs.get(&name).ok_or_else(|| format!("entry {entry}: no function @{name}"))?;
        let priority = u32::try_from(*priority).map_err(|_| format!("entry {entry}: priority"))?;
        out.push(StartupFunction { kind, priority, function });
    }
    Ok(out)
}

fn signature(
    types: &llvm_ir::types::Types,
    params: &[llvm_ir::function::Parameter],
    ret: &llvm_ir::TypeRef,
    varargs: bool,
) -> Result<Signature, String> {
    let params =
        params.iter().map(|p| types::convert(types, &p.ty)).collect::<Result<Vec<_>, _>>()?;
    Ok(Signature { params, ret: types::return_type(types, ret)?, varargs })
}
