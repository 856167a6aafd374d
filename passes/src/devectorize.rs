//! Devectorizing LLVM's vectorized loops through their own scalar fallback.
//!
//! LLVM's loop vectorizer keeps the original loop as a scalar fallback: a guard before
//! the vector loop (too few iterations, arrays that may overlap) skips it and runs the
//! scalar loop from the start, and after the vector loop a middle block runs the scalar
//! loop on the remaining iterations. Both loops carry `llvm.loop.isvectorized`, which the
//! importer records on their latch branches (`DataFlowGraph::loop_vectorized`).
//!
//! Taking the guard's skip edge always is a legal run of the program (the vectorizer's
//! own contract: every guard may fail), and it leaves the plain scalar loop the source
//! had. Reverse mode differentiates that copy: the vector loop, its middle block and its
//! remainder cost the reverse sweep a second loop nest with its own trip counts and tapes
//! (GMM's gradient from clang -O2 bitcode took 1.18x its time from scalar bitcode, 1.05x
//! with loop vectorization alone turned off in clang). The primal keeps its vectors; the
//! post-AD `vectorize` pass packs simple loops of the derivative again.
//!
//! A guard qualifies when it is outside both loops, dominates the vector loop's header,
//! and one of its edges leads (through blocks that only jump) to the block the middle
//! block resumes at, which leads to the header of a marked loop without vectors. Nothing
//! else is changed: a vector loop without a scalar fallback (a trip count the vector
//! width divides) stays as it is. Unreachable blocks are removed afterwards.

use std::collections::HashSet;

use adc_ir::{Block, Function, InstructionData};

use crate::cfg::ControlFlowGraph;
use crate::domtree::DominatorTree;
use crate::loops::{Loop, LoopInfo};

/// How far a chain of blocks that only jump is followed (split edges, `scalar.ph`).
const MAX_JUMP_CHAIN: usize = 4;

/// How many blocks the search from a middle block to its scalar fallback visits (the
/// fallback may start with a runtime-unrolled prologue).
const MAX_RESUME_SEARCH: usize = 32;

/// Makes every qualifying guard of a marked vector loop take its scalar fallback; returns
/// how many guards were rewritten.
pub fn take_scalar_fallbacks(func: &mut Function) -> usize {
    if !func.layout.insts().any(|(_, inst)| func.dfg.loop_vectorized[inst]) {
        return 0;
    }
    let cfg = ControlFlowGraph::new(func);
    let dt = DominatorTree::new(func, &cfg);
    let loops = LoopInfo::new(&cfg, &dt);
    let marked_branch =
        |block: Block| func.terminator(block).is_some_and(|term| func.dfg.loop_vectorized[term]);
    // The importer splits the critical back edge of a latch that also exits: the latch is
    // then a block that only jumps, after the marked branch.
    let marked = |l: &Loop| {
        l.latches.iter().any(|&latch| {
            marked_branch(latch)
                || (only_jump(func, latch).is_some()
                    && matches!(cfg.preds(latch), [from] if marked_branch(*from)))
        })
    };
    let scalar_loops: Vec<&Loop> =
        loops.loops.iter().filter(|l| marked(l) && !computes_with_vectors(func, l)).collect();
    let mut rewrites = Vec::new();
    for vector_loop in loops.loops.iter().filter(|l| marked(l) && computes_with_vectors(func, l)) {
        let [middle] = vector_loop.exits[..] else { continue };
        let Some(resume) = resume_block(func, middle, &scalar_loops) else { continue };
        // The outermost qualifying guard between the vector loop and the loop around it:
        // skipping it skips the runtime checks below it too.
        let mut guard = None;
        let mut at = dt.idom(vector_loop.header);
        while let Some(block) = at {
            if loops.loop_of(block) != vector_loop.parent {
                break;
            }
            if let Some(edge) = skip_edge(func, block, resume) {
                // The other edge must lead into the vector loop, not around it.
                let targets = func.successors(block);
                if dt.dominates(targets[1 - edge], vector_loop.header) {
                    guard = Some((block, edge));
                }
            }
            if vector_loop.parent.is_some_and(|p| loops.loops[p].header == block) {
                break;
            }
            at = dt.idom(block);
        }
        if let Some(rewrite) = guard {
            rewrites.push(rewrite);
        }
    }
    for &(block, edge) in &rewrites {
        let Some(term) = func.terminator(block) else { continue };
        let dest = func.dfg.insts[term].branch_targets()[edge].clone();
        func.dfg.insts[term] = InstructionData::Jump { dest };
    }
    if !rewrites.is_empty() {
        crate::simplify_cfg::remove_unreachable_blocks(func);
    }
    rewrites.len()
}

