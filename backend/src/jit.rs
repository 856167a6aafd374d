//! The JIT: compiles a module into executable memory in this process (cranelift-jit,
//! `is_pic=false`), resolving libc/libm symbols from the process, and calls functions of
//! any signature through a generated trampoline that reads the arguments from and writes
//! the results to 16-byte slots.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use adc_ir::{Diagnostic, Module, Type};
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module as ClModule};

use crate::abi::{leaf_types, scalar};
use crate::lower::ModuleIds;
use crate::simd::{pack, unpack};
use crate::BackendOptions;

/// A value crossing the trampoline: the raw bits of one leaf (an integer zero-extended, a
/// float's IEEE bits, a pointer's address).
pub type JitValue = u128;

pub struct Jit {
    cm: JITModule,
    ids: ModuleIds,
    module: Module,
    trampolines: HashMap<String, *const u8>,
}

impl Jit {
    /// Compiles every function and global of `module` with the default options.
    pub fn new(module: &Module) -> crate::Result<Jit> {
        Jit::with_options(module, &BackendOptions::default())
    }

    /// Compiles every function and global of `module` under `options`.
    pub fn with_options(module: &Module, options: &BackendOptions) -> crate::Result<Jit> {
        let isa = crate::host_isa(false)?;
        let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
        // Symbols found neither in the module nor in the process resolve to a stub that
        // aborts when called, as an unresolved symbol would fail only when used (the
        // interpreter reports such a call as an error at that point).
        // glibc keeps some entry points that clang emits (`__exp10`) private: the public
        // name (`exp10`) is the same function.
        builder.symbol_lookup_fn(Box::new(|name| {
            let found = process_symbol(name)
                .or_else(|| name.strip_prefix("__").and_then(process_symbol))
                .unwrap_or(unresolved_symbol as *const u8);
            Some(found)
        }));
        let built = catch_unwind(AssertUnwindSafe(|| -> crate::Result<(JITModule, ModuleIds)> {
            let mut cm = JITModule::new(builder);
            // One body at a time (`build`, not `build_in_parallel`): the JIT's own
            // `define_function` aligns the code, which `define_function_bytes` would not.
            let ids = crate::module::build(module, &mut cm, false, options)?;
            cm.finalize_definitions()
                .map_err(|e| Diagnostic::new(format!("cannot finalize the JIT code: {e}")))?;
            Ok((cm, ids))
        }));
        let (cm, ids) = built
            .map_err(|_| Diagnostic::new("internal error in the JIT (Cranelift panicked)"))??;
        Ok(Jit { cm, ids, module: module.clone(), trampolines: HashMap::new() })
    }

    /// Calls `@name` with one raw leaf per argument leaf (see `abi::leaf_types`) and
    /// returns the result's leaves.
    ///
    /// # Safety
    /// Runs native code: arguments that are pointers must point to live memory of the
    /// right size, and the function must not have undefined behaviour.
    pub unsafe fn call(&mut self, name: &str, args: &[JitValue]) -> crate::Result<Vec<JitValue>> {
        let func = self
            .module
            .function_by_name(name)
            .ok_or_else(|| Diagnostic::new(format!("no function @{name}")))?;
        let sig = self.module.functions[func].signature.clone();
        let err = |e: String| Diagnostic::new(format!("cannot call @{name}: {e}"));
        let mut params = Vec::new();
        for p in &sig.params {
            params.extend(leaf_types(p).map_err(err)?);
        }
        let rets = match &sig.ret {
            Some(t) => leaf_types(t).map_err(err)?,
            None => Vec::new(),
        };
        if params.len() != args.len() {
            return Err(err(format!("{} argument leaves, {} given", params.len(), args.len())));
        }
        let code = match self.trampolines.get(name) {
            Some(p) => *p,
            None => {
                let p = self.trampoline(func, &params, &rets).map_err(err)?;
                self.trampolines.insert(name.to_string(), p);
                p
            }
        };
        let in_slots: Vec<u128> = args.to_vec();
        let mut out_slots = vec![0u128; rets.len().max(1)];
        // SAFETY: the trampoline was generated for exactly these slot counts.
        let f: extern "C" fn(*const u128, *mut u128) = unsafe { std::mem::transmute(code) };
        f(in_slots.as_ptr(), out_slots.as_mut_ptr());
        out_slots.truncate(rets.len());
        for (slot, ty) in out_slots.iter_mut().zip(&rets) {
            *slot = mask(*slot, ty);
        }
        Ok(out_slots)
    }

