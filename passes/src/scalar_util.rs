//! Small helpers shared by the scalar transforms (mem2reg, sroa, sccp, dce, dse,
//! simplify-cfg): making constants, following value replacements, counting uses.

use std::collections::HashMap;
use std::hash::BuildHasher;

use adc_ir::{Block, Constant, Function, Inst, InstructionData, Type, Value};
use cranelift_entity::SecondaryMap;

/// Makes `const ty value` and places it first in the entry block, where it dominates every
/// use. Returns its result.
pub fn insert_const_at_entry(func: &mut Function, ty: Type, value: Constant) -> Value {
    let inst = func.dfg.make_inst(InstructionData::Const { ty: ty.clone(), value }, Some(ty));
    let result = func.dfg.inst_result(inst).unwrap_or_else(|| Value::from_u32(0));
    match func.entry_block().and_then(|e| func.layout.first_inst(e)) {
        Some(first) => func.layout.insert_inst_before(inst, first),
        None => {
            if let Some(entry) = func.entry_block() {
                func.layout.append_inst(inst, entry);
            }
        }
    }
    result
}

/// Makes `const ty value` just before `before`. Returns its result.
pub fn insert_const_before(func: &mut Function, before: Inst, ty: Type, value: Constant) -> Value {
    let inst = func.dfg.make_inst(InstructionData::Const { ty: ty.clone(), value }, Some(ty));
    func.layout.insert_inst_before(inst, before);
    func.dfg.inst_result(inst).unwrap_or_else(|| Value::from_u32(0))
}

/// Follows a replacement map to its end (replacements may chain: a load replaced by a value
/// that was itself a replaced load). Stops on a cycle rather than looping.
pub fn resolve<S: BuildHasher>(map: &HashMap<Value, Value, S>, mut v: Value) -> Value {
    let mut steps = 0;
    while let Some(&next) = map.get(&v) {
        if next == v || steps > map.len() {
            break;
        }
        v = next;
        steps += 1;
    }
    v
}

/// How many times each value is used by laid-out instructions (branch arguments included).
pub fn use_counts(func: &Function) -> SecondaryMap<Value, u32> {
    let mut counts = SecondaryMap::new();
    for (_, inst) in func.layout.insts() {
        func.inst(inst).for_each_arg(|v| counts[v] += 1);
    }
    counts
}

/// Predecessor edges of every laid-out block: `(pred block, index of the target in the
/// predecessor's `branch_targets`)`, one entry per edge (a `brif` with both arms to one
/// block gives two). Any hasher (sccp's is Fx).
pub fn pred_edges<S: BuildHasher + Default>(
    func: &Function,
) -> HashMap<Block, Vec<(Block, usize)>, S> {
    let mut preds: HashMap<Block, Vec<(Block, usize)>, S> = HashMap::default();
    for &block in func.layout.blocks() {
        if let Some(term) = func.terminator(block) {
            for (k, call) in func.inst(term).branch_targets().iter().enumerate() {
                preds.entry(call.block).or_default().push((block, k));
            }
        }
    }
    preds
}

/// The constant a value is defined by, if it is the result of a `const`.
pub fn const_of(func: &Function, v: Value) -> Option<&Constant> {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(inst) => match func.inst(inst) {
            InstructionData::Const { value, .. } => Some(value),
            _ => None,
        },
        adc_ir::ValueDef::Param(..) => None,
    }
}

/// Removes the block parameters of `block` for which `keep` is false, together with the
/// matching branch arguments on every edge into it, and renumbers the remaining ones.
/// Returns how many were removed. The entry block's parameters are the function's and
/// are never touched.
pub fn remove_block_params(
    func: &mut Function,
    block: Block,
    preds: &[(Block, usize)],
    keep: &dyn Fn(usize, Value) -> bool,
) -> usize {
    if Some(block) == func.entry_block() {
        return 0;
    }
    let params = func.dfg.blocks[block].params.clone();
    let keep_mask: Vec<bool> = params.iter().enumerate().map(|(i, v)| keep(i, *v)).collect();
    if keep_mask.iter().all(|k| *k) {
        return 0;
    }
    for &(pred, k) in preds {
        let Some(term) = func.terminator(pred) else { continue };
        if let Some(call) = func.dfg.insts[term].branch_targets_mut().into_iter().nth(k) {
            if call.block == block && call.args.len() == params.len() {
                let mut i = 0;
                call.args.retain(|_| {
                    i += 1;
                    keep_mask[i - 1]
                });
            }
        }
    }
    let kept: Vec<Value> =
        params.iter().zip(&keep_mask).filter(|(_, k)| **k).map(|(v, _)| *v).collect();
    for (i, v) in kept.iter().enumerate() {
        func.dfg.values[*v].def = adc_ir::ValueDef::Param(block, i as u32);
    }
    let removed = params.len() - kept.len();
    func.dfg.blocks[block].params = kept;
    removed
}
