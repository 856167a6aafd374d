//! `vectorize`: runs two iterations of a simple innermost loop at once in `<2 x f64>`
//! registers, then lets the original loop finish the odd one out (or the last two).
//!
//! Why: on x86 a multiply whose input or output is a denormal takes a microcode assist
//! of ~150 cycles *per instruction*, whatever the number of lanes, and the adjoints of
//! far-away mixture components in GMM are exactly that (~1e-310). A packed multiply pays
//! one assist for two lanes. Normal arithmetic gains too: half the instructions per
//! element in loops such as the reversed triangle `d_l[j] += d_q[r] * x; s += d_q[r] *
//! l[j]` or the primal `out[r] += l[j] * x`.
//!
//! ```text
//! ^pre:     ... jump ^h(%i0, %s0)                 ; becomes jump ^vec.pre
//! ^vec.pre: %t = step * (%end - %i0 - c)          ; the trip count minus one (`ne`;
//!                                                 ;   ordered compares: below)
//!           %pairs = lshr (%t + 1), 1              ; lshr %t, 1 without a finish
//!           %stop = %i0 + 2 * step * %pairs
//!           brif %pairs == 0, ^h(%i0, %s0), ^vec(%i0, [-0.0, -0.0])
//! ^vec(%i, %vs: <2 x f64>):   the body on lanes [t, t+1]; %i' = %i + 2 * step
//!           brif %i' != %stop, ^vec(%i', %vs'), ^vec.exit
//! ^vec.exit: %s = reduce.fadd reassoc %vs', %s0
//!           ; with a finish: leave if the last iteration's test (on %i' - step) failed
//!           brif !((%i' - step + c) stay %end), ^exit(%s, ...), ^h(%i', %s)
//!           jump ^h(%i', %s)                                        ; otherwise
//! ```
//!
//! The finish: when every value that leaves the loop is an invariant, an index or a
//! sum, and a separate latch only computes indices (the last iteration leaves from the
//! header and must not run the latch's loads, stores or sums), the vector loop knows
//! every leaving value after its last iteration, so an even trip count
//! leaves straight for the exit (its values first go through exit-block parameters,
//! LCSSA) and the original loop runs only the odd one out. Otherwise the original loop
//! runs the last one or two iterations and takes the exit as before. The scalar
//! iterations are what matter under denormals: one scalar multiply pays the same assist
//! as a packed one.
//!
//! What qualifies (anything else is left alone):
//! - an innermost loop of one block, or a header whose `brif` leaves or goes to a latch
//!   without parameters that jumps back; one exit edge; a unique preheader edge;
//! - header parameters that are induction variables stepping by +1 or -1 (`i64`, or
//!   `i32` whose arithmetic has `nsw` so that `sext` of it is linear, as in clang -O0
//!   code), or `f64` sums whose back-edge value is `fadd reassoc %s, %term` and which the
//!   loop reads nowhere else (adjoint accumulations carry `reassoc`, see
//!   `Synth::accumulate`);
//! - an exit test with a loop-invariant `%end` whose trip count is exact: `icmp eq|ne
//!   (%iv + c), %end` leaving when they become equal (`step * (%end - %iv0 - c) + 1` in
//!   wrapping arithmetic, no overflow reasoning), or an ordered compare of the variable
//!   itself that goes on while it has not passed the end (`slt`/`sle`/`ult`/`ule`
//!   counting up, `sgt`/`sge`/`ugt`/`uge` down: `(%iv0 < %end) ? %end - %iv0 : 0` more
//!   iterations, `+ 1` inside when the end is included, computed in i64; unsigned
//!   compares on `i64` only);
//! - loads and stores of `f64` at `base + 8 * (%iv + c)` (invariant base, step ±1, every
//!   access in the same direction), `fadd`/`fsub`/`fmul`/`fdiv`/`fneg` of `f64`, integer
//!   `add`/`sub`/`mul`/`shl` that only compute those indices, and constants;
//! - memory: every store and every other access either use the same address expression
//!   (then they touch the same element in the same iteration, and the vector body keeps
//!   their order) or provably different objects (alias analysis on the whole objects).
//!
//! The original loop stays as the remainder and handles every exit it takes, so values
//! leaving the loop then need no special care; in a loop running downwards lane 0 holds
//! the later iteration, which only reorders the sums (`reassoc`).
//!
//! Statistics: "loops vectorized".

use std::collections::HashMap;

