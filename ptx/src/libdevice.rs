//! libdevice linking: the transcendental functions of CUDA (`__nv_sin`, `__nv_expf`,
//! `__nv_pow`, ...) are defined in NVIDIA's `libdevice.10.bc`, which ships with the PyPI
//! CUDA compiler package next to ptxas. The caller imports it with adc's own LLVM importer;
//! [`link_libdevice`] copies into a module the definitions of every `__nv_*` function it
//! declares, with everything they call and the constant tables they read, so that the
//! emitter writes them as ordinary `.func`s and the PTX needs no later link step.
//!
//! Accuracy is libdevice's (CUDA Math API, "Mathematical Functions" appendix of the CUDA
//! C++ Programming Guide), in ulps of the correctly rounded result: double precision
//! `exp`, `log`, `sin`, `cos`, `tanh` 1-2 ulp (`sin`/`cos` 2, `exp`/`log` 1), `pow` 2 ulp,
//! `sqrt` correctly rounded; single precision `expf` 2, `logf` 1, `sinf`/`cosf` 2, `tanhf`
//! 2, `powf` 4 ulp.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use adc_ir::{Constant, FuncId, GlobalId, InstructionData, Module, Symbol};

/// `libdevice.10.bc` of the CUDA package that holds `ptxas` (`.../cuda_nvcc/bin/ptxas`
/// next to `.../cuda_nvcc/nvvm/libdevice/libdevice.10.bc`), if it is there.
pub fn find_libdevice(ptxas: &Path) -> Option<PathBuf> {
    let root = ptxas.parent()?.parent()?;
    let path = root.join("nvvm/libdevice/libdevice.10.bc");
    path.is_file().then_some(path)
}

/// Where `adc build --emit ptx` finds libdevice: `ADC_LIBDEVICE`, else next to the ptxas
/// named by `ADC_PTXAS`, else in the CUDA package of `.venv` in the current directory
/// (what `scripts/install-deps.sh` creates).
pub fn discover() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ADC_LIBDEVICE") {
        return Some(PathBuf::from(path));
    }
    if let Some(ptxas) = std::env::var_os("ADC_PTXAS") {
        if let Some(found) = find_libdevice(Path::new(&ptxas)) {
            return Some(found);
        }
    }
    let venv_lib = std::fs::read_dir(".venv/lib").ok()?;
    venv_lib.flatten().find_map(|entry| {
        let path =
            entry.path().join("site-packages/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc");
        path.is_file().then_some(path)
    })
}

/// Copies into `module` the definitions from `libdevice` of every function `module`
/// declares and `libdevice` defines, transitively (their callees, their globals). Returns
/// the names of the functions defined this way, in the order they were linked.
pub fn link_libdevice(module: &mut Module, libdevice: &Module) -> Vec<String> {
    use_libdevice_names(module, libdevice);
    let mut linker = Linker { libdevice, funcs: HashMap::new(), globals: HashMap::new() };
    let wanted: Vec<FuncId> = module
        .functions
        .iter()
        .filter(|(_, f)| f.is_declaration())
        .filter_map(|(_, f)| libdevice.function_by_name(&f.name))
        .filter(|id| linkable(libdevice, *id, &mut HashMap::new()))
        .collect();
    let (mut linked, mut linked_ids) = (Vec::new(), Vec::new());
    let mut queue = wanted;
    let mut copied = std::collections::HashSet::new();
    while let Some(source) = queue.pop() {
        if !copied.insert(source) {
            continue;
        }
        let target = linker.function_slot(module, source);
        let mut body = libdevice.functions[source].clone();
        body.linkage = adc_ir::Linkage::Internal;
        for (_, data) in body.dfg.insts.iter_mut() {
            match data {
                // `__nvvm_reflect("__CUDA_FTZ")` and friends ask for compile options: adc
                // emits IEEE code (no flush-to-zero, precise division and square root),
                // which every option's 0 selects.
                InstructionData::Call { callee, .. }
                    if libdevice.functions[*callee].name == "__nvvm_reflect" =>
                {
                    *data =
                        InstructionData::Const { ty: adc_ir::Type::I32, value: Constant::Int(0) };
                }
                InstructionData::Call { callee, .. } => {
                    let src = *callee;
                    if !libdevice.functions[src].is_declaration() {
                        queue.push(src);
                    }
                    *callee = linker.function_slot(module, src);
                }
                InstructionData::Const { value, .. } => {
                    linker.remap_constant(module, value, &mut queue);
                }
                _ => {}
            }
        }
        linked.push(body.name.clone());
        module.functions[target] = body;
        linked_ids.push(target);
    }
    crate::aggregates::scalarize(module, &linked_ids);
    linked
}