/// Whether an instruction of the loop takes or makes a vector.
fn computes_with_vectors(func: &Function, l: &Loop) -> bool {
    l.blocks.iter().any(|&block| {
        func.layout.block_insts(block).iter().any(|&inst| {
            func.dfg.inst_result(inst).is_some_and(|r| func.dfg.value_type(r).is_vector())
                || func.dfg.insts[inst].args().iter().any(|a| func.dfg.value_type(*a).is_vector())
        })
    })
}

/// The block reached from `block` through blocks that hold nothing but a jump and the
/// constants it passes (edge splits), `block` itself when it holds more.
fn through_jumps(func: &Function, mut block: Block) -> Block {
    for _ in 0..MAX_JUMP_CHAIN {
        match only_jump(func, block) {
            Some(dest) if func.dfg.block_params(block).is_empty() => block = dest,
            _ => break,
        }
    }
    block
}

/// The destination of a block that holds nothing but constants and a jump.
fn only_jump(func: &Function, block: Block) -> Option<Block> {
    let (&last, rest) = func.layout.block_insts(block).split_last()?;
    if !rest.iter().all(|&inst| matches!(func.inst(inst), InstructionData::Const { .. })) {
        return None;
    }
    match func.inst(last) {
        InstructionData::Jump { dest } => Some(dest.block),
        _ => None,
    }
}

