//! `interleave`: splits the loop-carried chain of a reassociable float sum into two partial
//! sums by unrolling a small innermost loop once.
//!
//! A loop whose header carries `%s` with `%s.next = fadd reassoc %s, %x` on the back edge
//! runs no faster than one `fadd` latency per iteration (4 cycles on current x86), however
//! little else the body does. Reverse mode produces exactly such loops: the adjoint of a
//! value read on every iteration (`d_xc += d_q[row] * icf[idx]` in GMM's reversed
//! triangle) is a register accumulated once per iteration, while the primal loop wrote a
//! different element each time. Adjoint sums carry `reassoc` (their order is an artifact
//! of the reverse sweep), so the loop may alternate between two accumulators:
//!
//! ```text
//! ^h(%i, %s, %t):  body A (uses %s);  brif %c, ^exit.a, ^latch
//! ^latch:          jump ^h.2(%i', %t, %s.next)      ; copy B continues with its own sum
//! ^h.2(%i2, %s2, %t2): body B (uses %s2); brif %c2, ^exit.b, ^latch.2
//! ^latch.2:        jump ^h(%i2', %t2, %s2.next)
//! ^exit.a: %r = fadd reassoc %s.next, %t  ...       ; the two halves meet at the exit
//! ```
//!
//! Each copy keeps its own exit test, so the trip count need not be known or even.
//! The second sum starts at `-0.0`, the identity of `fadd` (`-0.0 + x` is `x` exactly,
//! signed zeros included). The result differs from the sequential sum only by rounding,
//! which `reassoc` allows.
//!
//! What qualifies: an innermost loop with one latch ending in `jump`, one exit block whose
//! predecessors are all in the loop, at most [`MAX_BODY`] instructions and no `alloca`;
//! a reduction is a header parameter of float type whose only use in the loop is one
//! `fadd reassoc` with another operand, whose result is the back-edge argument and is used
//! in the loop by nothing else (both may leave the loop). Values that leave the loop are
//! first passed through parameters of the exit block (LCSSA form) so both copies can
//! deliver theirs.
//!
//! Statistics: "loops interleaved", "sums split".

use std::collections::{HashMap, HashSet};

use adc_ir::{
    BinaryOp, Block, BlockCall, Constant, Diagnostic, Function, Inst, InstFlags, InstructionData,
    Type, Value, ValueDef,
};

use crate::loops::{to_lcssa, Loop, LoopInfo};
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::insert_const_at_entry;

/// Largest loop body (instructions, all blocks) worth duplicating.
pub const MAX_BODY: usize = 48;

pub struct Interleave;

impl Pass for Interleave {
    fn name(&self) -> &'static str {
        "interleave"
    }
}

impl FunctionPass for Interleave {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let info = cx.analysis::<LoopInfo>(func);
        let mut plans = Vec::new();
        for (id, l) in info.loops.iter().enumerate() {
            if info.is_innermost(id) {
                plans.extend(plan(func, l));
            }
        }
        if plans.is_empty() {
            return Ok(PreservedAnalyses::All);
        }
        let mut sums = 0;
        for plan in &plans {
            sums += plan.sums.len() as u64;
            interleave(func, plan);
        }
        cx.stats.add("loops interleaved", plans.len() as u64);
        cx.stats.add("sums split", sums);
        cx.invalidate(PreservedAnalyses::None);
        Ok(PreservedAnalyses::None)
    }
}

/// One accumulator of a qualifying loop.
struct Sum {
    /// Index of the accumulator among the header's parameters.
    index: usize,
    /// The `fadd` that adds one iteration's term.
    add: Inst,
}

struct Plan {
    blocks: Vec<Block>,
    header: Block,
    latch: Block,
    exit: Block,
    sums: Vec<Sum>,
}