use adc_ir::{
    BinaryOp, Block, BlockCall, CastOp, Constant, Diagnostic, Function, Inst, InstFlags,
    InstructionData, IntCC, ReduceOp, Type, UnaryOp, Value, ValueDef,
};

use crate::alias::{AliasAnalysis, AliasResult, MemLoc};
use crate::ivs::{const_int, invariant};
use crate::loops::{live_outs, to_lcssa, Loop, LoopInfo};
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::resolve;

pub struct Vectorize;

impl Pass for Vectorize {
    fn name(&self) -> &'static str {
        "vectorize"
    }
}

impl FunctionPass for Vectorize {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        // The PTX emitter keeps scalars; GPU threads are the vector lanes there.
        if cx.module.target.as_deref().is_some_and(|t| t.starts_with("nvptx")) {
            return Ok(PreservedAnalyses::All);
        }
        let info = cx.analysis::<LoopInfo>(func);
        let aa = cx.analysis::<AliasAnalysis>(func);
        let mut plans = Vec::new();
        let no_alias = |a: Value, b: Value| {
            aa.alias(cx.module, func, &MemLoc::new(a, None), &MemLoc::new(b, None))
                == AliasResult::NoAlias
        };
        for (id, l) in info.loops.iter().enumerate() {
            if info.is_innermost(id) {
                plans.extend(plan(func, l, &no_alias));
            }
        }
        if plans.is_empty() {
            return Ok(PreservedAnalyses::All);
        }
        for plan in &plans {
            vectorize(func, plan);
        }
        cx.stats.add("loops vectorized", plans.len() as u64);
        cx.invalidate(PreservedAnalyses::None);
        Ok(PreservedAnalyses::None)
    }
}

/// What a value of the loop is, seen from the vectorizer.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    /// Defined outside the loop, or a constant.
    Invariant,
    /// `%iv + offset` for the induction variable at this header-parameter index.
    Index { iv: usize, offset: i128 },
    /// `(%iv + offset) * 8`.
    Scaled { iv: usize, offset: i128 },
    /// `base + 8 * (%iv + offset)`: the address of one `f64` per iteration.
    Addr { base: Value, iv: usize, offset: i128 },
    /// An `f64` that differs per iteration: two lanes in the vector loop.
    Lanes,
    /// A sum's header parameter (index into `Plan::sums`).
    Sum(usize),
    /// A sum's back-edge value.
    SumNext(usize),
    /// The exit test.
    Test,
}

/// The exit test, read as: the loop goes on while `(%iv + offset) stay end`.
#[derive(Copy, Clone, Debug)]
struct ExitTest {
    /// Header-parameter index of the induction variable.
    iv: usize,
    offset: i128,
    /// Loop-invariant.
    end: Value,
    /// `ne`, or an ordered compare on the parameter itself (offset 0): `slt`/`sle`/
    /// `ult`/`ule` counting up, `sgt`/`sge`/`ugt`/`uge` counting down.
    stay: IntCC,
}

struct Plan {
    header: Block,
    preheader: Block,
    /// The loop's instructions in execution order, terminators excluded.
    body: Vec<Inst>,
    /// What the latch passes back to each header parameter.
    back: Vec<Value>,
    kinds: HashMap<Value, Kind>,
    /// Step (+1 or -1) of each header parameter that is an induction variable.
    steps: HashMap<usize, i128>,
    /// Header-parameter index of each sum.
    sums: Vec<usize>,
    test: ExitTest,
    /// +1 when the accessed addresses rise from one iteration to the next, -1 otherwise.
    direction: i128,
    /// The loop's blocks: the header, then the latch if it is another block.
    blocks: Vec<Block>,
    /// The exit block, when the vector loop may go there itself after running every
    /// iteration (even trip counts): every value that leaves the loop is an invariant,
    /// an index or a sum, which the vector loop knows at its end.
    finish: Option<Block>,
}

/// The arguments `from` passes to `to` (its only edge there), if any.
fn edge_args(func: &Function, from: Block, to: Block) -> Option<Vec<Value>> {
    let term = func.terminator(from)?;
    let calls: Vec<&BlockCall> =
        func.dfg.insts[term].branch_targets().into_iter().filter(|c| c.block == to).collect();
    match calls[..] {
        [call] => Some(call.args.clone()),
        _ => None,
    }
}

