//! `licm`: loop-invariant code motion.
//!
//! For each natural loop, innermost first, instructions whose operands are all defined
//! outside the loop move to the loop's preheader (one is inserted when the loop lacks
//! it). What may move:
//!
//! - pure instructions that cannot trap: arithmetic, compares, casts, `ptradd`,
//!   aggregates; integer division/remainder only by a non-zero constant (and not `-1` for
//!   the signed ones, `INT_MIN / -1` traps);
//! - non-volatile loads whose address is invariant, when no instruction of the loop may
//!   write memory that overlaps the load (`alias::AliasAnalysis::clobbers`: noalias
//!   parameters, distinct and private objects, disjoint constant offsets, TBAA, the
//!   declared and inferred effects of calls);
//! - calls that may read but not write memory (declared `readnone`/`readonly`, or
//!   inferred so by `effects`) with invariant arguments, when nothing in the loop may
//!   write what they may read (everything but private allocas, unless `argmemonly`).
//!
//! Loads and calls are not speculated: moving them out of a loop whose body may run zero
//! times could run a trapping load or call the program never ran. They move only when
//! they are guaranteed to run once the loop is entered (their block dominates every
//! exiting block), or under a guard: when the header ends in `brif` with one arm out of
//! the loop and only pure instructions before it, the header's test is evaluated once on
//! the preheader's arguments, and the hoisted loads/calls go into a guarded block that
//! runs only when the first test enters the body:
//!
//! ```text
//! ^ph:  %c0 = <header test on the entry values>;  brif %c0, ^guard, ^join(zeroinit)
//! ^guard: %m = call @mag(%in, %n);                 jump ^join(%m)
//! ^join(%m.h): jump ^header(...)                   ; the loop now uses %m.h
//! ```
//!
//! This is a one-test loop rotation, and it needs no `willreturn`: the call runs exactly
//! when the original program would have run it at least once (the candidate's block must
//! dominate every latch and every exiting block but the header). When the body is never
//! entered, `%m.h` is a `zeroinit` that nothing reads.
//!
//! Whole invariant regions with inner loops move too (`licm_region`).
//!
//! Statistics: "instructions hoisted" (all), "loads hoisted", "calls hoisted",
//! "preheaders inserted", "guards inserted", "regions hoisted".

use std::collections::HashSet;

use adc_ir::{
    BinaryOp, Block, BlockCall, Constant, Diagnostic, Function, Inst, InstructionData, Module,
    Value, ValueDef,
};

use crate::alias::{const_i64, AliasAnalysis};
use crate::domtree::DominatorTree;
use crate::licm_region::{hoist_invariant_inner_loop, hoist_invariant_region};
use crate::loops::{Loop, LoopInfo};
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses, Statistics};

pub struct Licm;

impl Pass for Licm {
    fn name(&self) -> &'static str {
        "licm"
    }
}

impl FunctionPass for Licm {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let mut preserved = PreservedAnalyses::All;
        let info = cx.analysis::<LoopInfo>(func);
        let mut inserted = 0;
        for l in &info.loops {
            if l.preheader.is_none() && insert_preheader(func, l) {
                inserted += 1;
            }
        }
        if inserted > 0 {
            cx.stats.add("preheaders inserted", inserted);
            cx.invalidate(PreservedAnalyses::None);
            preserved = PreservedAnalyses::None;
        }
        // Innermost loops first, so that what leaves an inner loop can leave the outer one
        // too. A guard changes the CFG: recompute the loops and go on with the rest.
        let mut done: HashSet<Block> = HashSet::new();
        'restart: loop {
            let info = cx.analysis::<LoopInfo>(func);
            let dt = cx.analysis::<DominatorTree>(func);
            let aa = cx.analysis::<AliasAnalysis>(func);
            let mut order: Vec<&Loop> = info.loops.iter().collect();
            order.sort_by_key(|l| std::cmp::Reverse(l.depth));
            for l in order {
                if !done.insert(l.header) {
                    continue;
                }
                let outcome = hoist_loop(func, cx.module, &dt, &aa, l, cx.stats);
                if outcome.new_blocks {
                    preserved = PreservedAnalyses::None;
                    cx.invalidate(PreservedAnalyses::None);
                    continue 'restart;
                }
                if outcome.changed {
                    preserved = preserved.meet(PreservedAnalyses::Cfg);
                    cx.invalidate(PreservedAnalyses::Cfg);
                }
                let writers = loop_writers(func, cx.module, &aa, l);
                let readable = |f: &Function, reader: Inst| {
                    !writers.iter().any(|&w| aa.clobbers(cx.module, f, w, reader))
                };
                if hoist_invariant_region(func, cx.module, &aa, &info, l, &readable)
                    || hoist_invariant_inner_loop(func, cx.module, &aa, &info, &dt, l, &readable)
                {
                    cx.stats.inc("regions hoisted");
                    preserved = PreservedAnalyses::None;
                    cx.invalidate(PreservedAnalyses::None);
                    continue 'restart;
                }
            }
            break;
        }
        Ok(preserved)
    }
}

