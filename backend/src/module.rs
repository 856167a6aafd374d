//! The module driver shared by the object writer and the JIT: declares every function
//! and global with its linkage, defines data, emits `%al` thunks for variadic callees and
//! entry thunks for variadic definitions (`varargs.rs`), and lowers every defined function. Errors name the adc function or global.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use adc_ir::{Constant, Diagnostic, FuncId, InstructionData, Linkage, Module, Symbol};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::Context;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_module::{
    DataDescription, Linkage as ClLinkage, Module as ClModule, ModuleReloc, ModuleRelocTarget,
};

use crate::data::write_constant;
use crate::lower::{lower_function, ModuleIds};
use crate::BackendOptions;

fn linkage(linkage: Linkage, defined: bool) -> ClLinkage {
    if !defined {
        return ClLinkage::Import;
    }
    match linkage {
        Linkage::External | Linkage::Common => ClLinkage::Export,
        Linkage::Internal | Linkage::Private => ClLinkage::Local,
        Linkage::Weak | Linkage::LinkOnceOdr | Linkage::WeakOdr => ClLinkage::Preemptible,
        Linkage::ExternWeak => ClLinkage::Import,
    }
}

/// Declares and defines everything in `module` into `cm`. `pic` selects the thunk form.
pub fn build<M: ClModule>(
    module: &Module,
    cm: &mut M,
    pic: bool,
    options: &BackendOptions,
) -> crate::Result<ModuleIds> {
    build_with(module, cm, pic, options, Bodies::Sequential(None))
}

/// [`build`] with the bodies compiled by up to `options.threads` threads at once
/// ([`BackendOptions::codegen_threads`]). `isa` must be the ISA `cm` compiles for (the
/// same `Arc`): the compiling threads use it while `cm` is busy lowering. Only for
/// modules whose `define_function` is `compile` plus `define_function_bytes`
/// (cranelift-object's `ObjectModule`).
pub fn build_in_parallel<M: ClModule>(
    module: &Module,
    cm: &mut M,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    pic: bool,
    options: &BackendOptions,
) -> crate::Result<ModuleIds> {
    build_with(module, cm, pic, options, Bodies::Parallel(isa))
}

/// What [`build_inspecting`] shows each optimized body to.
type Inspector<'a> = &'a mut dyn FnMut(&str, &cranelift_codegen::ir::Function);