fn plan(func: &Function, l: &Loop, no_alias: &dyn Fn(Value, Value) -> bool) -> Option<Plan> {
    let header = l.header;
    let [latch] = l.latches[..] else { return None };
    let [exit] = l.exits[..] else { return None };
    if l.blocks.len() > 2 || Some(header) == func.entry_block() {
        return None;
    }
    let [preheader] = l.entering_blocks(func)[..] else { return None };
    edge_args(func, preheader, header)?;
    // The exit test ends the header; a separate latch only jumps back.
    let exiting = func.terminator(header)?;
    let InstructionData::Brif { cond, then_dest, else_dest } = &func.dfg.insts[exiting] else {
        return None;
    };
    let stay_on_true = then_dest.block != exit;
    if (then_dest.block == exit) == (else_dest.block == exit) {
        return None;
    }
    if latch != header {
        if !func.dfg.block_params(latch).is_empty() {
            return None;
        }
        let InstructionData::Jump { .. } = &func.dfg.insts[func.terminator(latch)?] else {
            return None;
        };
    }
    let back = edge_args(func, latch, header)?;
    let params = func.dfg.block_params(header).to_vec();

    let mut kinds: HashMap<Value, Kind> = HashMap::new();
    let mut steps = HashMap::new();
    let mut sums = Vec::new();
    for (index, &param) in params.iter().enumerate() {
        let ty = func.dfg.value_type(param);
        let ValueDef::Result(next) = func.dfg.value_def(back[index]) else { return None };
        match (&func.dfg.insts[next], ty) {
            (
                InstructionData::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub), args, flags },
                t,
            ) if index_type(t, *flags) && args[0] == param => {
                let c = const_int(func, args[1])?;
                let step = if *op == BinaryOp::Add { c } else { -c };
                if step.abs() != 1 {
                    return None;
                }
                steps.insert(index, step);
                kinds.insert(param, Kind::Index { iv: index, offset: 0 });
            }
            (InstructionData::Binary { op: BinaryOp::Fadd, flags, args }, t)
                if *t == Type::F64
                    && flags.contains(InstFlags::REASSOC)
                    && args[0] != args[1]
                    && args.contains(&param) =>
            {
                kinds.insert(param, Kind::Sum(sums.len()));
                sums.push(index);
            }
            _ => return None,
        }
    }

    let invariant = |v: Value| invariant(func, l, v);
    let kind_of = |kinds: &HashMap<Value, Kind>, v: Value| {
        kinds.get(&v).copied().or_else(|| invariant(v).then_some(Kind::Invariant))
    };
    let is_f64_operand = |kinds: &HashMap<Value, Kind>, v: Value| {
        *func.dfg.value_type(v) == Type::F64
            && matches!(kind_of(kinds, v), Some(Kind::Lanes | Kind::Invariant))
    };

    let mut body = Vec::new();
    let mut accesses: Vec<(Inst, Kind)> = Vec::new();
    let mut test = None;
    let blocks: Vec<Block> = if latch == header { vec![header] } else { vec![header, latch] };
    for &block in &blocks {
        for &inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            if data.is_terminator() {
                continue;
            }
            let result = func.dfg.inst_result(inst);
            let kind = match data {
                InstructionData::Const { .. } => Kind::Invariant,
                InstructionData::Binary {
                    op: op @ (BinaryOp::Add | BinaryOp::Sub),
                    args,
                    flags,
                } => {
                    let Some(Kind::Index { iv, offset }) = kind_of(&kinds, args[0]) else {
                        return None;
                    };
                    if !index_type(func.dfg.value_type(args[0]), *flags) {
                        return None;
                    }
                    let c = const_int(func, args[1])?;
                    Kind::Index {
                        iv,
                        offset: if *op == BinaryOp::Add { offset + c } else { offset - c },
                    }
                }
                InstructionData::Binary {
                    op: op @ (BinaryOp::Mul | BinaryOp::Shl), args, ..
                } if *func.dfg.value_type(args[0]) == Type::I64 => {
                    let Some(Kind::Index { iv, offset }) = kind_of(&kinds, args[0]) else {
                        return None;
                    };
                    match (op, const_int(func, args[1])?) {
                        (BinaryOp::Mul, 8) | (BinaryOp::Shl, 3) => Kind::Scaled { iv, offset },
                        _ => return None,
                    }
                }
                InstructionData::PtrAdd { ptr, offset, .. } => {
                    let Some(Kind::Scaled { iv, offset }) = kind_of(&kinds, *offset) else {
                        return None;
                    };
                    if kind_of(&kinds, *ptr) != Some(Kind::Invariant) {
                        return None;
                    }
                    Kind::Addr { base: *ptr, iv, offset }
                }
                InstructionData::Load { ty, ptr, volatile: false, .. } if *ty == Type::F64 => {
                    let addr @ Kind::Addr { .. } = kind_of(&kinds, *ptr)? else { return None };
                    accesses.push((inst, addr));
                    Kind::Lanes
                }
                InstructionData::Store { value, ptr, volatile: false, .. }
                    if is_f64_operand(&kinds, *value) =>
                {
                    let addr @ Kind::Addr { .. } = kind_of(&kinds, *ptr)? else { return None };
                    accesses.push((inst, addr));
                    body.push(inst);
                    continue;
                }
                InstructionData::Binary { op: BinaryOp::Fadd, args, .. }
                    if args.iter().any(|a| matches!(kinds.get(a), Some(Kind::Sum(_)))) =>
                {
                    let (sum, term) = match (kinds.get(&args[0]), kinds.get(&args[1])) {
                        (Some(Kind::Sum(s)), _) => (*s, args[1]),
                        (_, Some(Kind::Sum(s))) => (*s, args[0]),
                        _ => return None,
                    };
                    // The sum's own back-edge add, and the only place the loop reads it.
                    if result != Some(back[sums[sum]]) || !is_f64_operand(&kinds, term) {
                        return None;
                    }
                    Kind::SumNext(sum)
                }
                InstructionData::Binary {
                    op: BinaryOp::Fadd | BinaryOp::Fsub | BinaryOp::Fmul | BinaryOp::Fdiv,
                    args,
                    ..
                } if args.iter().all(|a| is_f64_operand(&kinds, *a)) => Kind::Lanes,
                InstructionData::Unary { op: UnaryOp::Fneg, arg, .. }
                    if is_f64_operand(&kinds, *arg) =>
                {
                    Kind::Lanes
                }
                // An i32 index widened for addressing: exact, its arithmetic has `nsw`.
                InstructionData::Cast { op: CastOp::Sext, arg, ty } if *ty == Type::I64 => {
                    let Some(index @ Kind::Index { .. }) = kind_of(&kinds, *arg) else {
                        return None;
                    };
                    index
                }
                InstructionData::Icmp { cond: cc, args } if result == Some(*cond) => {
                    let (tested, end, cc) =
                        match (kind_of(&kinds, args[0]), kind_of(&kinds, args[1])) {
                            (Some(Kind::Index { .. }), Some(Kind::Invariant)) => {
                                (args[0], args[1], *cc)
                            }
                            (Some(Kind::Invariant), Some(Kind::Index { .. })) => {
                                (args[1], args[0], cc.swapped())
                            }
                            _ => return None,
                        };
                    let Some(Kind::Index { iv, offset }) = kinds.get(&tested).copied() else {
                        return None;
                    };
                    let stay = if stay_on_true { cc } else { cc.inverse() };
                    if !exact_trip_count(stay, steps[&iv], offset, func.dfg.value_type(tested)) {
                        return None;
                    }
                    test = Some(ExitTest { iv, offset, end, stay });
                    Kind::Test
                }
                _ => return None,
            };
            if let Some(r) = result {
                kinds.insert(r, kind);
            }
            body.push(inst);
        }
    }
    let test = test?;

    // Uses the vector body cannot honour: a sum or its next value read by anything but
    // its own add and the back edge, the test used as data, an index escaping into data.
    for &inst in &body {
        let data = &func.dfg.insts[inst];
        let own_sum = match func.dfg.inst_result(inst).and_then(|r| kinds.get(&r)) {
            Some(Kind::SumNext(s)) => Some(*s),
            _ => None,
        };
        for arg in data.args() {
            match kinds.get(&arg) {
                Some(Kind::Sum(s)) if own_sum != Some(*s) => return None,
                Some(Kind::SumNext(_) | Kind::Test) => return None,
                _ => {}
            }
        }
    }
    // The back edge passes each induction variable's next value and each sum's add.
    for (index, &arg) in back.iter().enumerate() {
        match (kinds.get(&arg), steps.get(&index)) {
            (Some(Kind::Index { iv, offset }), Some(step)) if *iv == index && offset == step => {}
            (Some(Kind::SumNext(s)), None) if sums[*s] == index => {}
            _ => return None,
        }
    }

    // One direction for every access; stores only meet accesses of the same element or
    // of other objects.
    let direction = |k: &Kind| match k {
        Kind::Addr { iv, .. } => steps[iv],
        _ => 0,
    };
    let first = accesses
        .iter()
        .find(|(i, _)| matches!(func.dfg.insts[*i], InstructionData::Load { .. }))?;
    let dir = direction(&first.1);
    if accesses.iter().any(|(_, k)| direction(k) != dir) {
        return None;
    }
    for (store, ks) in &accesses {
        if !matches!(func.dfg.insts[*store], InstructionData::Store { .. }) {
            continue;
        }
        for (other, ko) in &accesses {
            if other == store || ko == ks {
                continue;
            }
            let (Kind::Addr { base: a, .. }, Kind::Addr { base: b, .. }) = (ks, ko) else {
                return None;
            };
            if a == b || !no_alias(*a, *b) {
                return None;
            }
        }
    }
    // Leaving from the vector loop: the values that leave must be known there.
    let known_at_end = |v: &Value| match kind_of(&kinds, *v) {
        Some(Kind::Invariant | Kind::SumNext(_)) => true,
        // In the induction variable's own type (not a widened copy).
        Some(Kind::Index { iv, .. }) => func.dfg.value_type(*v) == func.dfg.value_type(params[iv]),
        _ => false,
    };
    // The last iteration leaves from the header, so the vector loop may run it only if
    // the latch's part of it does nothing but index arithmetic (no memory, no sums).
    let latch_only_indexes = latch == header
        || func.layout.block_insts(latch).iter().all(|&inst| {
            func.dfg.insts[inst].is_terminator()
                || func.dfg.inst_result(inst).is_some_and(|r| {
                    matches!(
                        kinds.get(&r),
                        Some(
                            Kind::Invariant
                                | Kind::Index { .. }
                                | Kind::Scaled { .. }
                                | Kind::Addr { .. }
                        )
                    )
                })
        });
    let leaving = edge_args(func, header, exit)?;
    let finish = (latch_only_indexes
        && l.is_dedicated_exit(func, exit)
        && leaving.iter().chain(&live_outs(func, &blocks)).all(known_at_end))
    .then_some(exit);
    Some(Plan {
        header,
        preheader,
        body,
        back,
        kinds,
        steps,
        sums,
        test,
        direction: dir,
        blocks,
        finish,
    })
}