/// Gives the loop a preheader: a new block with the header's parameter types that the
/// edges from outside the loop now enter, and that jumps to the header.
fn insert_preheader(func: &mut Function, l: &Loop) -> bool {
    let header = l.header;
    if Some(header) == func.entry_block() {
        return false; // the entry block cannot get a predecessor
    }
    let outside = l.entering_blocks(func);
    if outside.is_empty() {
        return false;
    }
    let ph = func.dfg.make_block();
    let types: Vec<_> =
        func.dfg.block_params(header).iter().map(|v| func.dfg.value_type(*v).clone()).collect();
    let params: Vec<Value> =
        types.into_iter().map(|t| func.dfg.append_block_param(ph, t)).collect();
    if let Some(name) = func.dfg.block_name(header) {
        let name = format!("{name}.preheader");
        func.dfg.set_block_name(ph, &name);
    }
    func.layout.insert_block_before(ph, header);
    for pred in outside {
        if let Some(term) = func.terminator(pred) {
            for target in func.dfg.insts[term].branch_targets_mut() {
                if target.block == header {
                    target.block = ph;
                }
            }
        }
    }
    let jump =
        func.dfg.make_inst(InstructionData::Jump { dest: BlockCall::new(header, params) }, None);
    func.layout.append_inst(jump, ph);
    true
}

#[derive(Default)]
struct Outcome {
    changed: bool,
    new_blocks: bool,
}

/// Why an instruction may or may not move.
pub(crate) enum Kind {
    /// Cannot trap, touches no memory: may run anywhere.
    Pure,
    /// Reads memory (a load, or a call when the flag is set); must not be speculated.
    Reads(bool),
    Stay,
}

pub(crate) fn classify(module: &Module, func: &Function, aa: &AliasAnalysis, inst: Inst) -> Kind {
    let data = &func.dfg.insts[inst];
    use InstructionData as I;
    match data {
        d if d.is_pure_non_trapping() => Kind::Pure,
        I::Binary { op, args, .. } => match op {
            BinaryOp::Udiv | BinaryOp::Urem => match const_i64(func, args[1]) {
                Some(d) if d != 0 => Kind::Pure,
                _ => Kind::Stay,
            },
            BinaryOp::Sdiv | BinaryOp::Srem => match const_i64(func, args[1]) {
                Some(d) if d != 0 && d != -1 => Kind::Pure,
                _ => Kind::Stay,
            },
            _ => Kind::Pure,
        },
        I::Load { volatile: false, .. } => Kind::Reads(false),
        I::Call { .. } | I::CallIndirect { .. } => {
            if aa.call_effects(module, data).writes() {
                return Kind::Stay;
            }
            Kind::Reads(true)
        }
        _ => Kind::Stay,
    }
}

/// The loop's header test, when a guard can be built from it: the header ends in
/// `brif` with exactly one arm inside the loop, everything before it is pure, and the
/// preheader ends in `jump ^header(...)`.
pub(crate) fn guard_test(
    module: &Module,
    func: &Function,
    aa: &AliasAnalysis,
    l: &Loop,
    ph: Block,
) -> Option<(Value, bool)> {
    let term = func.terminator(l.header)?;
    let InstructionData::Brif { cond, then_dest, else_dest } = &func.dfg.insts[term] else {
        return None;
    };
    let body_on_true = match (l.contains(then_dest.block), l.contains(else_dest.block)) {
        (true, false) => true,
        (false, true) => false,
        _ => return None,
    };
    let ph_term = func.terminator(ph)?;
    if !matches!(&func.dfg.insts[ph_term], InstructionData::Jump { dest } if dest.block == l.header)
    {
        return None;
    }
    for &inst in func.layout.block_insts(l.header) {
        if inst != term && !matches!(classify(module, func, aa, inst), Kind::Pure) {
            return None;
        }
    }
    Some((*cond, body_on_true))
}