/// How [`build_with`] compiles the function bodies.
enum Bodies<'a> {
    /// One after the other with `define_function`, showing each optimized body to the
    /// inspector when there is one.
    Sequential(Option<Inspector<'a>>),
    /// Several at once, with this ISA (see [`build_in_parallel`]).
    Parallel(&'a dyn cranelift_codegen::isa::TargetIsa),
}

/// [`build`], showing `inspect` each function's Cranelift IR as Cranelift optimized it
/// (tests look at which types and instructions the lowering chose). Sequential.
#[cfg(test)]
pub fn build_inspecting<M: ClModule>(
    module: &Module,
    cm: &mut M,
    pic: bool,
    options: &BackendOptions,
    inspect: Inspector<'_>,
) -> crate::Result<ModuleIds> {
    build_with(module, cm, pic, options, Bodies::Sequential(Some(inspect)))
}

fn build_with<M: ClModule>(
    module: &Module,
    cm: &mut M,
    pic: bool,
    options: &BackendOptions,
    bodies: Bodies<'_>,
) -> crate::Result<ModuleIds> {
    let isa = cm.isa();
    let mut ids = ModuleIds {
        funcs: HashMap::new(),
        data: HashMap::new(),
        thunks: HashMap::new(),
        va_bodies: HashMap::new(),
        call_conv: isa.default_call_conv(),
        frontend: isa.frontend_config(),
        simd: options.simd,
        simd_abi: if options.simd { simd_abi_functions(module) } else { HashSet::new() },
    };
    for (id, func) in module.functions.iter() {
        let err = |e: String| Diagnostic::new(format!("cannot declare @{}: {e}", func.name));
        let sig = crate::abi::signature(
            &func.signature,
            &func.param_attrs,
            &func.byval_sizes,
            &[],
            ids.call_conv,
            ids.simd_abi.contains(&id),
        )
        .map_err(err)?;
        let machine_helper = func.is_declaration() && machine_helper_bytes(&func.name).is_some();
        let l = if machine_helper {
            ClLinkage::Local
        } else {
            linkage(func.linkage, !func.is_declaration())
        };
        let cl = cm.declare_function(&func.name, l, &sig).map_err(|e| err(e.to_string()))?;
        ids.funcs.insert(id, cl);
        if machine_helper {
            define_machine_helper(cm, &func.name, cl).map_err(err)?;
        }
    }
    for (id, global) in module.globals.iter() {
        let l = linkage(global.linkage, global.init.is_some());
        let cl = cm
            .declare_data(&global.name, l, !global.constant, false)
            .map_err(|e| Diagnostic::new(format!("cannot declare @{}: {e}", global.name)))?;
        ids.data.insert(id, cl);
    }
    define_thunks(module, cm, &mut ids, pic)?;
    crate::varargs::define_entry_thunks(module, cm, &mut ids, pic)?;
    for (id, global) in module.globals.iter() {
        let Some(init) = &global.init else { continue };
        let err = |e: String| Diagnostic::new(format!("cannot emit global @{}: {e}", global.name));
        let size = usize::try_from(global.ty.size()).map_err(|_| err("too large".into()))?;
        let mut bytes = vec![0u8; size];
        let mut relocs = Vec::new();
        write_constant(&global.ty, init, 0, &mut bytes, &mut relocs).map_err(err)?;
        let mut desc = DataDescription::new();
        if relocs.is_empty() && bytes.iter().all(|b| *b == 0) {
            desc.define_zeroinit(size.max(1));
        } else {
            desc.define(bytes.into_boxed_slice());
        }
        desc.set_align(u64::from(global.align).max(1).next_power_of_two());
        for r in relocs {
            let offset = u32::try_from(r.offset).map_err(|_| err("offset too large".into()))?;
            match r.symbol {
                Symbol::Global(g) => {
                    let gv = cm.declare_data_in_data(ids.data[&g], &mut desc);
                    desc.write_data_addr(offset, gv, r.addend);
                }
                Symbol::Func(f) => {
                    let fr = cm.declare_func_in_data(ids.funcs[&f], &mut desc);
                    if r.addend != 0 {
                        return Err(err("function address with an offset".into()));
                    }
                    desc.write_function_addr(offset, fr);
                }
            }
        }
        cm.define_data(ids.data[&id], &desc).map_err(|e| err(e.to_string()))?;
    }
    let defined: Vec<FuncId> =
        module.functions.iter().filter(|(_, f)| !f.is_declaration()).map(|(id, _)| id).collect();
    let mut inspect = match bodies {
        Bodies::Parallel(isa) => {
            let threads = options.codegen_threads(defined.len());
            if threads > 1 {
                define_in_parallel(module, cm, isa, &ids, &defined, threads)?;
                return Ok(ids);
            }
            None
        }
        Bodies::Sequential(inspect) => inspect,
    };
    let mut fbc = FunctionBuilderContext::new();
    let mut ctx = Context::new();
    for &id in &defined {
        ctx.clear();
        lower_one(module, id, cm, &ids, &mut ctx, &mut fbc)?;
        let cl = ids.va_bodies.get(&id).unwrap_or(&ids.funcs[&id]);
        let defined =
            catch_unwind(AssertUnwindSafe(|| cm.define_function(*cl, &mut ctx).map_err(Box::new)));
        match defined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(compile_error(module, id, &e)),
            Err(_) => return Err(compile_error_text(module, id, "Cranelift panicked")),
        }
        if let Some(inspect) = inspect.as_mut() {
            inspect(&module.functions[id].name, &ctx.func);
        }
    }
    Ok(ids)
}

/// Stack of each compiling thread: the main thread's usual 8 MiB, on which Cranelift
/// compiles a large function in the sequential build.
const COMPILE_STACK: usize = 8 << 20;

