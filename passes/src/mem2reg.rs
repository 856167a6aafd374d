//! `mem2reg`: promotes stack slots to SSA values (Cytron et al.), adding **block
//! parameters** where the slot's value merges, and branch arguments on every edge into them.
//!
//! A slot is promotable when it is an `alloca T` of one element and its address never
//! escapes: every use is a non-volatile `load T` from it or a non-volatile `store` of a `T`
//! value to it (the address itself is never stored, offset, compared or passed on). Whole-slot
//! typed accesses only: a partial or differently typed access (`load i32` of an `i64` slot,
//! a `ptradd` into a struct) keeps the slot in memory; `sroa` splits such slots first.
//!
//! Placement: a slot's value needs a parameter in the iterated dominance frontier of the
//! blocks that store to it. Renaming then needs no recursion: walking blocks in reverse
//! post-order, the value entering a block is its new parameter if it has one, else the value
//! leaving its immediate dominator (which RPO has already visited).
//!
//! A load before any store reads uninitialized memory, which the interpreter reports as an
//! error: undefined behaviour, so the promoted value is `const T undef`. Loads and stores
//! in unreachable blocks are replaced the same way (their values never matter).

// Fx hashing: these tables are hot and keyed by entities (see adc_ir::FxHashMap).
use adc_ir::FxHashMap as HashMap;

use adc_ir::{Block, Constant, Diagnostic, Function, Inst, InstructionData, Type, Value, ValueDef};

use crate::domtree::DominatorTree;
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{insert_const_at_entry, resolve};

pub struct Mem2Reg;

impl Pass for Mem2Reg {
    fn name(&self) -> &'static str {
        "mem2reg"
    }
}

