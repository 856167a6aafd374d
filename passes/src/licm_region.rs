//! Hoisting whole loop-invariant regions, inner loops included, out of a rotated loop
//! (part of `licm`).
//!
//! clang -O2 inlines `mag(in, n)` into `for (i...) out[i] = in[i] / mag(in, n)` and leaves
//! its loop (unrolled, with a remainder loop) inside the outer one: a region that starts
//! at the outer loop's header, ends at the block where its paths meet, and computes the
//! same value on every iteration. Instruction-by-instruction licm cannot move it (a loop
//! is not an instruction), so the program stays O(n^2), and so does its gradient.
//!
//! The region `R` of a rotated loop with header `H` (the preheader jumps to `H`, so `H`
//! runs whenever the loop is entered: nothing is speculated) is what `H`'s branch
//! reaches before a block `E` where all of it meets. It moves when:
//!
//! - `H`'s branch reads only values from outside the loop (what `H` computes before it
//!   stays, for the loop's own use), and `R` contains a loop (smaller regions are
//!   ordinary licm's);
//! - `R` stays inside the loop and reaches no latch or exit, and every edge into `E`
//!   comes from `R` or `H`;
//! - every operand in `R` is defined in `R` or outside the loop, every instruction is
//!   pure or reads memory nothing in the loop may write (loads, readonly calls);
//! - what `R` computes leaves only through the arguments of its edges into `E`.
//!
//! Then the preheader runs `H`'s branch into `R`, `R`'s edges into `E` go to a join
//! block that passes their arguments on and enters `H`, and `H` jumps straight to `E`
//! with the joined values:
//!
//! ```text
//! ^ph:   brif %c, ^r1, ^r2            ; was: jump ^h(%i0)
//! ^r...: ... jump ^join(%sum)         ; was: jump ^e(%sum)
//! ^join(%s): jump ^h(%i0)
//! ^h(%i): jump ^e(%s)                 ; was: brif %c, ^r1, ^r2
//! ```
//!
//! An inner loop `L` entered by a jump from a block `X` of the outer loop and leaving to
//! one block `E` (clang -O0's shape after `inline`: `for (j...)` of `mag` inside `for
//! (i...)`, the outer header testing `i < n` first) moves the same way when `X` runs on
//! every iteration that enters the body: `L` is put under licm's guard, the outer
//! header's test evaluated once on the entry values, so that it runs exactly when the
//! program would have run it at least once; `X` jumps to `E` with what the guard joined
//! (`zeroinit` when it did not run, and then nothing reads it).
//!
//! Statistics: "regions hoisted".

use std::collections::HashSet;

use adc_ir::{Block, BlockCall, Function, Inst, InstructionData, Module, Value, ValueDef};

use crate::alias::AliasAnalysis;
use crate::domtree::DominatorTree;
use crate::licm::{classify, guard_test, make_guard, Kind};
use crate::loops::to_lcssa;
use crate::loops::{Loop, LoopInfo};

/// Hoists the first invariant region of `l` (see the module documentation); returns
/// whether the CFG changed.
pub fn hoist_invariant_region(
    func: &mut Function,
    module: &Module,
    aa: &AliasAnalysis,
    info: &LoopInfo,
    l: &Loop,
    readable: &dyn Fn(&Function, Inst) -> bool,
) -> bool {
    let Some(ph) = l.preheader else { return false };
    let header = l.header;
    let Some(h_term) = func.terminator(header) else { return false };
    let Some(ph_term) = func.terminator(ph) else { return false };
    let InstructionData::Jump { dest: entry } = func.dfg.insts[ph_term].clone() else {
        return false;
    };
    if entry.block != header {
        return false;
    }
    let members: HashSet<Block> = l.blocks.iter().copied().collect();
    // The branch moves to the preheader: its operands must be there already.
    let outside = |v: Value| {
        let block = match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(i) => func.layout.inst_block(i),
        };
        block.is_none_or(|b| !members.contains(&b))
    };
    if !func.dfg.insts[h_term].args().into_iter().all(outside) {
        return false;
    }
    let Some((merge, region)) = find_region(func, l, &members) else { return false };
    if !region.iter().any(|b| info.loops.iter().any(|inner| inner.header == *b)) {
        return false;
    }
    if !region_is_invariant(func, module, aa, &members, &region, readable)
        || !leaves_only_through_edges(func, &region)
    {
        return false;
    }
    rewrite(func, ph, header, merge, &region, entry);
    true
}