/// Why Cranelift did not compile a body.
enum Failure {
    Error(Box<cranelift_module::ModuleError>),
    Panic,
}

/// A compiled body, as `define_function_bytes` takes it.
struct Compiled {
    alignment: u64,
    code: Vec<u8>,
    relocs: Vec<ModuleReloc>,
}

/// Lowers function `id` into `ctx.func`; errors name the function.
fn lower_one<M: ClModule>(
    module: &Module,
    id: FuncId,
    cm: &mut M,
    ids: &ModuleIds,
    ctx: &mut Context,
    fbc: &mut FunctionBuilderContext,
) -> crate::Result<()> {
    let lowered =
        catch_unwind(AssertUnwindSafe(|| lower_function(module, id, cm, ids, &mut ctx.func, fbc)));
    match lowered {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(compile_error_text(module, id, &e)),
        Err(_) => Err(compile_error_text(module, id, "internal error in the Cranelift lowering")),
    }
}

/// Compiles one lowered body for symbol `cl`: what `ObjectModule::define_function` does
/// before it calls `define_function_bytes` (same alignment, same relocations).
fn compile_one(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    ctx: &mut Context,
    cl: cranelift_module::FuncId,
) -> Result<Compiled, Failure> {
    let mut control = cranelift_codegen::control::ControlPlane::default();
    let compiled = catch_unwind(AssertUnwindSafe(|| match ctx.compile(isa, &mut control) {
        Ok(code) => Ok(Compiled {
            alignment: u64::from(code.buffer.alignment),
            code: code.code_buffer().to_vec(),
            relocs: Vec::new(),
        }),
        Err(e) => Err(Failure::Error(Box::new(cranelift_module::ModuleError::from(e)))),
    }));
    let mut compiled = compiled.unwrap_or(Err(Failure::Panic))?;
    if let Some(code) = ctx.compiled_code() {
        compiled.relocs = code
            .buffer
            .relocs()
            .iter()
            .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, cl))
            .collect();
    }
    Ok(compiled)
}

/// Defines the `defined` bodies with `threads` threads compiling at once, `isa` being
/// the ISA `cm` compiles for. This thread lowers every body in module order (lowering
/// declares references in `cm`) and hands each to the compiling threads as soon as it is
/// lowered; once all are handed out it compiles too. No barrier but the last body: a
/// thread that the machine's other work slows holds up one body, not a batch. The bodies
/// are then defined in module order with the bytes and relocations `define_function`
/// would have used, so the object is that of the sequential build, and so is the error
/// reported (the first in module order).
fn define_in_parallel<M: ClModule>(
    module: &Module,
    cm: &mut M,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    ids: &ModuleIds,
    defined: &[FuncId],
    threads: usize,
) -> crate::Result<()> {
    use std::sync::{mpsc, Mutex};
    type Job = (usize, cranelift_module::FuncId, Context);
    type Done = (usize, Result<Compiled, Failure>);
    let symbol = |id: &FuncId| *ids.va_bodies.get(id).unwrap_or(&ids.funcs[id]);
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let work = |tx: mpsc::Sender<Done>| loop {
        // The lock is held while waiting, so one waiting thread takes the next job.
        let job = job_rx.lock().ok().and_then(|rx| rx.recv().ok());
        let Some((index, cl, mut ctx)) = job else { break };
        if tx.send((index, compile_one(isa, &mut ctx, cl))).is_err() {
            break;
        }
    };
    let mut lowering_failed = None;
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let tx = done_tx.clone();
            // A thread that cannot start leaves its share to the others.
            let _ = std::thread::Builder::new()
                .stack_size(COMPILE_STACK)
                .spawn_scoped(scope, || work(tx));
        }
        let mut fbc = FunctionBuilderContext::new();
        for (index, id) in defined.iter().enumerate() {
            let mut ctx = Context::new();
            if let Err(e) = lower_one(module, *id, cm, ids, &mut ctx, &mut fbc) {
                // The bodies before it are still compiled and defined first, so that the
                // error reported is the one the sequential build reports.
                lowering_failed = Some(e);
                break;
            }
            if job_tx.send((index, symbol(id), ctx)).is_err() {
                break;
            }
        }
        drop(job_tx);
        work(done_tx);
    });
    let mut results: Vec<Option<Result<Compiled, Failure>>> =
        (0..defined.len()).map(|_| None).collect();
    for (index, result) in done_rx.try_iter() {
        results[index] = Some(result);
    }
    for (id, result) in defined.iter().zip(results) {
        // Only after a failed lowering are bodies missing.
        let Some(result) = result else { break };
        let compiled = match result {
            Ok(compiled) => compiled,
            Err(Failure::Error(e)) => return Err(compile_error(module, *id, &e)),
            Err(Failure::Panic) => {
                return Err(compile_error_text(module, *id, "Cranelift panicked"))
            }
        };
        cm.define_function_bytes(symbol(id), compiled.alignment, &compiled.code, &compiled.relocs)
            .map_err(|e| compile_error(module, *id, &e))?;
    }
    lowering_failed.map_or(Ok(()), Err)
}