    fn trampoline(
        &mut self,
        func: adc_ir::FuncId,
        params: &[Type],
        rets: &[Type],
    ) -> Result<*const u8, String> {
        let call_conv = self.ids.call_conv;
        let mut sig = cranelift_codegen::ir::Signature::new(call_conv);
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I64));
        let name = format!("__adc_trampoline.{}", self.module.functions[func].name);
        let id =
            self.cm.declare_function(&name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
        let mut ctx = Context::new();
        ctx.func.signature = sig;
        let mut fbc = FunctionBuilderContext::new();
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            let (inp, outp) = (b.block_params(entry)[0], b.block_params(entry)[1]);
            let mut lanes = Vec::new();
            for (k, ty) in params.iter().enumerate() {
                let cl = scalar(ty).ok_or("unsupported parameter type")?;
                lanes.push(b.ins().load(cl, MemFlagsData::new(), inp, (16 * k) as i32));
            }
            // A SIMD-ABI function takes and returns vectors in SIMD form; the slots hold lanes.
            let simd_abi = self.ids.simd_abi.contains(&func);
            let signature = &self.module.functions[func].signature;
            let mut args = Vec::new();
            let mut lanes = lanes.into_iter();
            for ty in &signature.params {
                let n = leaf_types(ty)?.len();
                let these: Vec<_> = lanes.by_ref().take(n).collect();
                args.extend(if simd_abi { pack(&mut b, ty, &these)? } else { these });
            }
            let target = self.ids.funcs[&func];
            let callee = self.cm.declare_func_in_func(target, b.func);
            let call = b.ins().call(callee, &args);
            let mut results = b.inst_results(call).to_vec();
            if let (true, Some(ret)) = (simd_abi, &signature.ret) {
                results = unpack(&mut b, ret, &results)?;
            }
            for (k, (r, ty)) in results.iter().zip(rets).enumerate() {
                let v = match ty {
                    Type::I128 => *r,
                    Type::F32 | Type::F64 => *r,
                    _ if ty.is_int() || ty.is_ptr() => {
                        let cl = scalar(ty).ok_or("unsupported result type")?;
                        if cl == types::I64 {
                            *r
                        } else {
                            b.ins().uextend(types::I64, *r)
                        }
                    }
                    _ => *r,
                };
                b.ins().store(MemFlagsData::new(), v, outp, (16 * k) as i32);
            }
            b.ins().return_(&[]);
            b.seal_all_blocks();
            b.finalize(self.cm.isa().frontend_config());
        }
        let cm = &mut self.cm;
        catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
            cm.define_function(id, &mut ctx).map_err(|e| format!("{e:?}"))?;
            cm.finalize_definitions().map_err(|e| e.to_string())
        }))
        .map_err(|_| "Cranelift panicked".to_string())??;
        Ok(self.cm.get_finalized_function(id))
    }

    /// The address of a global's data in the JIT.
    pub fn global_address(&self, name: &str) -> Option<*const u8> {
        let g = self.module.global_by_name(name)?;
        let id = self.ids.data.get(&g)?;
        Some(self.cm.get_finalized_data(*id).0)
    }
}

unsafe extern "C" {
    fn dlsym(handle: *mut u8, name: *const std::ffi::c_char) -> *mut u8;
}

fn process_symbol(name: &str) -> Option<*const u8> {
    let c_name = std::ffi::CString::new(name).ok()?;
    // SAFETY: dlsym with RTLD_DEFAULT (null) and a NUL-terminated name.
    let found = unsafe { dlsym(std::ptr::null_mut(), c_name.as_ptr()) };
    (!found.is_null()).then_some(found.cast_const())
}

extern "C" fn unresolved_symbol() {
    eprintln!("adc JIT: call to a function that is defined nowhere");
    std::process::abort();
}

fn mask(bits: u128, ty: &Type) -> u128 {
    match ty.scalar_bits() {
        Some(b) if b < 128 => bits & ((1u128 << b) - 1),
        _ => bits,
    }
}
