//! `simplify-cfg`: cleans the control-flow graph up, to a fixed point:
//!
//! 1. branches on constants become jumps (`brif` on a `const i1`, `switch` on a constant,
//!    a `brif` whose two arms are the same call);
//! 2. blocks not reachable from the entry are removed;
//! 3. a block parameter that receives one value on every edge (or only itself, around a
//!    loop) is replaced by that value;
//! 4. edges into an empty forwarding block (only `jump ^t(args)`) go straight to `^t`, the
//!    forwarder's parameters substituted by the edge's arguments;
//! 5. a block whose only predecessor jumps to it unconditionally is merged into it.
//!
//! Each step keeps SSA dominance: after step 2 every block is reachable, so a value passed
//! on every edge into a block is defined in a block dominating all of its predecessors,
//! and therefore the block itself (steps 3 and 4 rely on this).

use std::collections::HashSet;

use adc_ir::{Block, Diagnostic, Function, InstructionData, Value};

use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{const_of, pred_edges, remove_block_params, use_counts};

pub struct SimplifyCfg;

impl Pass for SimplifyCfg {
    fn name(&self) -> &'static str {
        "simplify-cfg"
    }
}

#[derive(Default)]
struct Stats {
    folded: u64,
    unreachable: u64,
    params: u64,
    threaded: u64,
    merged: u64,
}

impl FunctionPass for SimplifyCfg {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        if func.is_declaration() {
            return Ok(PreservedAnalyses::All);
        }
        let mut s = Stats::default();
        // Every step strictly shrinks the function (an edge, a block or a parameter), so
        // this terminates; the bound only guards against a bug.
        for _ in 0..10_000 {
            let mut changed = fold_constant_branches(func, &mut s);
            changed |= remove_unreachable(func, &mut s);
            changed |= remove_trivial_params(func, &mut s);
            changed |= thread_forwarders(func, &mut s);
            changed |= merge_into_single_pred(func, &mut s);
            if !changed {
                break;
            }
        }
        cx.stats.add("branches folded", s.folded);
        cx.stats.add("unreachable blocks removed", s.unreachable);
        cx.stats.add("block params removed", s.params);
        cx.stats.add("jumps threaded", s.threaded);
        cx.stats.add("blocks merged", s.merged);
        let total = s.folded + s.unreachable + s.params + s.threaded + s.merged;
        Ok(if total > 0 { PreservedAnalyses::None } else { PreservedAnalyses::All })
    }
}

fn fold_constant_branches(func: &mut Function, s: &mut Stats) -> bool {
    let mut changed = false;
    for block in func.layout.blocks().to_vec() {
        let Some(term) = func.terminator(block) else { continue };
        let dest = match func.inst(term) {
            InstructionData::Brif { cond, then_dest, else_dest } => {
                if then_dest == else_dest {
                    Some(then_dest.clone())
                } else {
                    match const_of(func, *cond) {
                        Some(adc_ir::Constant::Int(v)) => {
                            Some(if v & 1 == 1 { then_dest.clone() } else { else_dest.clone() })
                        }
                        // undef/poison/zeroinit are zero in adc.
                        Some(
                            adc_ir::Constant::Zero
                            | adc_ir::Constant::Undef
                            | adc_ir::Constant::Poison,
                        ) => Some(else_dest.clone()),
                        _ => None,
                    }
                }
            }
            InstructionData::Switch { value, default, cases } => {
                let bits = func.dfg.value_type(*value).int_bits().unwrap_or(128);
                let v = match const_of(func, *value) {
                    Some(adc_ir::Constant::Int(v)) => Some(*v),
                    Some(
                        adc_ir::Constant::Zero | adc_ir::Constant::Undef | adc_ir::Constant::Poison,
                    ) => Some(0),
                    _ => None,
                };
                v.map(|v| {
                    // The interpreter's rule: case values are masked to the width, first match.
                    cases
                        .iter()
                        .find(|(c, _)| adc_ir::constant::mask_to_width(*c, bits) == v)
                        .map_or(default.clone(), |(_, d)| d.clone())
                })
            }
            _ => None,
        };
        if let Some(dest) = dest {
            func.dfg.insts[term] = InstructionData::Jump { dest };
            s.folded += 1;
            changed = true;
        }
    }
    changed
}

fn reachable(func: &Function) -> HashSet<Block> {
    let mut seen = HashSet::new();
    let mut work: Vec<Block> = func.entry_block().into_iter().collect();
    while let Some(b) = work.pop() {
        if seen.insert(b) {
            work.extend(func.successors(b).into_iter().filter(|s| !seen.contains(s)));
        }
    }
    seen
}

/// Removes the blocks the entry does not reach; returns how many.
pub(crate) fn remove_unreachable_blocks(func: &mut Function) -> usize {
    let live = reachable(func);
    let dead: Vec<Block> =
        func.layout.blocks().iter().copied().filter(|b| !live.contains(b)).collect();
    for &b in &dead {
        func.layout.remove_block(b);
    }
    dead.len()
}

fn remove_unreachable(func: &mut Function, s: &mut Stats) -> bool {
    let removed = remove_unreachable_blocks(func);
    s.unreachable += removed as u64;
    removed > 0
}

/// The argument passed to parameter `index` of `block` on edge `(pred, k)`.
fn edge_arg(func: &Function, pred: Block, k: usize, index: usize) -> Option<Value> {
    let term = func.terminator(pred)?;
    func.inst(term).branch_targets().get(k)?.args.get(index).copied()
}