/// The nearest block `E` where the paths from the header's branch meet, and the blocks
/// between (the region), when they stay inside the loop and meet before any latch.
fn find_region(
    func: &Function,
    l: &Loop,
    members: &HashSet<Block>,
) -> Option<(Block, HashSet<Block>)> {
    let starts = func.successors(l.header);
    'candidates: for &merge in l.blocks.iter().skip(1) {
        let mut region = HashSet::new();
        let mut work: Vec<Block> = starts.iter().copied().filter(|b| *b != merge).collect();
        while let Some(b) = work.pop() {
            if b == l.header || !members.contains(&b) || l.latches.contains(&b) {
                continue 'candidates;
            }
            if l.exiting.contains(&b) {
                continue 'candidates;
            }
            if region.insert(b) {
                work.extend(func.successors(b).into_iter().filter(|s| *s != merge));
            }
        }
        if region.is_empty() {
            continue;
        }
        // Every edge into the merge comes from the region or the header.
        let preds_ok =
            func.layout.blocks().iter().all(|&b| {
                !func.successors(b).contains(&merge) || b == l.header || region.contains(&b)
            });
        if preds_ok {
            return Some((merge, region));
        }
    }
    None
}

/// Operands defined in the region or outside the loop; instructions pure or reading
/// memory that nothing in the loop writes (`readable`).
fn region_is_invariant(
    func: &Function,
    module: &Module,
    aa: &AliasAnalysis,
    members: &HashSet<Block>,
    region: &HashSet<Block>,
    readable: &dyn Fn(&Function, Inst) -> bool,
) -> bool {
    let defined_ok = |v: Value| {
        let block = match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(i) => func.layout.inst_block(i),
        };
        block.is_none_or(|b| region.contains(&b) || !members.contains(&b))
            || matches!(func.dfg.value_def(v), ValueDef::Result(i)
                if matches!(func.dfg.insts[i], InstructionData::Const { .. }))
    };
    for &b in region {
        for &inst in func.layout.block_insts(b) {
            let data = &func.dfg.insts[inst];
            if !data.args().into_iter().all(defined_ok) {
                return false;
            }
            let allowed = match data {
                InstructionData::Jump { .. } | InstructionData::Brif { .. } => true,
                _ => match classify(module, func, aa, inst) {
                    Kind::Pure => true,
                    Kind::Reads(_) => readable(func, inst),
                    Kind::Stay => false,
                },
            };
            if !allowed {
                return false;
            }
        }
    }
    true
}

/// Whether values defined in the region are used outside it only as arguments of its
/// edges into the merge (its own terminators).
fn leaves_only_through_edges(func: &Function, region: &HashSet<Block>) -> bool {
    let in_region = |v: Value| {
        let block = match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => Some(b),
            ValueDef::Result(i) => func.layout.inst_block(i),
        };
        block.is_some_and(|b| region.contains(&b))
    };
    for &b in func.layout.blocks() {
        if region.contains(&b) {
            continue;
        }
        for &inst in func.layout.block_insts(b) {
            if func.dfg.insts[inst].args().into_iter().any(in_region) {
                return false;
            }
        }
    }
    true
}

fn rewrite(
    func: &mut Function,
    ph: Block,
    header: Block,
    merge: Block,
    region: &HashSet<Block>,
    entry: BlockCall,
) {
    let join = func.dfg.make_block();
    let types: Vec<_> =
        func.dfg.block_params(merge).iter().map(|v| func.dfg.value_type(*v).clone()).collect();
    let joined: Vec<Value> =
        types.into_iter().map(|t| func.dfg.append_block_param(join, t)).collect();
    if let Some(name) = func.dfg.block_name(header) {
        let name = format!("{name}.region");
        func.dfg.set_block_name(join, &name);
    }
    func.layout.insert_block_before(join, header);
    let retarget = |data: &mut InstructionData| {
        for target in data.branch_targets_mut() {
            if target.block == merge {
                target.block = join;
            }
        }
    };
    for &b in region {
        if let Some(term) = func.terminator(b) {
            retarget(&mut func.dfg.insts[term]);
        }
    }
    let h_term = func.terminator(header).expect("checked");
    let ph_term = func.terminator(ph).expect("checked");
    let mut branch = func.dfg.insts[h_term].clone();
    retarget(&mut branch);
    func.dfg.insts[ph_term] = branch;
    let enter = func.dfg.make_inst(InstructionData::Jump { dest: entry }, None);
    func.layout.append_inst(enter, join);
    func.dfg.insts[h_term] = InstructionData::Jump { dest: BlockCall::new(merge, joined) };
}