/// `cannot compile @name: what`.
fn compile_error_text(module: &Module, id: FuncId, what: &str) -> Diagnostic {
    Diagnostic::new(format!("cannot compile @{}: {what}", module.functions[id].name))
}

/// A Cranelift failure as the error naming function `id`.
fn compile_error(module: &Module, id: FuncId, e: &cranelift_module::ModuleError) -> Diagnostic {
    let detail = match e {
        cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(
            v,
        )) => {
            // Type-set dumps are long: keep the start of each error.
            let lines: Vec<String> =
                v.to_string().lines().map(|l| l.chars().take(160).collect()).collect();
            format!("Cranelift verifier: {}", lines.join("; "))
        }
        _ => format!("{e:?}"),
    };
    compile_error_text(module, id, &detail)
}

/// The functions whose vectors cross calls in SIMD form: defined here, local to the
/// module, and never used as an address, so that every caller is a direct call that adc
/// compiles. Everything else keeps the lane form at its boundary (C callers, function
/// pointers, the JIT's trampolines).
fn simd_abi_functions(module: &Module) -> HashSet<FuncId> {
    let mut address_taken = HashSet::new();
    let mut note = |c: &Constant| note_function_addresses(c, &mut address_taken);
    for global in module.globals.values() {
        if let Some(init) = &global.init {
            note(init);
        }
    }
    for func in module.functions.values() {
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Const { value, .. } = &func.dfg.insts[inst] {
                note(value);
            }
        }
    }
    module
        .functions
        .iter()
        .filter(|(id, f)| {
            !f.is_declaration()
                && !f.signature.varargs
                && matches!(f.linkage, Linkage::Internal | Linkage::Private)
                && !address_taken.contains(id)
        })
        .map(|(id, _)| id)
        .collect()
}

fn note_function_addresses(c: &Constant, out: &mut HashSet<FuncId>) {
    match c {
        Constant::Address { symbol: Symbol::Func(f), .. } => {
            out.insert(*f);
        }
        Constant::Elements(elems) => {
            for e in elems {
                note_function_addresses(e, out);
            }
        }
        _ => {}
    }
}

/// `__adc_fp_flush_enter() -> i32`: sets MXCSR's flush-to-zero and denormals-are-zero
/// bits and returns the previous MXCSR; `__adc_fp_flush_exit(i32)` restores it. Calls to
/// them bracket derivatives built with `--denormals=flush` (`src/build.rs`). Cranelift
/// has no MXCSR instructions, so they are machine code (leaf functions using the red
/// zone). Declarations with these names are defined here, locally.
pub const FLUSH_ENTER: &str = "__adc_fp_flush_enter";
pub const FLUSH_EXIT: &str = "__adc_fp_flush_exit";