fn plan(func: &Function, l: &Loop) -> Option<Plan> {
    let [latch] = l.latches[..] else { return None };
    let [exit] = l.exits[..] else { return None };
    let in_loop: HashSet<Block> = l.blocks.iter().copied().collect();
    let term = func.terminator(latch)?;
    if !matches!(func.dfg.insts[term], InstructionData::Jump { .. }) {
        return None;
    }
    if !l.is_dedicated_exit(func, exit) || Some(l.header) == func.entry_block() {
        return None;
    }
    let insts: Vec<Inst> =
        l.blocks.iter().flat_map(|b| func.layout.block_insts(*b).iter().copied()).collect();
    if insts.len() > MAX_BODY
        || insts.iter().any(|i| matches!(func.dfg.insts[*i], InstructionData::Alloca { .. }))
    {
        return None;
    }
    // Uses inside the loop, exit-edge arguments excluded (those are handled at the exits).
    let mut uses: HashMap<Value, Vec<Inst>> = HashMap::new();
    for &inst in &insts {
        let data = &func.dfg.insts[inst];
        if data.is_terminator() {
            for call in data.branch_targets() {
                if in_loop.contains(&call.block) {
                    for &a in &call.args {
                        uses.entry(a).or_default().push(inst);
                    }
                }
            }
            if let InstructionData::Brif { cond, .. }
            | InstructionData::Switch { value: cond, .. } = data
            {
                uses.entry(*cond).or_default().push(inst);
            }
            if let InstructionData::Return { .. } = data {
                return None;
            }
        } else {
            data.for_each_arg(|a| uses.entry(a).or_default().push(inst));
        }
    }
    let InstructionData::Jump { dest } = &func.dfg.insts[term] else { return None };
    let mut sums = Vec::new();
    for (index, &param) in func.dfg.block_params(l.header).iter().enumerate() {
        if !func.dfg.value_type(param).lane_type().is_float() {
            continue;
        }
        let next = dest.args[index];
        let ValueDef::Result(add) = func.dfg.value_def(next) else { continue };
        let InstructionData::Binary { op: BinaryOp::Fadd, flags, args } = &func.dfg.insts[add]
        else {
            continue;
        };
        let term_is_other = args[0] != args[1] && args.contains(&param);
        let only_use = |v: Value, user: Inst| uses.get(&v).is_some_and(|u| u == &[user]);
        if flags.contains(InstFlags::REASSOC)
            && term_is_other
            && insts.contains(&add)
            && only_use(param, add)
            && only_use(next, term)
        {
            sums.push(Sum { index, add });
        }
    }
    if sums.is_empty() {
        return None;
    }
    Some(Plan { blocks: l.blocks.clone(), header: l.header, latch, exit, sums })
}

fn interleave(func: &mut Function, plan: &Plan) {
    to_lcssa(func, &plan.blocks, plan.exit);
    let in_loop: HashSet<Block> = plan.blocks.iter().copied().collect();

    // Copy B: blocks, parameters, then instructions in the loop's reverse post-order (a
    // definition dominates its uses, so it is cloned first).
    let mut blocks: HashMap<Block, Block> = HashMap::new();
    let mut values: HashMap<Value, Value> = HashMap::new();
    for &block in &plan.blocks {
        let copy = func.dfg.make_block();
        if let Some(name) = func.dfg.block_name(block) {
            let name = format!("{name}.2");
            func.dfg.set_block_name(copy, &name);
        }
        func.layout.insert_block_before(copy, plan.exit);
        for &param in &func.dfg.block_params(block).to_vec() {
            let ty = func.dfg.value_type(param).clone();
            values.insert(param, func.dfg.append_block_param(copy, ty));
        }
        blocks.insert(block, copy);
    }
    for &block in &plan.blocks {
        for &inst in &func.layout.block_insts(block).to_vec() {
            let mut data = func.dfg.insts[inst].clone();
            data.map_args(|v| values.get(&v).copied().unwrap_or(v));
            for call in data.branch_targets_mut() {
                if let Some(copy) = blocks.get(&call.block) {
                    call.block = *copy;
                }
            }
            let ty = func.dfg.inst_result(inst).map(|r| func.dfg.value_type(r).clone());
            let clone = func.dfg.make_inst(data, ty);
            func.layout.append_inst(clone, blocks[&block]);
            if let (Some(old), Some(new)) =
                (func.dfg.inst_result(inst), func.dfg.inst_result(clone))
            {
                values.insert(old, new);
            }
        }
    }

    // The other half's sum rides along in a new header parameter of each copy.
    let header_b = blocks[&plan.header];
    let latch_b = blocks[&plan.latch];
    let mut carried_a = Vec::new();
    let mut carried_b = Vec::new();
    for sum in &plan.sums {
        let ty = func.dfg.value_type(func.dfg.block_params(plan.header)[sum.index]).clone();
        carried_a.push(func.dfg.append_block_param(plan.header, ty.clone()));
        carried_b.push(func.dfg.append_block_param(header_b, ty));
    }
    // Entries from outside start the other half at -0.0.
    let zeros: Vec<Value> = carried_a
        .iter()
        .map(|c| {
            let ty = func.dfg.value_type(*c).clone();
            insert_const_at_entry(func, ty.clone(), negative_zero(&ty))
        })
        .collect();
    let preds: Vec<Block> = func.layout.blocks().to_vec();
    for pred in preds {
        if in_loop.contains(&pred) || blocks.values().any(|b| *b == pred) {
            continue;
        }
        let Some(term) = func.terminator(pred) else { continue };
        for call in func.dfg.insts[term].branch_targets_mut() {
            if call.block == plan.header {
                call.args.extend(zeros.iter().copied());
            }
        }
    }
    // Latch A continues in copy B: B's own sum in the accumulator's place, A's sum carried.
    rewire_latch(func, plan.latch, header_b, plan, &carried_a);
    rewire_latch(func, latch_b, plan.header, plan, &carried_b);

    // At the exits the two halves meet.
    let sums_a: Vec<(Value, Value, Value)> = plan
        .sums
        .iter()
        .zip(&carried_a)
        .map(|(s, c)| (func.dfg.block_params(plan.header)[s.index], result(func, s.add), *c))
        .collect();
    let sums_b: Vec<(Value, Value, Value)> =
        sums_a.iter().zip(&carried_b).map(|((p, n, _), c)| (values[p], values[n], *c)).collect();
    let flags = plan
        .sums
        .iter()
        .map(|s| match &func.dfg.insts[s.add] {
            InstructionData::Binary { flags, .. } => *flags,
            _ => InstFlags::REASSOC,
        })
        .collect::<Vec<_>>();
    for &block in &plan.blocks {
        combine_at_exit(func, block, plan.exit, &sums_a, &flags);
        combine_at_exit(func, blocks[&block], plan.exit, &sums_b, &flags);
    }
}

