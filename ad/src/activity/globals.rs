//! Globals in the activity analysis: which mutable globals carry derivatives between
//! functions and get a shadow global (see the parent module's documentation), and which
//! of them a function reaches.

use std::collections::{HashMap, HashSet};

use adc_ir::{Constant, FuncId, Function, GlobalId, InstructionData, Module, Symbol, Type, Value};

use crate::request::{has_float, has_pointer};

/// Name prefix of the shadow of a global: `__adc_shadow_<name>`.
pub const SHADOW_GLOBAL_PREFIX: &str = "__adc_shadow_";

/// The mutable globals of `module` that may carry derivatives in reverse mode: defined
/// (not declared), not constant, in the default address space, not themselves shadows,
/// with floats in their type, and
/// written by some function of the module that is not synthesized (`__adc_*`): a store,
/// copy, set or atomic through an address derived from the global (offsets, casts,
/// selects, block parameters), or that address passed to a call or stored into memory,
/// where anything may write through it.
pub fn shadowed_globals(module: &Module) -> HashSet<GlobalId> {
    let candidates: HashSet<GlobalId> = module
        .globals
        .iter()
        .filter(|(_, g)| {
            // Other address spaces (GPU shared memory) keep the per-function rule.
            !g.constant
                && g.addr_space == 0
                && g.init.is_some()
                && !g.name.starts_with(SHADOW_GLOBAL_PREFIX)
                && (has_float(&g.ty) || is_byte_storage(&g.ty))
        })
        .map(|(id, _)| id)
        .collect();
    let mut written = HashSet::new();
    if candidates.is_empty() {
        return written;
    }
    for (_, func) in module.functions.iter() {
        if func.is_declaration() || func.name.starts_with("__adc_") {
            continue;
        }
        for (global, derived) in global_addresses(func, &candidates) {
            if writes_through(func, &derived) {
                written.insert(global);
            }
        }
    }
    written
}

/// The shadow globals of what `function` reaches (the differentiator declares them), with
/// their sizes: what a derivative called from user code starts by zeroing.
pub fn shadow_globals_of(module: &Module, function: FuncId) -> Vec<(GlobalId, u64)> {
    shadowed_globals_reached(module, function)
        .into_iter()
        .filter_map(|global| {
            let primal = &module.globals[global];
            let name = format!("{}{}", SHADOW_GLOBAL_PREFIX, primal.name);
            module.global_by_name(&name).map(|shadow| (shadow, primal.ty.size()))
        })
        .collect()
}

/// The globals with shadows that `function` or a function it calls, directly or not,
/// names.
pub fn shadowed_globals_reached(module: &Module, function: FuncId) -> Vec<GlobalId> {
    let shadowed = shadowed_globals(module);
    if shadowed.is_empty() {
        return Vec::new();
    }
    globals_reached(module, function, |g| shadowed.contains(&g))
}

/// The globals for which `keep` holds that `function` names, or a function it reaches
/// through calls and function addresses (an indirect call may reach those), in the order
/// found.
pub(super) fn globals_reached(
    module: &Module,
    function: FuncId,
    keep: impl Fn(GlobalId) -> bool,
) -> Vec<GlobalId> {
    use InstructionData as I;
    let (mut seen, mut stack, mut named) = (HashSet::from([function]), vec![function], Vec::new());
    while let Some(id) = stack.pop() {
        let Some(func) = module.functions.get(id) else { continue };
        for (_, inst) in func.layout.insts() {
            let reached = match func.inst(inst) {
                I::Call { callee, .. } => *callee,
                I::Const { value: Constant::Address { symbol, .. }, .. } => match symbol {
                    Symbol::Global(g) => {
                        if keep(*g) && !named.contains(g) {
                            named.push(*g);
                        }
                        continue;
                    }
                    Symbol::Func(f) => *f,
                },
                _ => continue,
            };
            if seen.insert(reached) {
                stack.push(reached);
            }
        }
    }
    named
}

/// A type of integers only: no floats, no pointers, and not a `char` array (see
/// [`is_byte_storage`]).
pub(super) fn holds_integers_only(ty: &Type) -> bool {
    !has_float(ty) && !has_pointer(ty) && !is_byte_storage(ty)
}

/// A `char` array: storage of no declared type, which a program may hand out as memory
/// for doubles (an arena that a custom allocator, registered with Enzyme's
/// `__enzyme_allocation_like`, carves up).
fn is_byte_storage(ty: &Type) -> bool {
    matches!(ty, Type::Array(element, _) if **element == Type::I8)
}

/// For each candidate global that `func` names, the values derived from its address.
fn global_addresses(
    func: &Function,
    candidates: &HashSet<GlobalId>,
) -> HashMap<GlobalId, HashSet<Value>> {
    use InstructionData as I;
    let mut derived: HashMap<GlobalId, HashSet<Value>> = HashMap::new();
    for (_, inst) in func.layout.insts() {
        if let I::Const { value: Constant::Address { symbol: Symbol::Global(g), .. }, .. } =
            func.inst(inst)
        {
            if let (true, Some(r)) = (candidates.contains(g), func.dfg.inst_result(inst)) {
                derived.entry(*g).or_default().insert(r);
            }
        }
    }
    for values in derived.values_mut() {
        loop {
            let before = values.len();
            for (_, inst) in func.layout.insts() {
                let data = func.inst(inst);
                let result = func.dfg.inst_result(inst);
                match (data, result) {
                    (I::PtrAdd { ptr: base, .. }, Some(r))
                    | (I::Cast { arg: base, .. }, Some(r))
                        if values.contains(base) =>
                    {
                        values.insert(r);
                    }
                    (I::Select { args, .. }, Some(r))
                        if values.contains(&args[1]) || values.contains(&args[2]) =>
                    {
                        values.insert(r);
                    }
                    _ => {
                        for target in data.branch_targets() {
                            let params = func.dfg.block_params(target.block);
                            for (arg, param) in target.args.iter().zip(params) {
                                if values.contains(arg) {
                                    values.insert(*param);
                                }
                            }
                        }
                    }
                }
            }
            if values.len() == before {
                break;
            }
        }
    }
    derived
}

/// Whether some instruction of `func` may write through one of `addresses`.
fn writes_through(func: &Function, addresses: &HashSet<Value>) -> bool {
    use InstructionData as I;
    func.layout.insts().any(|(_, inst)| match func.inst(inst) {
        I::Store { value, ptr, .. } => addresses.contains(ptr) || addresses.contains(value),
        I::MemCopy { dst, .. } | I::MemSet { dst, .. } => addresses.contains(dst),
        I::AtomicRmw { ptr, .. } | I::CmpXchg { ptr, .. } => addresses.contains(ptr),
        I::Call { args, .. } | I::CallIndirect { args, .. } => {
            args.iter().any(|a| addresses.contains(a))
        }
        // The caller may write through a returned address (a bump allocator's pointer
        // into its arena).
        I::Return { value: Some(v) } => addresses.contains(v),
        _ => false,
    })
}