impl FunctionPass for Mem2Reg {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        if func.is_declaration() {
            return Ok(PreservedAnalyses::All);
        }
        let slots = promotable_allocas(func);
        if slots.is_empty() {
            return Ok(PreservedAnalyses::All);
        }
        let dt = cx.analysis::<DominatorTree>(func);
        let stats = promote(func, &dt, &slots);
        cx.stats.add("allocas promoted", stats.promoted);
        cx.stats.add("loads removed", stats.loads);
        cx.stats.add("stores removed", stats.stores);
        cx.stats.add("block params added", stats.params);
        // Blocks and edges are unchanged; only parameters and instructions were edited.
        Ok(if stats.promoted > 0 { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

/// One promotable slot.
#[derive(Clone, Debug)]
pub struct Slot {
    pub alloca: Inst,
    pub addr: Value,
    pub ty: Type,
}

/// The allocas whose address is only loaded from and stored to, whole and typed.
pub fn promotable_allocas(func: &Function) -> Vec<Slot> {
    let mut candidates: HashMap<Value, Slot> = HashMap::default();
    let mut order = Vec::new();
    for (_, inst) in func.layout.insts() {
        if let InstructionData::Alloca { ty, count: None, .. } = func.inst(inst) {
            if let Some(addr) = func.dfg.inst_result(inst) {
                candidates.insert(addr, Slot { alloca: inst, addr, ty: ty.clone() });
                order.push(addr);
            }
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    let mut escaped: adc_ir::FxHashSet<Value> = adc_ir::FxHashSet::default();
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        match data {
            InstructionData::Load { ty, ptr, volatile, .. } if candidates.contains_key(ptr) => {
                if *volatile || *ty != candidates[ptr].ty {
                    escaped.insert(*ptr);
                }
            }
            InstructionData::Store { value, ptr, volatile, .. } if candidates.contains_key(ptr) => {
                if *volatile || func.dfg.value_type(*value) != &candidates[ptr].ty || value == ptr {
                    escaped.insert(*ptr);
                }
                // Storing one slot's address into another escapes the stored one.
                if candidates.contains_key(value) {
                    escaped.insert(*value);
                }
            }
            _ => data.for_each_arg(|v| {
                if candidates.contains_key(&v) {
                    escaped.insert(v);
                }
            }),
        }
    }
    order.into_iter().filter(|a| !escaped.contains(a)).map(|a| candidates[&a].clone()).collect()
}

#[derive(Default)]
struct PromoteStats {
    promoted: u64,
    loads: u64,
    stores: u64,
    params: u64,
}

fn promote(func: &mut Function, dt: &DominatorTree, slots: &[Slot]) -> PromoteStats {
    let mut stats = PromoteStats::default();
    let Some(entry) = func.entry_block() else {
        return stats;
    };
    let index: HashMap<Value, usize> = slots.iter().enumerate().map(|(i, s)| (s.addr, i)).collect();

    // Blocks storing to each slot (reachable ones only: others get no parameters).
    let mut def_blocks: Vec<Vec<Block>> = vec![Vec::new(); slots.len()];
    for (block, inst) in func.layout.insts() {
        if let InstructionData::Store { ptr, .. } = func.inst(inst) {
            if let Some(&i) = index.get(ptr) {
                if dt.is_reachable(block) && !def_blocks[i].contains(&block) {
                    def_blocks[i].push(block);
                }
            }
        }
    }

    // Iterated dominance frontiers -> new block parameters, in slot order per block.
    let mut new_params: HashMap<Block, Vec<(usize, Value)>> = HashMap::default();
    for (i, defs) in def_blocks.iter().enumerate() {
        let mut has_param: adc_ir::FxHashSet<Block> = adc_ir::FxHashSet::default();
        let mut work = defs.clone();
        while let Some(block) = work.pop() {
            for &f in dt.frontier(block) {
                // The entry block has no predecessors, so it is never in a frontier.
                if f == entry || !has_param.insert(f) {
                    continue;
                }
                let param = func.dfg.append_block_param(f, slots[i].ty.clone());
                if let Some(name) = func.dfg.value_name(slots[i].addr).map(str::to_string) {
                    func.dfg.set_value_name(param, &name);
                }
                new_params.entry(f).or_default().push((i, param));
                stats.params += 1;
                work.push(f);
            }
        }
    }

    // Undef values, made on demand, one per slot.
    let mut undefs: Vec<Option<Value>> = vec![None; slots.len()];
    let mut undef = |func: &mut Function, i: usize| -> Value {
        *undefs[i].get_or_insert_with(|| {
            insert_const_at_entry(func, slots[i].ty.clone(), Constant::Undef)
        })
    };

    // Rename in RPO; unreachable blocks afterwards, starting from undef.
    let mut out: HashMap<Block, Vec<Option<Value>>> = HashMap::default();
    let mut replace: HashMap<Value, Value> = HashMap::default();
    let mut order: Vec<Block> = dt.rpo().to_vec();
    order.extend(func.layout.blocks().iter().copied().filter(|b| !dt.is_reachable(*b)));
    for &block in &order {
        let mut cur: Vec<Option<Value>> = match dt.idom(block).and_then(|d| out.get(&d)) {
            Some(values) => values.clone(),
            None => vec![None; slots.len()],
        };
        for &(i, param) in new_params.get(&block).map(Vec::as_slice).unwrap_or(&[]) {
            cur[i] = Some(param);
        }
        for inst in func.layout.block_insts(block).to_vec() {
            match func.inst(inst).clone() {
                InstructionData::Load { ptr, .. } if index.contains_key(&ptr) => {
                    let i = index[&ptr];
                    let value = match cur[i] {
                        Some(v) => v,
                        None => undef(func, i),
                    };
                    if let Some(result) = func.dfg.inst_result(inst) {
                        replace.insert(result, resolve(&replace, value));
                    }
                    func.layout.remove_inst(inst);
                    stats.loads += 1;
                }
                InstructionData::Store { value, ptr, .. } if index.contains_key(&ptr) => {
                    cur[index[&ptr]] = Some(resolve(&replace, value));
                    func.layout.remove_inst(inst);
                    stats.stores += 1;
                }
                _ => {}
            }
        }
        out.insert(block, cur);
    }

    // Branch arguments for the new parameters, from the value leaving each predecessor.
    for &block in func.layout.blocks().to_vec().iter() {
        let Some(term) = func.terminator(block) else { continue };
        let targets: Vec<Block> =
            func.inst(term).branch_targets().iter().map(|c| c.block).collect();
        if !targets.iter().any(|t| new_params.contains_key(t)) {
            continue;
        }
        let mut args_per_target = Vec::new();
        for target in &targets {
            let mut args = Vec::new();
            for &(i, _) in new_params.get(target).map(Vec::as_slice).unwrap_or(&[]) {
                let v = match out.get(&block).and_then(|o| o[i]) {
                    Some(v) => resolve(&replace, v),
                    None => undef(func, i),
                };
                args.push(v);
            }
            args_per_target.push(args);
        }
        for (call, args) in
            func.dfg.insts[term].branch_targets_mut().into_iter().zip(args_per_target)
        {
            call.args.extend(args);
        }
    }

    // Uses of removed loads now read the promoted values.
    if !replace.is_empty() {
        for data in func.dfg.insts.values_mut() {
            data.map_args(|v| resolve(&replace, v));
        }
    }
    for slot in slots {
        func.layout.remove_inst(slot.alloca);
        // The slot's name moves to its parameters (printed when it is unique).
        func.dfg.value_names[slot.addr] = None;
        stats.promoted += 1;
    }
    debug_assert!(slots.iter().all(|s| matches!(func.dfg.value_def(s.addr), ValueDef::Result(_))));
    stats
}

#[cfg(test)]
mod tests {
    use adc_ir::text::{parse_module, print_module};

    fn run(src: &str) -> String {
        let mut module = parse_module(src).unwrap();
        let passes = crate::parse_pass_list("mem2reg").unwrap();
        let options = crate::Options { verify_each: true, ..Default::default() };
        let (_, result) = crate::run_passes(&mut module, &passes, &options);
        result.unwrap();
        print_module(&module)
    }

    #[test]
    fn promotes_a_diamond_into_a_block_param() {
        let out = run("func @f(%c: i1) -> i64 {\n^e:\n  %p = alloca i64, align 8\n  brif %c, ^a, ^b\n^a:\n  %one = const i64 1\n  store %one, %p, align 8\n  jump ^j\n^b:\n  %two = const i64 2\n  store %two, %p, align 8\n  jump ^j\n^j:\n  %x = load i64, %p, align 8\n  ret %x\n}\n");
        assert!(
            !out.contains("alloca") && !out.contains("load") && !out.contains("store"),
            "{out}"
        );
        assert!(out.contains("jump ^j(%one)") && out.contains("jump ^j(%two)"), "{out}");
    }

    #[test]
    fn escaping_slot_stays() {
        let out = run("declare @g(ptr)\nfunc @f() -> i64 {\n^e:\n  %p = alloca i64, align 8\n  %z = const i64 0\n  store %z, %p, align 8\n  call @g(%p)\n  %x = load i64, %p, align 8\n  ret %x\n}\n");
        assert!(out.contains("alloca") && out.contains("load"), "{out}");
    }
}
