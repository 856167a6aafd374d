//! `dce`: aggressive dead-code elimination. Starting from what must stay (instructions with
//! side effects: stores, calls, volatile loads, terminators' conditions and returned
//! values), everything their operands need is marked live, transitively; the rest is
//! removed. Block parameters are live only when a live instruction uses them, and a
//! branch argument is live only when the parameter it feeds is, so a value that only
//! circulates around a loop (`%i1 = add %i, 1` passed back to `%i` and never read) dies
//! with its parameter.
//!
//! Removing an unused instruction that would trap in the interpreter (a division by zero,
//! a load of uninitialized memory) is allowed: the trap is undefined behaviour.

use std::collections::HashSet;

use adc_ir::{Diagnostic, Function, Inst, InstructionData, Value, ValueDef};

use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{pred_edges, remove_block_params};

pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }
}

impl FunctionPass for Dce {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let (insts, params) = dce(func);
        cx.stats.add("instructions removed", insts);
        cx.stats.add("block params removed", params);
        // Only non-terminators and parameters go: blocks and edges stay.
        Ok(if insts + params > 0 { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

/// Removes dead instructions and block parameters; returns how many of each.
pub fn dce(func: &mut Function) -> (u64, u64) {
    if func.is_declaration() {
        return (0, 0);
    }
    let preds: adc_ir::FxHashMap<_, _> = pred_edges(func);
    let mut live_insts: HashSet<Inst> = HashSet::new();
    let mut live_values: HashSet<Value> = HashSet::new();
    let mut work: Vec<Value> = Vec::new();
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        if !data.has_side_effects() {
            continue;
        }
        live_insts.insert(inst);
        match data {
            // Branch arguments are live only through their parameters.
            InstructionData::Jump { .. } => {}
            InstructionData::Brif { cond, .. } => work.push(*cond),
            InstructionData::Switch { value, .. } => work.push(*value),
            _ => data.for_each_arg(|v| work.push(v)),
        }
    }
    while let Some(v) = work.pop() {
        if !func.dfg.values.is_valid(v) || !live_values.insert(v) {
            continue;
        }
        match func.dfg.value_def(v) {
            ValueDef::Result(inst) => {
                if live_insts.insert(inst) {
                    func.inst(inst).for_each_arg(|a| work.push(a));
                }
            }
            ValueDef::Param(block, index) => {
                for &(pred, k) in preds.get(&block).map(Vec::as_slice).unwrap_or(&[]) {
                    let Some(term) = func.terminator(pred) else { continue };
                    if let Some(call) = func.inst(term).branch_targets().get(k) {
                        if let Some(&arg) = call.args.get(index as usize) {
                            work.push(arg);
                        }
                    }
                }
            }
        }
    }
    let mut removed_insts = 0;
    for (_, inst) in func.layout.insts().collect::<Vec<_>>() {
        if !live_insts.contains(&inst) && !func.inst(inst).has_side_effects() {
            func.layout.remove_inst(inst);
            removed_insts += 1;
        }
    }
    let mut removed_params = 0;
    for block in func.layout.blocks().to_vec() {
        let edges = preds.get(&block).cloned().unwrap_or_default();
        removed_params +=
            remove_block_params(func, block, &edges, &|_, v| live_values.contains(&v)) as u64;
    }
    (removed_insts, removed_params)
}

#[cfg(test)]
mod tests {
    use adc_ir::text::{parse_module, print_module};

    #[test]
    fn a_counter_that_only_feeds_itself_dies() {
        let mut module = parse_module("func @f(%n: i64) -> i64 {\n^e:\n  %z = const i64 0\n  jump ^l(%z)\n^l(%i: i64):\n  %one = const i64 1\n  %i1 = add i64 %i, %one\n  %c = icmp slt i64 %n, %z\n  brif %c, ^l(%i1), ^x\n^x:\n  ret %n\n}\n").unwrap();
        let func = module.functions.values_mut().next().unwrap();
        let (insts, params) = super::dce(func);
        assert_eq!((insts, params), (2, 1));
        let out = print_module(&module);
        assert!(out.contains("^l:") && !out.contains("add"), "{out}");
    }
}