fn remove_trivial_params(func: &mut Function, s: &mut Stats) -> bool {
    let preds: adc_ir::FxHashMap<_, _> = pred_edges(func);
    let mut changed = false;
    for block in func.layout.blocks().to_vec() {
        if Some(block) == func.entry_block() {
            continue;
        }
        let Some(edges) = preds.get(&block) else { continue };
        let params = func.dfg.block_params(block).to_vec();
        let mut replaced: Vec<Option<Value>> = vec![None; params.len()];
        for (i, &param) in params.iter().enumerate() {
            let mut unique: Option<Value> = None;
            let mut trivial = true;
            for &(pred, k) in edges {
                match edge_arg(func, pred, k, i) {
                    Some(v) if v == param => {}
                    Some(v) if unique.is_none() || unique == Some(v) => unique = Some(v),
                    _ => {
                        trivial = false;
                        break;
                    }
                }
            }
            if trivial && unique.is_some() {
                // One per block per round: a second parameter's replacement may be this
                // one, which must not be removed under it. The fixed point does the rest.
                replaced[i] = unique;
                break;
            }
        }
        if replaced.iter().all(Option::is_none) {
            continue;
        }
        for (i, r) in replaced.iter().enumerate() {
            if let Some(v) = r {
                func.dfg.replace_uses(params[i], *v);
            }
        }
        let n = remove_block_params(func, block, edges, &|i, _| replaced[i].is_none());
        s.params += n as u64;
        changed |= n > 0;
    }
    changed
}

fn thread_forwarders(func: &mut Function, s: &mut Stats) -> bool {
    let mut changed = false;
    for fwd in func.layout.blocks().to_vec() {
        if Some(fwd) == func.entry_block() || func.layout.block_insts(fwd).len() != 1 {
            continue;
        }
        let Some(term) = func.terminator(fwd) else { continue };
        let InstructionData::Jump { dest } = func.inst(term).clone() else { continue };
        if dest.block == fwd {
            continue;
        }
        let params = func.dfg.block_params(fwd).to_vec();
        // The forwarder's parameters may be used beyond its jump (a parameter of a block
        // it dominates was replaced by one of them); threading would leave those dangling.
        let uses = use_counts(func);
        let local = |p: &Value| dest.args.iter().filter(|a| *a == p).count() as u32;
        if params.iter().any(|p| uses[*p] != local(p)) {
            continue;
        }
        let preds: adc_ir::FxHashMap<_, _> = pred_edges(func);
        for &(pred, k) in preds.get(&fwd).map(Vec::as_slice).unwrap_or(&[]) {
            if pred == fwd {
                continue;
            }
            let Some(pterm) = func.terminator(pred) else { continue };
            let Some(call) = func.dfg.insts[pterm].branch_targets_mut().into_iter().nth(k) else {
                continue;
            };
            if call.block != fwd || call.args.len() != params.len() {
                continue;
            }
            let incoming = std::mem::take(&mut call.args);
            call.block = dest.block;
            call.args = dest
                .args
                .iter()
                .map(|a| params.iter().position(|p| p == a).map_or(*a, |i| incoming[i]))
                .collect();
            s.threaded += 1;
            changed = true;
        }
    }
    changed
}

fn merge_into_single_pred(func: &mut Function, s: &mut Stats) -> bool {
    let mut changed = false;
    let mut preds: adc_ir::FxHashMap<_, _> = pred_edges(func);
    for block in func.layout.blocks().to_vec() {
        if Some(block) == func.entry_block() || !func.layout.is_block_inserted(block) {
            continue;
        }
        let Some([(pred, _)]) = preds.get(&block).map(Vec::as_slice) else { continue };
        let pred = *pred;
        if pred == block || !func.layout.is_block_inserted(pred) {
            continue;
        }
        let Some(pterm) = func.terminator(pred) else { continue };
        let InstructionData::Jump { dest } = func.inst(pterm).clone() else { continue };
        if dest.block != block {
            continue;
        }
        let params = func.dfg.block_params(block).to_vec();
        for (p, a) in params.iter().zip(&dest.args) {
            func.dfg.replace_uses(*p, *a);
        }
        func.dfg.blocks[block].params.clear();
        func.layout.remove_inst(pterm);
        let insts = func.layout.block_insts(block).to_vec();
        func.layout.remove_block(block);
        for inst in insts {
            func.layout.append_inst(inst, pred);
        }
        s.merged += 1;
        changed = true;
        // Edges out of the merged block now leave `pred`.
        preds = pred_edges(func);
    }
    changed
}

#[cfg(test)]
mod tests {
    use adc_ir::text::{parse_module, print_module};

    #[test]
    fn constant_diamond_collapses_to_one_block() {
        let mut module = parse_module("func @f(%x: i64) -> i64 {\n^e:\n  %t = const i1 true\n  brif %t, ^a, ^b\n^a:\n  jump ^j(%x)\n^b:\n  %z = const i64 0\n  jump ^j(%z)\n^j(%r: i64):\n  ret %r\n}\n").unwrap();
        let passes = crate::parse_pass_list("simplify-cfg").unwrap();
        let options = crate::Options { verify_each: true, ..Default::default() };
        let (_, result) = crate::run_passes(&mut module, &passes, &options);
        result.unwrap();
        let out = print_module(&module);
        assert!(out.contains("ret %x") && !out.contains("^a") && !out.contains("^j"), "{out}");
    }
}