/// Whether integer arithmetic of type `ty` with `flags` can carry an index: `i64` (exact in
/// wrapping arithmetic), or `i32` with `nsw`, so that its sign extension is linear too.
fn index_type(ty: &Type, flags: InstFlags) -> bool {
    *ty == Type::I64 || (*ty == Type::I32 && flags.contains(InstFlags::NSW))
}

/// Whether the vector loop can count the iterations of a loop that goes on while
/// `(%iv + offset) stay end`, stepping by `step` (±1): `ne` in wrapping arithmetic; an
/// ordered compare on the parameter itself, counting towards the end (unsigned ones on
/// `i64` only: a widened `i32` is signed).
fn exact_trip_count(stay: IntCC, step: i128, offset: i128, tested: &Type) -> bool {
    use IntCC::*;
    let upward = match stay {
        Ne => return true,
        Slt | Sle | Ult | Ule => true,
        Sgt | Sge | Ugt | Uge => false,
        Eq => return false,
    };
    let unsigned = matches!(stay, Ult | Ule | Ugt | Uge);
    offset == 0 && (step > 0) == upward && (!unsigned || *tested == Type::I64)
}

/// Appends `data` to `block`.
fn append_inst(func: &mut Function, block: Block, data: InstructionData, ty: Option<Type>) -> Inst {
    let inst = func.dfg.make_inst(data, ty);
    func.layout.append_inst(inst, block);
    inst
}