/// The instructions of the loop that may write memory.
fn loop_writers(func: &Function, module: &Module, aa: &AliasAnalysis, l: &Loop) -> Vec<Inst> {
    l.blocks
        .iter()
        .flat_map(|&b| func.layout.block_insts(b).iter().copied())
        .filter(|&inst| may_write(module, func, aa, inst))
        .collect()
}

/// The guard's blocks, once created.
pub(crate) struct Guard {
    pub(crate) block: Block,
    pub(crate) join: Block,
}

fn hoist_loop(
    func: &mut Function,
    module: &Module,
    dt: &DominatorTree,
    aa: &AliasAnalysis,
    l: &Loop,
    stats: &mut Statistics,
) -> Outcome {
    let mut outcome = Outcome::default();
    let Some(ph) = l.preheader else {
        return outcome;
    };
    let members: HashSet<Block> = l.blocks.iter().copied().collect();
    // What in the loop may write memory, collected once: hoisting only removes readers.
    let writers = loop_writers(func, module, aa, l);
    let guaranteed =
        |b: Block| !l.exiting.is_empty() && l.exiting.iter().all(|e| dt.dominates(b, *e));
    let guardable = |b: Block| {
        b != l.header
            && l.latches.iter().all(|x| dt.dominates(b, *x))
            && l.exiting.iter().all(|e| *e == l.header || dt.dominates(b, *e))
    };
    let test = guard_test(module, func, aa, l, ph);
    let mut guard: Option<Guard> = None;
    let mut in_guard: Vec<Value> = Vec::new();
    let defined_in =
        |func: &Function, v: Value, blocks: &dyn Fn(Block) -> bool| match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => blocks(b),
            ValueDef::Result(i) => func.layout.inst_block(i).is_some_and(blocks),
        };
    let mut progress = true;
    while progress {
        progress = false;
        for &b in &l.blocks {
            for inst in func.layout.block_insts(b).to_vec() {
                let data = &func.dfg.insts[inst];
                if data.is_terminator() || func.dfg.inst_result(inst).is_none() {
                    continue;
                }
                let args = data.args();
                if args.iter().any(|a| defined_in(func, *a, &|x| members.contains(&x))) {
                    continue;
                }
                let guard_block = guard.as_ref().map(|g| g.block);
                let uses_guarded =
                    args.iter().any(|a| defined_in(func, *a, &|x| Some(x) == guard_block));
                let (into_guard, is_call, is_load) = match classify(module, func, aa, inst) {
                    Kind::Stay => continue,
                    Kind::Pure => (uses_guarded, false, false),
                    Kind::Reads(is_call) => {
                        if writers.iter().any(|&w| aa.clobbers(module, func, w, inst)) {
                            continue;
                        }
                        if guaranteed(b) && !uses_guarded {
                            (false, is_call, !is_call)
                        } else if test.is_some() && guardable(b) {
                            (true, is_call, !is_call)
                        } else {
                            continue;
                        }
                    }
                };
                let target = if into_guard {
                    let Some((cond, on_true)) = test else {
                        continue;
                    };
                    if guard.is_none() {
                        guard = Some(make_guard(func, module, l, ph, cond, on_true));
                        stats.inc("guards inserted");
                        outcome.new_blocks = true;
                    }
                    guard.as_ref().map_or(ph, |g| g.block)
                } else {
                    ph
                };
                func.layout.remove_inst(inst);
                if let Some(term) = func.terminator(target) {
                    func.layout.insert_inst_before(inst, term);
                }
                if into_guard {
                    if let Some(v) = func.dfg.inst_result(inst) {
                        in_guard.push(v);
                    }
                }
                stats.inc("instructions hoisted");
                if is_call {
                    stats.inc("calls hoisted");
                }
                if is_load {
                    stats.inc("loads hoisted");
                }
                outcome.changed = true;
                progress = true;
            }
        }
    }
    if let Some(g) = guard {
        finish_guard(func, ph, &g, &in_guard);
    }
    outcome
}

