//! Which generic pointers of a kernel provably point to global memory, so that accesses
//! through them use `ld.global`/`st.global`/`red.global` instead of generic ones (which
//! the hardware resolves per access). A kernel's pointer parameters point to global memory:
//! the host can only pass addresses of global allocations (LLVM's NVPTX backend makes the
//! same assumption for CUDA kernels). Offsets of such pointers, selects between them and
//! block parameters that receive only them do too. Pointers loaded from memory, allocas
//! (local memory) and shared arrays stay generic unless their type says otherwise.

use std::collections::HashSet;

use adc_ir::{FuncAttrs, Function, InstructionData, Type, Value};

/// The generic pointers of `func` that point to global memory; empty unless it is a kernel.
pub fn global_pointers(func: &Function) -> HashSet<Value> {
    let mut global = HashSet::new();
    let Some(entry) = func.entry_block() else { return global };
    if !func.attrs.contains(FuncAttrs::KERNEL) {
        return global;
    }
    let generic = |v: Value| func.dfg.value_type(v) == &Type::Ptr(0);
    for &param in func.dfg.block_params(entry) {
        if generic(param) {
            global.insert(param);
        }
    }
    let incoming = func.block_param_sources();
    // Start from every candidate and drop, until nothing changes, those with a source
    // not in the set: loops (a cursor advanced by offsets of itself) stay in.
    for (_, inst) in func.layout.insts() {
        let Some(result) = func.dfg.inst_result(inst) else { continue };
        let data = &func.dfg.insts[inst];
        if generic(result)
            && matches!(data, InstructionData::PtrAdd { .. } | InstructionData::Select { .. })
        {
            global.insert(result);
        }
    }
    for &block in func.layout.blocks().iter().filter(|b| **b != entry) {
        global.extend(func.dfg.block_params(block).iter().copied().filter(|p| generic(*p)));
    }
    loop {
        let before = global.len();
        for (_, inst) in func.layout.insts() {
            let Some(result) = func.dfg.inst_result(inst) else { continue };
            let keeps = match &func.dfg.insts[inst] {
                InstructionData::PtrAdd { ptr, .. } => global.contains(ptr),
                InstructionData::Select { args: [_, a, b], .. } => {
                    global.contains(a) && global.contains(b)
                }
                _ => continue,
            };
            if !keeps {
                global.remove(&result);
            }
        }
        for &block in func.layout.blocks().iter().filter(|b| **b != entry) {
            for (index, &param) in func.dfg.block_params(block).iter().enumerate() {
                let sources = incoming.get(&(block, index));
                let keeps = sources.is_some_and(|s| s.iter().all(|v| global.contains(v)));
                if !keeps {
                    global.remove(&param);
                }
            }
        }
        if global.len() == before {
            return global;
        }
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::text::parse_module;
    use adc_ir::InstructionData;

    #[test]
    fn kernel_parameters_and_what_derives_from_them_only() {
        let text = "target \"nvptx64-nvidia-cuda\"
func @k(%p: ptr, %q: ptr, %n: i64) kernel {
^entry:
  %local = alloca f64, align 8
  %eight = const i64 8
  %p1 = ptradd ptr %p, %eight
  %loaded = load ptr, %q, align 8
  jump ^loop(%p1, %local)
^loop(%cursor: ptr, %mixed: ptr):
  %x = load f64, %cursor, align 8
  %y = load f64, %mixed, align 8
  %z = load f64, %loaded, align 8
  %next = ptradd ptr %cursor, %eight
  %more = icmp slt i64 %n, %eight
  brif %more, ^loop(%next, %cursor), ^done
^done:
  ret
}
func @device(%p: ptr) {
^entry:
  %x = load f64, %p, align 8
  ret
}
";
        let module = parse_module(text).unwrap_or_else(|d| panic!("{d:?}"));
        let k = &module.functions[module.function_by_name("k").expect("kernel")];
        let global = super::global_pointers(k);
        let loaded_through: Vec<bool> = k
            .layout
            .insts()
            .filter_map(|(_, inst)| match k.dfg.insts[inst] {
                InstructionData::Load { ptr, .. } => Some(global.contains(&ptr)),
                _ => None,
            })
            .collect();
        // q (parameter); then cursor (offsets of p), mixed (an alloca flows in), loaded.
        assert_eq!(loaded_through, [true, true, false, false]);
        let device = &module.functions[module.function_by_name("device").expect("device")];
        assert!(super::global_pointers(device).is_empty());
    }
}