/// Appends `data`, an instruction with a result of type `ty`, and returns the result.
fn append(func: &mut Function, block: Block, data: InstructionData, ty: Type) -> Value {
    let inst = append_inst(func, block, data, Some(ty));
    func.dfg.inst_result(inst).expect("an instruction made with a result type has a result")
}

fn append_const(func: &mut Function, block: Block, ty: Type, value: Constant) -> Value {
    append(func, block, InstructionData::Const { ty: ty.clone(), value }, ty)
}

fn binary(func: &mut Function, block: Block, op: BinaryOp, a: Value, b: Value) -> Value {
    let ty = func.dfg.value_type(a).clone();
    append(func, block, InstructionData::Binary { op, flags: InstFlags::empty(), args: [a, b] }, ty)
}

fn vectorize(func: &mut Function, plan: &Plan) {
    let vec_ty = Type::vector(Type::F64, 2);
    let header = plan.header;
    if let Some(exit) = plan.finish {
        to_lcssa(func, &plan.blocks, exit);
    }
    let init = edge_args(func, plan.preheader, header).expect("planned with one entry edge");
    let pre = func.dfg.make_block();
    let body = func.dfg.make_block();
    let done = func.dfg.make_block();
    for (block, name) in [(pre, "vec.pre"), (body, "vec"), (done, "vec.exit")] {
        func.dfg.set_block_name(block, name);
        func.layout.insert_block_before(block, header);
    }
    // The preheader's edge now enters the check.
    let term = func.terminator(plan.preheader).expect("a preheader ends in a branch");
    for call in func.dfg.insts[term].branch_targets_mut() {
        if call.block == header {
            call.block = pre;
            call.args.clear();
        }
    }

    // Constants the loop defines, and the splats of invariant operands, live in ^vec.pre.
    let mut scalars: HashMap<Value, Value> = HashMap::new();
    for &inst in &plan.body {
        if let InstructionData::Const { ty, .. } = &func.dfg.insts[inst] {
            let (data, ty) = (func.dfg.insts[inst].clone(), ty.clone());
            let r = func.dfg.inst_result(inst).expect("a constant has a result");
            scalars.insert(r, append(func, pre, data, ty));
        }
    }

    // t, the iterations that go on (the trip count minus one), as an unsigned i64. The
    // vector loop runs t >> 1 times and leaves the original loop one or two iterations;
    // when it may leave the loop itself, (t + 1) >> 1 times, and even trip counts end there.
    let ExitTest { iv: test_iv, offset: test_offset, end, stay } = plan.test;
    let end = resolve(&scalars, end);
    let step = plan.steps[&test_iv];
    let iv_ty = func.dfg.value_type(init[test_iv]).clone();
    let tested_ty = func.dfg.value_type(end).clone();
    let zero = int_const(func, pre, &Type::I64, 0);
    let one = int_const(func, pre, &Type::I64, 1);
    let start = widen(func, pre, init[test_iv], &tested_ty, CastOp::Sext);
    let t = if stay == IntCC::Ne {
        // step * (end - iv0 - c): exact in wrapping arithmetic of the tested type.
        let mut t = binary(func, pre, BinaryOp::Sub, end, start);
        if test_offset != 0 {
            let c = int_const(func, pre, &tested_ty, test_offset);
            t = binary(func, pre, BinaryOp::Sub, t, c);
        }
        if step < 0 {
            let zero = int_const(func, pre, &tested_ty, 0);
            t = binary(func, pre, BinaryOp::Sub, zero, t);
        }
        widen(func, pre, t, &Type::I64, CastOp::Zext)
    } else {
        // (iv0 stay end) ? |end - iv0| (+ 1 when the end is included) : 0, in i64 (an
        // i32 compare is signed). Exact as an unsigned count; one of 2^64 wraps to 0,
        // which leaves everything to the original loop.
        let x = widen(func, pre, start, &Type::I64, CastOp::Sext);
        let e = widen(func, pre, end, &Type::I64, CastOp::Sext);
        let runs = append(func, pre, InstructionData::Icmp { cond: stay, args: [x, e] }, Type::I1);
        let mut distance = match step > 0 {
            true => binary(func, pre, BinaryOp::Sub, e, x),
            false => binary(func, pre, BinaryOp::Sub, x, e),
        };
        if matches!(stay, IntCC::Sle | IntCC::Sge | IntCC::Ule | IntCC::Uge) {
            distance = binary(func, pre, BinaryOp::Add, distance, one);
        }
        let select =
            InstructionData::Select { flags: InstFlags::empty(), args: [runs, distance, zero] };
        append(func, pre, select, Type::I64)
    };
    let pairs = match plan.finish {
        Some(_) => {
            let trips = binary(func, pre, BinaryOp::Add, t, one);
            binary(func, pre, BinaryOp::Lshr, trips, one)
        }
        None => binary(func, pre, BinaryOp::Lshr, t, one),
    };
    let none =
        append(func, pre, InstructionData::Icmp { cond: IntCC::Eq, args: [pairs, zero] }, Type::I1);
    let neg_zero = Constant::Elements(vec![Constant::f64(-0.0); 2]);
    let acc0 = append_const(func, pre, vec_ty.clone(), neg_zero);
    let mut entry_args = Vec::new();
    let mut params: HashMap<usize, Value> = HashMap::new();
    for (index, &value) in init.iter().enumerate() {
        let is_sum = plan.sums.contains(&index);
        let ty = if is_sum { vec_ty.clone() } else { func.dfg.value_type(value).clone() };
        params.insert(index, func.dfg.append_block_param(body, ty));
        entry_args.push(if is_sum { acc0 } else { value });
    }
    // The vector loop stops when the tested induction variable reaches iv0 + 2 * step * pairs
    // (in its own type: the vector loop visits only values the original loop does).
    let stride = int_const(func, pre, &Type::I64, 2 * step);
    let mut span = binary(func, pre, BinaryOp::Mul, pairs, stride);
    if iv_ty != Type::I64 {
        let trunc = InstructionData::Cast { op: CastOp::Trunc, arg: span, ty: iv_ty.clone() };
        span = append(func, pre, trunc, iv_ty.clone());
    }
    let stop = binary(func, pre, BinaryOp::Add, init[test_iv], span);

    // ^vec: the body, scalars for indices and addresses, vectors for f64 data.
    let header_params = func.dfg.block_params(header).to_vec();
    let mut vectors: HashMap<Value, Value> = HashMap::new();
    for (index, &param) in header_params.iter().enumerate() {
        match plan.kinds[&param] {
            Kind::Sum(_) => vectors.insert(param, params[&index]),
            _ => scalars.insert(param, params[&index]),
        };
    }
    let mut splats: HashMap<Value, Value> = HashMap::new();
    let minus8 = int_const(func, pre, &Type::I64, -8);
    let mut lane_base: HashMap<Value, Value> = HashMap::new();
    for &inst in &plan.body {
        let data = func.dfg.insts[inst].clone();
        let result = func.dfg.inst_result(inst);
        let kind = result.map(|r| plan.kinds[&r]);
        match (&data, kind) {
            // The exit test has its own replacement; constants were made in ^vec.pre.
            (InstructionData::Icmp { .. } | InstructionData::Const { .. }, _) => {}
            (_, Some(Kind::Index { .. } | Kind::Scaled { .. } | Kind::Addr { .. })) => {
                let mut copy = data.clone();
                copy.map_args(|a| resolve(&scalars, a));
                let r = result.expect("index arithmetic has a result");
                let ty = func.dfg.value_type(r).clone();
                let value = append(func, body, copy, ty);
                scalars.insert(r, value);
                if matches!(kind, Some(Kind::Addr { .. })) {
                    // Lane 0 is the lower address: iteration t going up, t + 1 going down.
                    let lane0 = if plan.direction < 0 {
                        append(
                            func,
                            body,
                            InstructionData::PtrAdd {
                                flags: InstFlags::empty(),
                                ptr: value,
                                offset: minus8,
                            },
                            Type::PTR,
                        )
                    } else {
                        value
                    };
                    lane_base.insert(r, lane0);
                }
            }
            _ => {
                let mut operand = |func: &mut Function, v: Value| -> Value {
                    if let Some(x) = vectors.get(&v) {
                        return *x;
                    }
                    let scalar = resolve(&scalars, v);
                    *splats.entry(v).or_insert_with(|| splat(func, pre, scalar, &vec_ty))
                };
                let new = match data {
                    InstructionData::Load { ptr, align, .. } => InstructionData::Load {
                        ty: vec_ty.clone(),
                        ptr: lane_base[&ptr],
                        align,
                        volatile: false,
                    },
                    InstructionData::Store { value, ptr, align, .. } => InstructionData::Store {
                        value: operand(func, value),
                        ptr: lane_base[&ptr],
                        align,
                        volatile: false,
                    },
                    InstructionData::Binary { op, flags, args } => InstructionData::Binary {
                        op,
                        flags,
                        args: [operand(func, args[0]), operand(func, args[1])],
                    },
                    InstructionData::Unary { op, flags, arg } => {
                        InstructionData::Unary { op, flags, arg: operand(func, arg) }
                    }
                    other => unreachable!("the planner admitted {other:?}"),
                };
                let inst = append_inst(func, body, new, result.map(|_| vec_ty.clone()));
                if let (Some(r), Some(value)) = (result, func.dfg.inst_result(inst)) {
                    vectors.insert(r, value);
                }
            }
        }
    }
    // Next trip: each sum's vector add, each induction variable two steps on.
    let mut next = Vec::new();
    for (index, &param) in header_params.iter().enumerate() {
        next.push(match plan.kinds[&param] {
            Kind::Sum(_) => vectors[&plan.back[index]],
            _ => {
                let ty = func.dfg.value_type(params[&index]).clone();
                let c = int_const(func, body, &ty, 2 * plan.steps[&index]);
                binary(func, body, BinaryOp::Add, params[&index], c)
            }
        });
    }
    let more = append(
        func,
        body,
        InstructionData::Icmp { cond: IntCC::Ne, args: [next[test_iv], stop] },
        Type::I1,
    );
    let brif = InstructionData::Brif {
        cond: more,
        then_dest: BlockCall::new(body, next.clone()),
        else_dest: BlockCall::new(done, Vec::new()),
    };
    append_inst(func, body, brif, None);
    let enter = InstructionData::Brif {
        cond: none,
        then_dest: BlockCall::new(header, init.clone()),
        else_dest: BlockCall::new(body, entry_args),
    };
    append_inst(func, pre, enter, None);

    // ^vec.exit: the sums meet their starting values; the original loop does the rest, or
    // nothing is left and the loop's values go to the exit.
    let mut rest = Vec::new();
    for (index, value) in next.iter().copied().enumerate() {
        if plan.sums.contains(&index) {
            let flags = InstFlags::REASSOC;
            let reduce = InstructionData::Reduce {
                op: ReduceOp::Fadd,
                flags,
                args: vec![value, init[index]],
            };
            rest.push(append(func, done, reduce, Type::F64));
        } else {
            rest.push(value);
        }
    }
    let Some(exit) = plan.finish else {
        append_inst(func, done, InstructionData::Jump { dest: BlockCall::new(header, rest) }, None);
        return;
    };
    // An index as the last iteration saw it: its induction variable was one step short of
    // `next`.
    let last = |func: &mut Function, iv: usize, offset: i128| match offset - plan.steps[&iv] {
        0 => next[iv],
        delta => {
            let ty = func.dfg.value_type(next[iv]).clone();
            let c = int_const(func, done, &ty, delta);
            binary(func, done, BinaryOp::Add, next[iv], c)
        }
    };
    // Nothing is left when the last iteration's exit test said to leave (recomputed here
    // rather than kept live through the vector loop).
    let tested = if tested_ty == iv_ty {
        last(func, test_iv, test_offset)
    } else {
        let widened = last(func, test_iv, 0);
        let widened = widen(func, done, widened, &tested_ty, CastOp::Sext);
        match test_offset {
            0 => widened,
            offset => {
                let c = int_const(func, done, &tested_ty, offset);
                binary(func, done, BinaryOp::Add, widened, c)
            }
        }
    };
    let icmp = InstructionData::Icmp { cond: stay.inverse(), args: [tested, end] };
    let finished = append(func, done, icmp, Type::I1);
    let leaving = edge_args(func, header, exit).expect("planned with one exit edge");
    let mut at_end = Vec::new();
    for value in leaving {
        at_end.push(match plan.kinds.get(&value) {
            Some(Kind::SumNext(s)) => rest[plan.sums[*s]],
            Some(Kind::Index { iv, offset }) => last(func, *iv, *offset),
            _ => resolve(&scalars, value),
        });
    }
    let leave = InstructionData::Brif {
        cond: finished,
        then_dest: BlockCall::new(exit, at_end),
        else_dest: BlockCall::new(header, rest),
    };
    append_inst(func, done, leave, None);
}

fn int_const(func: &mut Function, block: Block, ty: &Type, value: i128) -> Value {
    append_const(func, block, ty.clone(), Constant::int(ty, value))
}

/// `v` extended to `ty` by `op` when it is narrower (`i32` to `i64`).
fn widen(func: &mut Function, block: Block, v: Value, ty: &Type, op: CastOp) -> Value {
    if func.dfg.value_type(v) == ty {
        return v;
    }
    append(func, block, InstructionData::Cast { op, arg: v, ty: ty.clone() }, ty.clone())
}

/// `<x, x>`, built in `^vec.pre`.
fn splat(func: &mut Function, block: Block, x: Value, vec_ty: &Type) -> Value {
    let undef = append_const(func, block, vec_ty.clone(), Constant::Undef);
    let lane = int_const(func, block, &Type::I32, 0);
    let one = append(
        func,
        block,
        InstructionData::InsertLane { vector: undef, value: x, index: lane },
        vec_ty.clone(),
    );
    let shuffle = InstructionData::Shuffle { args: [one, undef], mask: vec![Some(0), Some(0)] };
    append(func, block, shuffle, vec_ty.clone())
}