/// Whether `inst` may write memory at all (a cheap filter before the pairwise queries).
fn may_write(module: &Module, func: &Function, aa: &AliasAnalysis, inst: Inst) -> bool {
    use InstructionData as I;
    match &func.dfg.insts[inst] {
        I::Load { volatile, .. } => *volatile,
        I::Store { .. }
        | I::MemSet { .. }
        | I::MemCopy { .. }
        | I::AtomicRmw { .. }
        | I::CmpXchg { .. }
        | I::Fence { .. } => true,
        data @ (I::Call { .. } | I::CallIndirect { .. }) => aa.call_effects(module, data).writes(),
        _ => false,
    }
}

/// Evaluates the header test on the preheader's arguments and splits the preheader edge:
/// `^ph -> (test) ^guard -> ^join -> ^header`, with `^ph -> ^join` when the test fails.
pub(crate) fn make_guard(
    func: &mut Function,
    module: &Module,
    l: &Loop,
    ph: Block,
    cond: Value,
    body_on_true: bool,
) -> Guard {
    let header = l.header;
    let ph_term = func.terminator(ph).expect("guard_test checked the preheader's jump");
    let entry_args = match &func.dfg.insts[ph_term] {
        InstructionData::Jump { dest } => dest.args.clone(),
        _ => Vec::new(),
    };
    let mut map: std::collections::HashMap<Value, Value> =
        func.dfg.block_params(header).iter().copied().zip(entry_args.iter().copied()).collect();
    let header_insts: Vec<Inst> = func.layout.block_insts(header).to_vec();
    for inst in header_insts {
        let mut data = func.dfg.insts[inst].clone();
        if data.is_terminator() {
            continue;
        }
        data.map_args(|v| map.get(&v).copied().unwrap_or(v));
        let ty = module.result_type(func, &data);
        let clone = func.dfg.make_inst(data, ty);
        func.dfg.debug_locs[clone] = func.dfg.debug_locs[inst].clone();
        func.layout.insert_inst_before(clone, ph_term);
        if let (Some(old), Some(new)) = (func.dfg.inst_result(inst), func.dfg.inst_result(clone)) {
            if let Some(name) = func.dfg.value_name(old) {
                let name = format!("{name}.guard");
                func.dfg.set_value_name(new, &name);
            }
            map.insert(old, new);
        }
    }
    let test = map.get(&cond).copied().unwrap_or(cond);
    let guard = func.dfg.make_block();
    let join = func.dfg.make_block();
    if let Some(name) = func.dfg.block_name(header) {
        let (g, j) = (format!("{name}.guard"), format!("{name}.join"));
        func.dfg.set_block_name(guard, &g);
        func.dfg.set_block_name(join, &j);
    }
    func.layout.insert_block_before(guard, header);
    func.layout.insert_block_before(join, header);
    let (then_dest, else_dest) = if body_on_true {
        (BlockCall::new(guard, vec![]), BlockCall::new(join, vec![]))
    } else {
        (BlockCall::new(join, vec![]), BlockCall::new(guard, vec![]))
    };
    func.dfg.insts[ph_term] = InstructionData::Brif { cond: test, then_dest, else_dest };
    let to_join =
        func.dfg.make_inst(InstructionData::Jump { dest: BlockCall::new(join, vec![]) }, None);
    func.layout.append_inst(to_join, guard);
    let to_header = func
        .dfg
        .make_inst(InstructionData::Jump { dest: BlockCall::new(header, entry_args) }, None);
    func.layout.append_inst(to_header, join);
    Guard { block: guard, join }
}