/// The block where the middle block after a vector loop resumes the scalar fallback:
/// the successor (past blocks that only jump) from which a marked scalar loop is reached
/// without passing the other successor, the loop's exit, where the scalar loop leaves to.
/// That exit tells the fallback from a later loop of the function, which is marked too.
fn resume_block(func: &Function, middle: Block, scalar_loops: &[&Loop]) -> Option<Block> {
    let successors: Vec<Block> =
        func.successors(middle).into_iter().map(|b| through_jumps(func, b)).collect();
    let reaches_fallback = |start: Block, exit: Block| {
        let mut seen: HashSet<Block> = HashSet::from([exit]);
        let mut work = vec![start];
        while let Some(block) = work.pop() {
            if seen.len() > MAX_RESUME_SEARCH || !seen.insert(block) {
                continue;
            }
            let fallback = scalar_loops.iter().any(|l| {
                l.header == block && l.exits.iter().any(|&x| through_jumps(func, x) == exit)
            });
            if fallback {
                return true;
            }
            work.extend(func.successors(block));
        }
        false
    };
    // A middle block that only jumps (a fallback always needed) is not taken: its one
    // successor could as well be the exit, with a later loop's fallback after it.
    match successors[..] {
        [a, b] if a != b => {
            if reaches_fallback(a, b) {
                Some(a)
            } else if reaches_fallback(b, a) {
                Some(b)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The index of `block`'s conditional edge that leads to `resume`, when its other edge
/// does not.
fn skip_edge(func: &Function, block: Block, resume: Block) -> Option<usize> {
    let term = func.terminator(block)?;
    let InstructionData::Brif { then_dest, else_dest, .. } = func.inst(term) else {
        return None;
    };
    let leads = |b: Block| through_jumps(func, b) == resume;
    match (leads(then_dest.block), leads(else_dest.block)) {
        (true, false) => Some(0),
        (false, true) => Some(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;
    use adc_ir::{Module, Type};

    use super::*;

    /// The shape LLVM's loop vectorizer gives `s = 0; for (i < n) s += p[i] * p[i]` with
    /// `reassoc` (two lanes): a guard for short trip counts, the vector loop, a middle
    /// block that reduces the lanes and resumes the scalar loop at `nvec`, the scalar loop.
    const SUM_OF_SQUARES: &str = "func @f(%p: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %fzero = const f64 0.0
  %four = const i64 4
  %few = icmp ult i64 %n, %four
  brif %few, ^scalar_ph(%zero, %fzero), ^vector_ph
^vector_ph:
  %mask = const i64 -2
  %nvec = and i64 %n, %mask
  %vzero = const <2 x f64> zeroinit
  jump ^vector(%zero, %vzero)
^vector(%i: i64, %acc: <2 x f64>):
  %eight = const i64 8
  %off = mul i64 %i, %eight
  %a = ptradd ptr %p, %off
  %v = load <2 x f64>, %a, align 8
  %sq = fmul reassoc <2 x f64> %v, %v
  %acc2 = fadd reassoc <2 x f64> %acc, %sq
  %two = const i64 2
  %i2 = add i64 %i, %two
  %done = icmp eq i64 %i2, %nvec
  brif %done, ^middle, ^vector(%i2, %acc2)
^middle:
  %l0 = const i64 0
  %l1 = const i64 1
  %s0 = extractlane <2 x f64> %acc2, %l0
  %s1 = extractlane <2 x f64> %acc2, %l1
  %s = fadd reassoc f64 %s0, %s1
  %all = icmp eq i64 %nvec, %n
  brif %all, ^exit(%s), ^scalar_ph(%nvec, %s)
^scalar_ph(%start: i64, %init: f64):
  jump ^scalar(%start, %init)
^scalar(%j: i64, %t: f64):
  %eight2 = const i64 8
  %joff = mul i64 %j, %eight2
  %b = ptradd ptr %p, %joff
  %x = load f64, %b, align 8
  %xx = fmul reassoc f64 %x, %x
  %t2 = fadd reassoc f64 %t, %xx
  %one = const i64 1
  %j2 = add i64 %j, %one
  %end = icmp eq i64 %j2, %n
  brif %end, ^exit(%t2), ^scalar(%j2, %t2)
^exit(%r: f64):
  ret %r
}
";

    /// Marks the latch branches of both loops, as the importer does from
    /// `llvm.loop.isvectorized`.
    fn marked(text: &str, latches: &[&str]) -> Module {
        let mut module = parse_module(text).expect("parses");
        let func = module.functions.values_mut().next().expect("one function");
        for &name in latches {
            let block = func
                .layout
                .blocks()
                .iter()
                .copied()
                .find(|b| func.dfg.block_names[*b].as_deref() == Some(name));
            let term = func.terminator(block.expect("named block")).expect("terminator");
            func.dfg.loop_vectorized[term] = true;
        }
        module
    }

    fn sum(module: &Module, n: usize) -> f64 {
        let mut interp = Interpreter::new(module).expect("interpreter");
        let values: Vec<Val> = (0..n).map(|k| Val::F64(0.5 + k as f64)).collect();
        let p = interp.alloc(&Type::F64, &values).expect("buffer");
        let id = module.function_by_name("f").expect("f");
        match interp.call(id, &[p, Val::Int(n as u128)]).expect("runs") {
            Some(Val::F64(r)) => r,
            other => panic!("returned {other:?}"),
        }
    }

    #[test]
    fn vector_loop_is_replaced_by_its_scalar_fallback() {
        let mut module = marked(SUM_OF_SQUARES, &["vector", "scalar"]);
        let before: Vec<f64> = (1..9).map(|n| sum(&module, n)).collect();
        let func = module.functions.values_mut().next().expect("one function");
        assert_eq!(take_scalar_fallbacks(func), 1);
        let names: Vec<&str> = func
            .layout
            .blocks()
            .iter()
            .filter_map(|b| func.dfg.block_names[*b].as_deref())
            .collect();
        assert_eq!(names, ["entry", "scalar_ph", "scalar", "exit"]);
        assert!(!func.layout.insts().any(|(_, i)| func
            .dfg
            .inst_result(i)
            .is_some_and(|r| func.dfg.value_type(r).is_vector())));
        adc_ir::verify::verify_module(&module).expect("verifies");
        let after: Vec<f64> = (1..9).map(|n| sum(&module, n)).collect();
        // Both run the same scalar additions for n < 4; from 4 on the vector loop summed
        // in two lanes, the scalar loop in order: equal up to rounding.
        for (b, a) in before.iter().zip(&after) {
            assert!((b - a).abs() <= 1e-12 * b.abs(), "{before:?} vs {after:?}");
        }
    }

    /// clang 14's shape: the vector loop is unrolled (four lanes an iteration) and one
    /// more two-lane iteration may run after it, before the middle block.
    const UNROLLED_WITH_REMAINDER: &str = "func @f(%p: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %fzero = const f64 0.0
  %four = const i64 4
  %few = icmp ult i64 %n, %four
  brif %few, ^scalar_ph(%zero, %fzero), ^vector_ph
^vector_ph:
  %m4 = const i64 -4
  %m2 = const i64 -2
  %n4 = and i64 %n, %m4
  %nvec = and i64 %n, %m2
  %vzero = const <2 x f64> zeroinit
  jump ^vector(%zero, %vzero)
^vector(%i: i64, %acc: <2 x f64>):
  %eight = const i64 8
  %sixteen = const i64 16
  %off = mul i64 %i, %eight
  %a = ptradd ptr %p, %off
  %b = ptradd ptr %a, %sixteen
  %v = load <2 x f64>, %a, align 8
  %w = load <2 x f64>, %b, align 8
  %vv = fmul reassoc <2 x f64> %v, %v
  %ww = fmul reassoc <2 x f64> %w, %w
  %acc1 = fadd reassoc <2 x f64> %acc, %vv
  %acc2 = fadd reassoc <2 x f64> %acc1, %ww
  %i2 = add i64 %i, %four
  %done = icmp eq i64 %i2, %n4
  brif %done, ^after, ^vector(%i2, %acc2)
^after:
  %more = icmp ne i64 %nvec, %n4
  brif %more, ^extra, ^middle(%acc2)
^extra:
  %eight3 = const i64 8
  %xoff = mul i64 %n4, %eight3
  %c = ptradd ptr %p, %xoff
  %u = load <2 x f64>, %c, align 8
  %uu = fmul reassoc <2 x f64> %u, %u
  %acc3 = fadd reassoc <2 x f64> %acc2, %uu
  jump ^middle(%acc3)
^middle(%accm: <2 x f64>):
  %l0 = const i64 0
  %l1 = const i64 1
  %s0 = extractlane <2 x f64> %accm, %l0
  %s1 = extractlane <2 x f64> %accm, %l1
  %s = fadd reassoc f64 %s0, %s1
  %all = icmp eq i64 %nvec, %n
  brif %all, ^exit(%s), ^scalar_ph(%nvec, %s)
^scalar_ph(%start: i64, %init: f64):
  jump ^scalar(%start, %init)
^scalar(%j: i64, %t: f64):
  %eight2 = const i64 8
  %joff = mul i64 %j, %eight2
  %q = ptradd ptr %p, %joff
  %x = load f64, %q, align 8
  %xx = fmul reassoc f64 %x, %x
  %t2 = fadd reassoc f64 %t, %xx
  %one = const i64 1
  %j2 = add i64 %j, %one
  %end = icmp eq i64 %j2, %n
  brif %end, ^exit(%t2), ^scalar(%j2, %t2)
^exit(%r: f64):
  ret %r
}
";

    /// Left alone: the middle block must be the vector loop's own exit. Looking further
    /// (past blocks after the loop) matched a later loop's guard for a middle block and
    /// skipped code, a wrong derivative (gradient fuzzer seed 310422,
    /// `tests/c/fuzz-found/seed310422_*`).
    #[test]
    fn middle_block_after_a_vector_remainder_is_not_searched_for() {
        let mut module = marked(UNROLLED_WITH_REMAINDER, &["vector", "scalar"]);
        let func = module.functions.values_mut().next().expect("one function");
        assert_eq!(take_scalar_fallbacks(func), 0);
    }

    /// Without LLVM's mark nothing proves the skipped path computes the same: the same
    /// shape written by hand is left alone, as is a marked vector loop whose middle block
    /// resumes no marked scalar loop.
    #[test]
    fn unmarked_loops_and_loops_without_fallback_stay() {
        let mut module = marked(SUM_OF_SQUARES, &[]);
        let func = module.functions.values_mut().next().expect("one function");
        assert_eq!(take_scalar_fallbacks(func), 0);
        let mut module = marked(SUM_OF_SQUARES, &["vector"]);
        let func = module.functions.values_mut().next().expect("one function");
        assert_eq!(take_scalar_fallbacks(func), 0);
        assert_eq!(func.layout.blocks().len(), 7);
    }
}