/// Points calls of C math functions (`cos`, `expf`: what derivative rules call) at their
/// libdevice versions (`__nv_cos`, `__nv_expf`), which have the same meaning.
fn use_libdevice_names(module: &mut Module, libdevice: &Module) {
    let mut redirect: HashMap<FuncId, FuncId> = HashMap::new();
    let declared: Vec<(FuncId, String)> = module
        .functions
        .iter()
        .filter(|(_, f)| f.is_declaration() && !f.name.starts_with("__nv_"))
        .map(|(id, f)| (id, f.name.clone()))
        .collect();
    for (id, name) in declared {
        let nv = format!("__nv_{name}");
        let Some(source) = libdevice.function_by_name(&nv) else { continue };
        if libdevice.functions[source].is_declaration() {
            continue;
        }
        match module.function_by_name(&nv) {
            Some(existing) => {
                redirect.insert(id, existing);
            }
            None => module.rename_function(id, nv),
        }
    }
    if redirect.is_empty() {
        return;
    }
    for (_, f) in module.functions.iter_mut() {
        for (_, data) in f.dfg.insts.iter_mut() {
            if let InstructionData::Call { callee, .. } = data {
                if let Some(to) = redirect.get(callee) {
                    *callee = *to;
                }
            }
        }
    }
}

/// Whether `id` and everything it calls has a body in `libdevice` (intrinsics aside). A
/// function whose closure lost a body at import (libdevice's `sin`/`cos` reach a slow
/// path written in inline PTX assembly) is left a declaration rather than linked
/// half-way.
fn linkable(libdevice: &Module, id: FuncId, memo: &mut HashMap<FuncId, bool>) -> bool {
    if let Some(known) = memo.get(&id) {
        return *known;
    }
    let f = &libdevice.functions[id];
    if f.is_declaration() {
        return f.name.starts_with("llvm.") || f.name == "__nvvm_reflect";
    }
    // Optimistic for recursion: a cycle adds no missing body by itself.
    memo.insert(id, true);
    let callees: Vec<FuncId> = f
        .layout
        .insts()
        .filter_map(|(_, i)| match &f.dfg.insts[i] {
            InstructionData::Call { callee, .. } => Some(*callee),
            _ => None,
        })
        .collect();
    let ok = callees.into_iter().all(|c| linkable(libdevice, c, memo));
    memo.insert(id, ok);
    ok
}

struct Linker<'l> {
    libdevice: &'l Module,
    /// libdevice function -> its id in the target module.
    funcs: HashMap<FuncId, FuncId>,
    globals: HashMap<GlobalId, GlobalId>,
}

impl Linker<'_> {
    /// The target module's function of the same name as libdevice's `source` (declared
    /// there with libdevice's signature when missing).
    fn function_slot(&mut self, module: &mut Module, source: FuncId) -> FuncId {
        if let Some(id) = self.funcs.get(&source) {
            return *id;
        }
        let f = &self.libdevice.functions[source];
        let id = match module.function_by_name(&f.name) {
            Some(id) => id,
            None => {
                let mut decl = adc_ir::Function::new(f.name.clone(), f.signature.clone());
                decl.attrs = f.attrs;
                module.add_function(decl)
            }
        };
        if !f.is_declaration() {
            self.funcs.insert(source, id);
        }
        id
    }

    fn global_slot(
        &mut self,
        module: &mut Module,
        source: GlobalId,
        queue: &mut Vec<FuncId>,
    ) -> GlobalId {
        if let Some(id) = self.globals.get(&source) {
            return *id;
        }
        let mut global = self.libdevice.globals[source].clone();
        if let Some(existing) = module.global_by_name(&global.name) {
            self.globals.insert(source, existing);
            return existing;
        }
        global.linkage = adc_ir::Linkage::Internal;
        let id = module.add_global(adc_ir::Global { init: None, ..global.clone() });
        self.globals.insert(source, id);
        if let Some(mut init) = global.init.take() {
            self.remap_constant(module, &mut init, queue);
            module.globals[id].init = Some(init);
        }
        id
    }

    fn remap_constant(&mut self, module: &mut Module, c: &mut Constant, queue: &mut Vec<FuncId>) {
        match c {
            Constant::Address { symbol: Symbol::Global(g), .. } => {
                *g = self.global_slot(module, *g, queue);
            }
            Constant::Address { symbol: Symbol::Func(f), .. } => {
                let src = *f;
                if !self.libdevice.functions[src].is_declaration() {
                    queue.push(src);
                }
                *f = self.function_slot(module, src);
            }
            Constant::Elements(elements) => {
                for e in elements {
                    self.remap_constant(module, e, queue);
                }
            }
            _ => {}
        }
    }
}