/// Routes each value computed in the guard block to its users through a parameter of the
/// join block (a `zeroinit` when the guard did not run: then no user runs either).
fn finish_guard(func: &mut Function, ph: Block, g: &Guard, in_guard: &[Value]) {
    let Some(ph_term) = func.terminator(ph) else {
        return;
    };
    let Some(guard_term) = func.terminator(g.block) else {
        return;
    };
    for &v in in_guard {
        let ty = func.dfg.value_type(v).clone();
        let param = func.dfg.append_block_param(g.join, ty.clone());
        if let Some(name) = func.dfg.value_name(v) {
            let name = format!("{name}.h");
            func.dfg.set_value_name(param, &name);
        }
        let zero_inst = func
            .dfg
            .make_inst(InstructionData::Const { ty: ty.clone(), value: Constant::Zero }, Some(ty));
        func.layout.insert_inst_before(zero_inst, ph_term);
        let zero_value = func.dfg.inst_result(zero_inst).unwrap_or(v);
        for target in func.dfg.insts[ph_term].branch_targets_mut() {
            if target.block == g.join {
                target.args.push(zero_value);
            }
        }
        if let InstructionData::Jump { dest } = &mut func.dfg.insts[guard_term] {
            dest.args.push(v);
        }
        // Every use outside the guard block now reads the join's parameter.
        let users: Vec<Inst> =
            func.layout.insts().filter(|(b, _)| *b != g.block).map(|(_, i)| i).collect();
        for inst in users {
            func.dfg.insts[inst].map_args(|x| if x == v { param } else { x });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::lookup;
    use adc_ir::text::{parse_module, print_module};

    fn licm(text: &str) -> (String, crate::Report) {
        let mut module = parse_module(text).unwrap();
        let options = crate::Options { verify_each: true, ..Default::default() };
        let (report, result) = crate::run_passes(&mut module, &[lookup("licm").unwrap()], &options);
        result.unwrap();
        (print_module(&module), report)
    }

    const LOOP: &str = "func @f(%p: ptr, %n: i64, %a: i64) -> i64 {\n^entry:\n  %z = const i64 0\n  jump ^h(%z, %z)\n^h(%i: i64, %s: i64):\n  %c = icmp slt i64 %i, %n\n  brif %c, ^b, ^x\n^b:\n  %k = mul i64 %a, %a\n  %v = load i64, %p, align 8\n  %s1 = add i64 %s, %k\n  %s2 = add i64 %s1, %v\n  %one = const i64 1\n  %i1 = add i64 %i, %one\n  jump ^h(%i1, %s2)\n^x:\n  ret %s\n}\n";

    #[test]
    fn pure_code_goes_to_the_preheader_and_the_load_under_a_guard() {
        let (text, report) = licm(LOOP);
        assert_eq!(report.stat("licm", "loads hoisted"), 1, "{text}");
        assert_eq!(report.stat("licm", "guards inserted"), 1, "{text}");
        assert!(report.stat("licm", "instructions hoisted") >= 3, "{text}");
        let entry = text.split("^h.guard").next().unwrap_or("");
        assert!(entry.contains("%k = mul i64 %a, %a"), "{text}");
    }

    #[test]
    fn a_store_in_the_loop_keeps_the_load() {
        let text =
            LOOP.replace("%one = const i64 1\n", "%one = const i64 1\n  store %i, %p, align 8\n");
        let (text, report) = licm(&text);
        assert_eq!(report.stat("licm", "loads hoisted"), 0, "{text}");
        assert_eq!(report.stat("licm", "guards inserted"), 0, "{text}");
    }

    #[test]
    fn division_by_a_variable_stays() {
        let text = LOOP.replace("mul i64 %a, %a", "sdiv i64 %a, %n");
        let (text, _) = licm(&text);
        assert!(text.split("^b:").nth(1).unwrap_or("").contains("sdiv"), "{text}");
    }

    #[test]
    fn tbaa_distinct_store_does_not_keep_the_load() {
        let text =
            LOOP.replace("%one = const i64 1\n", "%one = const i64 1\n  store %a, %p, align 8\n");
        let mut module = parse_module(&text).unwrap();
        let func = module.functions.values_mut().next().unwrap();
        let insts: Vec<adc_ir::Inst> = func.layout.insts().map(|(_, i)| i).collect();
        let tag = |func: &mut adc_ir::Function,
                   pick: &dyn Fn(&adc_ir::InstructionData) -> bool,
                   t: &str| {
            for &i in &insts {
                if pick(&func.dfg.insts[i]) {
                    func.dfg.tbaa[i] = Some(t.into());
                }
            }
        };
        tag(func, &|d| matches!(d, adc_ir::InstructionData::Load { .. }), "long");
        tag(func, &|d| matches!(d, adc_ir::InstructionData::Store { .. }), "long long");
        let options = crate::Options { verify_each: true, ..Default::default() };
        let (report, result) = crate::run_passes(&mut module, &[lookup("licm").unwrap()], &options);
        result.unwrap();
        let text = print_module(&module);
        assert_eq!(report.stat("licm", "loads hoisted"), 1, "{text}");
    }
}
