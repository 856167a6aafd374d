//! API calls whose function type is not the declaration's. C lets every file declare
//! `__enzyme_autodiff` with its own prototype (returning `double`, `void`, a struct of
//! gradients), and a cast calls it through yet another. Once files are linked, or through
//! the cast, LLVM calls the one declaration with the call's own function type, which the
//! importer brings in as an indirect call of the function's address. Each such call
//! becomes a direct call of a declaration with the call's signature, named after the entry
//! point (`__enzyme_fwddiff.retyped.1`), so the lowering sees the same entry point.

use adc_ir::{FuncId, Function, InstructionData, Module, Signature};

use super::is_api_function;

/// Makes every indirect call of an API entry point's address a direct call.
pub(super) fn make_retyped_api_calls_direct(module: &mut Module) {
    let ids: Vec<FuncId> = module.functions.keys().collect();
    for id in ids {
        let func = &module.functions[id];
        let calls: Vec<_> = func
            .layout
            .insts()
            .filter_map(|(_, inst)| match func.inst(inst) {
                InstructionData::CallIndirect { sig, callee, .. } => func
                    .dfg
                    .function_address(*callee)
                    .filter(|api| is_api_function(module, *api))
                    .map(|api| (inst, api, (**sig).clone())),
                _ => None,
            })
            .collect();
        for (inst, api, sig) in calls {
            let declaration = declaration_with_signature(module, api, sig);
            let data = &mut module.functions[id].dfg.insts[inst];
            if let InstructionData::CallIndirect { args, attrs, .. } = data {
                *data = InstructionData::Call {
                    callee: declaration,
                    args: std::mem::take(args),
                    attrs: *attrs,
                };
            }
        }
    }
}

/// `api` itself when its signature is `sig`, else a declaration named after it with
/// `sig` (made once per signature).
fn declaration_with_signature(module: &mut Module, api: FuncId, sig: Signature) -> FuncId {
    if module.functions[api].signature == sig {
        return api;
    }
    let base = module.functions[api].name.clone();
    let mut n = 1;
    loop {
        let name = format!("{base}.retyped.{n}");
        match module.function_by_name(&name) {
            Some(existing) if module.functions[existing].signature == sig => return existing,
            Some(_) => n += 1,
            None => return module.add_function(Function::new(name, sig)),
        }
    }
}