fn result(func: &Function, inst: Inst) -> Value {
    func.dfg.inst_result(inst).expect("fadd has a result")
}

fn negative_zero(ty: &Type) -> Constant {
    let lane = if *ty.lane_type() == Type::F32 { Constant::f32(-0.0) } else { Constant::f64(-0.0) };
    match ty {
        Type::Vector(_, n) => Constant::Elements(vec![lane; *n as usize]),
        _ => lane,
    }
}

/// Points `latch`'s back edge at `to`: each accumulator's slot gets the sum carried by
/// this copy (the other half's), and the accumulated value is carried instead.
fn rewire_latch(func: &mut Function, latch: Block, to: Block, plan: &Plan, carried: &[Value]) {
    let Some(term) = func.terminator(latch) else { return };
    let InstructionData::Jump { dest } = &mut func.dfg.insts[term] else { return };
    dest.block = to;
    let mut extra = Vec::new();
    for (sum, &other) in plan.sums.iter().zip(carried) {
        extra.push(dest.args[sum.index]);
        dest.args[sum.index] = other;
    }
    dest.args.extend(extra);
}

/// Every edge from `block` to `exit` that passes a partial sum gets an edge block adding
/// the other half to it.
fn combine_at_exit(
    func: &mut Function,
    block: Block,
    exit: Block,
    sums: &[(Value, Value, Value)],
    flags: &[InstFlags],
) {
    let Some(term) = func.terminator(block) else { return };
    let count = func.dfg.insts[term].branch_targets().len();
    for k in 0..count {
        let call = func.dfg.insts[term].branch_targets()[k].clone();
        if call.block != exit {
            continue;
        }
        let partial = |v: Value| sums.iter().position(|(p, n, _)| *p == v || *n == v);
        if !call.args.iter().any(|a| partial(*a).is_some()) {
            continue;
        }
        let edge = func.dfg.make_block();
        func.layout.insert_block_before(edge, exit);
        let mut args = Vec::new();
        for &a in &call.args {
            let Some(i) = partial(a) else {
                args.push(a);
                continue;
            };
            let ty = func.dfg.value_type(a).clone();
            let data = InstructionData::Binary {
                op: BinaryOp::Fadd,
                flags: flags[i],
                args: [a, sums[i].2],
            };
            let add = func.dfg.make_inst(data, Some(ty));
            func.layout.append_inst(add, edge);
            args.push(result(func, add));
        }
        let jump =
            func.dfg.make_inst(InstructionData::Jump { dest: BlockCall::new(exit, args) }, None);
        func.layout.append_inst(jump, edge);
        let target = &mut func.dfg.insts[term].branch_targets_mut()[k];
        target.block = edge;
        target.args.clear();
    }
}