/// Hoists the first invariant inner loop of `l` under a guard (see the module
/// documentation); returns whether the CFG changed.
pub fn hoist_invariant_inner_loop(
    func: &mut Function,
    module: &Module,
    aa: &AliasAnalysis,
    info: &LoopInfo,
    dt: &DominatorTree,
    l: &Loop,
    readable: &dyn Fn(&Function, Inst) -> bool,
) -> bool {
    let Some(ph) = l.preheader else { return false };
    let members: HashSet<Block> = l.blocks.iter().copied().collect();
    for inner in info.loops.iter().filter(|i| i.depth == l.depth + 1 && members.contains(&i.header))
    {
        let (Some(x), [exit]) = (inner.preheader, inner.exits.as_slice()) else { continue };
        let exit = *exit;
        if !members.contains(&x) || !members.contains(&exit) {
            continue;
        }
        let Some(x_term) = func.terminator(x) else { continue };
        let InstructionData::Jump { dest: into_inner } = func.dfg.insts[x_term].clone() else {
            continue;
        };
        let region: HashSet<Block> = inner.blocks.iter().copied().collect();
        let exit_preds_inside = func
            .layout
            .blocks()
            .iter()
            .all(|&b| !func.successors(b).contains(&exit) || region.contains(&b));
        let outside_or_const = |v: Value| match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => !members.contains(&b),
            ValueDef::Result(i) => {
                matches!(func.dfg.insts[i], InstructionData::Const { .. })
                    || func.layout.inst_block(i).is_none_or(|b| !members.contains(&b))
            }
        };
        // `X` runs on every iteration that enters the body.
        let every_iteration = l.latches.iter().all(|b| dt.dominates(x, *b))
            && l.exiting.iter().all(|e| *e == l.header || dt.dominates(x, *e));
        if !exit_preds_inside
            || !every_iteration
            || !into_inner.args.iter().all(|a| outside_or_const(*a))
            || !region_is_invariant(func, module, aa, &members, &region, readable)
        {
            continue;
        }
        let Some((cond, body_on_true)) = guard_test(module, func, aa, l, ph) else { continue };
        let blocks: Vec<Block> = inner.blocks.clone();
        to_lcssa(func, &blocks, exit);
        if !leaves_only_through_edges(func, &region) {
            // LCSSA could not route everything through the exit: leave it (and undo
            // nothing; the exit parameters it added are harmless).
            continue;
        }
        let guard = make_guard(func, module, l, ph, cond, body_on_true);
        let types: Vec<_> =
            func.dfg.block_params(exit).iter().map(|v| func.dfg.value_type(*v).clone()).collect();
        let joined: Vec<Value> =
            types.iter().map(|t| func.dfg.append_block_param(guard.join, t.clone())).collect();
        // The guard did not run: zeroinit, never read.
        let ph_term = func.terminator(ph).expect("make_guard ended the preheader");
        let zeros: Vec<Value> = types
            .into_iter()
            .map(|ty| {
                let data = InstructionData::Const { ty: ty.clone(), value: adc_ir::Constant::Zero };
                let zero = func.dfg.make_inst(data, Some(ty));
                func.layout.insert_inst_before(zero, ph_term);
                func.dfg.inst_result(zero).expect("a const has a result")
            })
            .collect();
        for target in func.dfg.insts[ph_term].branch_targets_mut() {
            if target.block == guard.join {
                target.args.extend(zeros.iter().copied());
            }
        }
        let guard_term = func.terminator(guard.block).expect("make_guard ended the guard");
        func.dfg.insts[guard_term] = InstructionData::Jump { dest: into_inner };
        for &b in &blocks {
            if let Some(term) = func.terminator(b) {
                for target in func.dfg.insts[term].branch_targets_mut() {
                    if target.block == exit {
                        target.block = guard.join;
                    }
                }
            }
        }
        func.dfg.insts[x_term] = InstructionData::Jump { dest: BlockCall::new(exit, joined) };
        return true;
    }
    false
}