fn machine_helper_bytes(name: &str) -> Option<&'static [u8]> {
    const ENTER: &[u8] = &[
        0x0f, 0xae, 0x5c, 0x24, 0xfc, // stmxcsr -4(%rsp)
        0x8b, 0x44, 0x24, 0xfc, // mov -4(%rsp), %eax
        0x89, 0xc1, // mov %eax, %ecx
        0x81, 0xc9, 0x40, 0x80, 0x00, 0x00, // or $0x8040, %ecx (FTZ | DAZ)
        0x89, 0x4c, 0x24, 0xfc, // mov %ecx, -4(%rsp)
        0x0f, 0xae, 0x54, 0x24, 0xfc, // ldmxcsr -4(%rsp)
        0xc3, // ret
    ];
    const EXIT: &[u8] = &[
        0x89, 0x7c, 0x24, 0xfc, // mov %edi, -4(%rsp)
        0x0f, 0xae, 0x54, 0x24, 0xfc, // ldmxcsr -4(%rsp)
        0xc3, // ret
    ];
    match name {
        FLUSH_ENTER => Some(ENTER),
        FLUSH_EXIT => Some(EXIT),
        _ => None,
    }
}

fn define_machine_helper<M: ClModule>(
    cm: &mut M,
    name: &str,
    id: cranelift_module::FuncId,
) -> Result<(), String> {
    let arch = cm.isa().triple().architecture;
    if arch != target_lexicon::Architecture::X86_64 {
        return Err(format!(
            "flushing denormals (`{name}`) is implemented for x86-64 only, not {arch}"
        ));
    }
    let bytes = machine_helper_bytes(name).ok_or("not a machine helper")?;
    cm.define_function_bytes(id, 16, bytes, &[]).map_err(|e| e.to_string())
}

/// A thunk per variadic callee that is called directly: Cranelift never sets `%al`, the
/// System V upper bound on vector registers a variadic callee must save, so calls go
/// through `mov al, 8; jmp callee` with the call site's own signature.
fn define_thunks<M: ClModule>(
    module: &Module,
    cm: &mut M,
    ids: &mut ModuleIds,
    pic: bool,
) -> crate::Result<()> {
    let mut called = Vec::new();
    for func in module.functions.values() {
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Call { callee, .. } = &func.dfg.insts[inst] {
                let varargs = module.functions.get(*callee).is_some_and(|f| f.signature.varargs);
                if varargs && !called.contains(callee) {
                    called.push(*callee);
                }
            }
        }
    }
    for callee in called {
        let name = &module.functions[callee].name;
        let err = |e: String| Diagnostic::new(format!("cannot emit the thunk for @{name}: {e}"));
        let sig = cranelift_codegen::ir::Signature::new(ids.call_conv);
        let id = cm
            .declare_function(&format!("__adc_varargs.{name}"), ClLinkage::Local, &sig)
            .map_err(|e| err(e.to_string()))?;
        let target = ModuleRelocTarget::user(0, ids.funcs[&callee].as_u32());
        let (bytes, reloc): (Vec<u8>, ModuleReloc) = if pic {
            // mov al, 8; jmp rel32 (through the PLT)
            let bytes = vec![0xb0, 0x08, 0xe9, 0, 0, 0, 0];
            (
                bytes,
                ModuleReloc { offset: 3, kind: Reloc::X86CallPLTRel4, name: target, addend: -4 },
            )
        } else {
            // mov al, 8; movabs r11, imm64; jmp r11
            let mut bytes = vec![0xb0, 0x08, 0x49, 0xbb];
            bytes.extend_from_slice(&[0; 8]);
            bytes.extend_from_slice(&[0x41, 0xff, 0xe3]);
            (bytes, ModuleReloc { offset: 4, kind: Reloc::Abs8, name: target, addend: 0 })
        };
        cm.define_function_bytes(id, 16, &bytes, &[reloc]).map_err(|e| err(e.to_string()))?;
        ids.thunks.insert(callee, id);
    }
    Ok(())
}

/// The adc function a Cranelift id stands for (for error messages).
#[allow(dead_code)]
pub fn name_of(module: &Module, ids: &ModuleIds, id: cranelift_module::FuncId) -> Option<String> {
    let (f, _) = ids.funcs.iter().find(|(_, c)| **c == id)?;
    let f: &FuncId = f;
    Some(module.functions[*f].name.clone())
}
