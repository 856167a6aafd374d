//! Induction variables and trip counts of loops in block-parameter form:
//! a header parameter `%i` that enters as `start` from outside and comes back from the
//! (single) latch as `%i + step` (or `%i - step`), and an exit test `icmp cc %i, bound` or
//! `icmp cc %i.next, bound` in the header or the latch with a loop-invariant bound.
//!
//! Trip count = how many times the back edge is taken, i.e. how often the body of a
//! `for (i = start; i < n; i += step)` loop runs. It is constant when start and bound are,
//! symbolic (`max(0, %n - 0)`) when not; `None` whenever it cannot be proved: an unknown
//! or loop-variant step, a step in the wrong direction, a possible wrap without the
//! matching `nsw`/`nuw` flag, several exits or latches.
//!
//! Rotated loops (clang -O2) exit on `icmp eq %i.next, %n`: with a no-wrap flag on the
//! increment, the tested values rise (or fall) strictly and must meet the bound exactly,
//! so `ne` reads as `lt` (`gt` downward); without the flag the count is unknown. Starts
//! and bounds are looked up through block parameters every predecessor sets to the same
//! constant or once-executed value (the guard blocks of rotated loops). `max_trip_count`
//! bounds the count on every entry when the start is an enclosing loop's rising
//! induction variable (triangular nests, `row = col + 1 .. d`): the outer variable's
//! start replaces it.

use std::fmt::Write as _;

use adc_ir::constant::sign_extend;
use adc_ir::text::FunctionPrinter;
use adc_ir::{
    BinaryOp, Block, CastOp, Constant, Diagnostic, Function, InstFlags, InstructionData, IntCC,
    Value, ValueDef,
};

use crate::loops::{Loop, LoopInfo};
use crate::manager::{
    AnalysisContext, DependsOn, FunctionAnalysis, FunctionContext, FunctionPass, Pass,
    PreservedAnalyses,
};

/// `base + offset`, or the constant `offset` without a base.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Affine {
    pub base: Option<Value>,
    pub offset: i128,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Step {
    Const(i128),
    /// A loop-invariant value (no trip count is derived from it).
    Invariant(Value),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InductionVar {
    /// The header parameter.
    pub param: Value,
    pub start: Affine,
    pub step: Step,
    /// The value the latch passes back (`param + step`).
    pub next: Value,
    pub flags: InstFlags,
    pub bits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TripCount {
    Constant(u128),
    /// `max(0, ceil((bound - start) / step))` for upward loops (`(start - bound)` and
    /// `-step` for downward ones), `+ 1` inside for inclusive compares.
    Symbolic {
        start: Affine,
        bound: Affine,
        step: i128,
        inclusive: bool,
        signed: bool,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopIvs {
    pub ivs: Vec<InductionVar>,
    pub trip_count: Option<TripCount>,
    /// A bound on `trip_count` in which no enclosing loop's induction variable appears
    /// (equal to `trip_count` when none did); what sizes buffers before a nest runs.
    pub max_trip_count: Option<TripCount>,
}

/// One entry per loop of `LoopInfo::loops`, same order.
#[derive(Clone, Debug, Default)]
pub struct InductionVars {
    pub loops: Vec<LoopIvs>,
}

pub(crate) fn const_int(func: &Function, v: Value) -> Option<i128> {
    let ValueDef::Result(inst) = func.dfg.values.get(v)?.def else { return None };
    let bits = func.dfg.value_type(v).int_bits()?;
    match &func.dfg.insts[inst] {
        InstructionData::Const { value: Constant::Int(x), .. } => Some(sign_extend(*x, bits)),
        InstructionData::Const { value: Constant::Zero, .. } => Some(0),
        _ => None,
    }
}

/// Whether `v` is invariant in the loop: defined outside it, or a constant (imported code
/// materializes constants next to their uses, often inside the loop).
pub(crate) fn invariant(func: &Function, l: &Loop, v: Value) -> bool {
    match func.dfg.values.get(v).map(|d| d.def) {
        Some(ValueDef::Result(inst)) => {
            matches!(func.dfg.insts[inst], InstructionData::Const { .. })
                || func.layout.inst_block(inst).is_none_or(|b| !l.contains(b))
        }
        Some(ValueDef::Param(block, _)) => !l.contains(block),
        None => false,
    }
}

fn affine(func: &Function, v: Value) -> Affine {
    match const_int(func, v) {
        Some(c) => Affine { base: None, offset: c },
        None => Affine { base: Some(v), offset: 0 },
    }
}

/// The arguments passed to `header`'s parameter `index` by `from`'s terminator.
fn incoming(func: &Function, from: Block, header: Block, index: usize) -> Vec<Value> {
    let Some(term) = func.terminator(from) else { return Vec::new() };
    func.dfg.insts[term]
        .branch_targets()
        .into_iter()
        .filter(|c| c.block == header)
        .filter_map(|c| c.args.get(index).copied())
        .collect()
}

/// How many block parameters `forwarded` looks through.
const MAX_FORWARDS: usize = 4;

/// `v`, or the value every predecessor passes to it when `v` is a block parameter and that
/// value is a constant or defined outside every loop (so it holds one value per call; a
/// value redefined by a loop may differ between the jump and the use).
fn forwarded(func: &Function, loops: &LoopInfo, v: Value) -> Value {
    let mut current = v;
    for _ in 0..MAX_FORWARDS {
        let ValueDef::Param(block, index) = func.dfg.value_def(current) else { break };
        let mut passed = func
            .layout
            .blocks()
            .iter()
            .filter(|p| func.successors(**p).contains(&block))
            .flat_map(|p| incoming(func, *p, block, index as usize));
        let Some(first) = passed.next() else { break };
        if first == current || passed.any(|other| other != first) {
            break;
        }
        let once = match func.dfg.value_def(first) {
            ValueDef::Result(inst) => {
                matches!(func.dfg.insts[inst], InstructionData::Const { .. })
                    || func.layout.inst_block(inst).is_some_and(|b| loops.loop_of(b).is_none())
            }
            ValueDef::Param(b, _) => loops.loop_of(b).is_none(),
        };
        if !once {
            break;
        }
        current = first;
    }
    current
}

fn find_ivs(
    func: &Function,
    loops: &LoopInfo,
    l: &Loop,
    outside_preds: &[Block],
) -> Vec<InductionVar> {
    let mut ivs = Vec::new();
    for (index, &param) in func.dfg.block_params(l.header).iter().enumerate() {
        let Some(bits) = func.dfg.value_type(param).int_bits() else { continue };
        let starts: Vec<Value> =
            outside_preds.iter().flat_map(|p| incoming(func, *p, l.header, index)).collect();
        let nexts: Vec<Value> =
            l.latches.iter().flat_map(|p| incoming(func, *p, l.header, index)).collect();
        let (Some(&start), Some(&next)) = (starts.first(), nexts.first()) else { continue };
        if starts.iter().any(|s| *s != start) || nexts.iter().any(|n| *n != next) {
            continue;
        }
        let ValueDef::Result(inst) = func.dfg.value_def(next) else { continue };
        let InstructionData::Binary { op, flags, args: [a, b] } = &func.dfg.insts[inst] else {
            continue;
        };
        let other = match (op, *a == param, *b == param) {
            (BinaryOp::Add, true, false) => *b,
            (BinaryOp::Add, false, true) => *a,
            (BinaryOp::Sub, true, false) => *b,
            _ => continue,
        };
        let negate = *op == BinaryOp::Sub;
        let step = match const_int(func, other) {
            Some(c) => Step::Const(if negate { c.checked_neg().unwrap_or(0) } else { c }),
            None if invariant(func, l, other) && !negate => Step::Invariant(other),
            None => continue,
        };
        if step == Step::Const(0) {
            continue;
        }
        ivs.push(InductionVar {
            param,
            start: affine(func, forwarded(func, loops, start)),
            step,
            next,
            flags: *flags,
            bits,
        });
    }
    ivs
}

fn trip_count(
    func: &Function,
    loops: &LoopInfo,
    l: &Loop,
    ivs: &[InductionVar],
) -> Option<TripCount> {
    let ([latch], [exiting]) = (l.latches.as_slice(), l.exiting.as_slice()) else { return None };
    if *exiting != l.header && exiting != latch {
        return None;
    }
    let term = func.terminator(*exiting)?;
    let InstructionData::Brif { cond, then_dest, else_dest } = &func.dfg.insts[term] else {
        return None;
    };
    let stay_on_true = match (l.contains(then_dest.block), l.contains(else_dest.block)) {
        (true, false) => true,
        (false, true) => false,
        _ => return None,
    };
    let ValueDef::Result(cmp) = func.dfg.value_def(*cond) else { return None };
    let InstructionData::Icmp { cond: cc, args: [a, b] } = &func.dfg.insts[cmp] else {
        return None;
    };
    // Find the IV operand (`param` or `next`) and the invariant bound.
    let find = |x: Value| ivs.iter().find(|iv| iv.param == x || iv.next == x);
    let (iv, tested, bound, cc) = match (find(*a), find(*b)) {
        (Some(iv), _) if invariant(func, l, *b) => (iv, *a, *b, *cc),
        (_, Some(iv)) if invariant(func, l, *a) => (iv, *b, *a, cc.swapped()),
        _ => return None,
    };
    let cc = if stay_on_true { cc } else { cc.inverse() };
    let Step::Const(step) = iv.step else { return None };
    // The sequence of tested values starts at `start` (testing the parameter) or at
    // `start + step` (testing the incremented value).
    let start = if tested == iv.param {
        iv.start
    } else {
        Affine { base: iv.start.base, offset: iv.start.offset.checked_add(step)? }
    };
    let bound = affine(func, forwarded(func, loops, bound));
    let mut lands_exactly = false;
    let cc = if cc == IntCC::Ne && (start.base.is_some() || bound.base.is_some()) {
        // Strictly monotonic without wrapping and leaving only on equality: every tested
        // value before the last lies on the start's side of the bound.
        match (step > 0, iv.flags.contains(InstFlags::NUW), iv.flags.contains(InstFlags::NSW)) {
            (true, true, _) => IntCC::Ult,
            (true, false, true) => IntCC::Slt,
            (false, _, true) => IntCC::Sgt,
            _ if lands_on_bound(func, loops, &start, &bound, step) => {
                lands_exactly = true;
                if step > 0 {
                    IntCC::Ult
                } else {
                    IntCC::Ugt
                }
            }
            _ => return None,
        }
    } else {
        cc
    };
    let signed = matches!(cc, IntCC::Slt | IntCC::Sle | IntCC::Sgt | IntCC::Sge);
    let upward = matches!(cc, IntCC::Slt | IntCC::Sle | IntCC::Ult | IntCC::Ule);
    let inclusive = matches!(cc, IntCC::Sle | IntCC::Ule | IntCC::Sge | IntCC::Uge);
    if cc == IntCC::Eq {
        return None;
    }
    if cc == IntCC::Ne {
        // Runs until the value hits the bound exactly: constant only when it does.
        let (None, None) = (start.base, bound.base) else {
            return None;
        };
        let distance = bound.offset.checked_sub(start.offset)?;
        return (distance % step == 0 && distance / step >= 0)
            .then(|| TripCount::Constant((distance / step) as u128));
    }
    if (upward && step < 0) || (!upward && step > 0) {
        return None;
    }
    let no_wrap_flag = if signed { InstFlags::NSW } else { InstFlags::NUW };
    if let (None, None) = (start.base, bound.base) {
        return constant_trips(
            start.offset,
            bound.offset,
            step,
            inclusive,
            signed,
            upward,
            iv.bits,
        );
    }
    // Symbolic: a strict compare with a unit step cannot step over the bound; anything
    // else needs the no-wrap flag.
    let unit_strict = step.abs() == 1 && !inclusive;
    if !unit_strict && !lands_exactly && !iv.flags.contains(no_wrap_flag) {
        return None;
    }
    Some(TripCount::Symbolic { start, bound, step, inclusive, signed })
}

/// Whether a counter stepping by `step` (a power of two) from `start` provably meets
/// `bound` exactly: their difference is a multiple of the step. Then a loop leaving on
/// `icmp eq` runs `(bound - start) / step` times without the increment's no-wrap flags,
/// which the niter counters of LLVM's unroller and vectorizer lack (`add i64 %niter, 4`
/// against `and i64 %n, -4`). The counter would have to run through all of its type
/// first, which no terminating loop does: an unrolled loop is entered only when its
/// rounded count is positive.
fn lands_on_bound(
    func: &Function,
    loops: &LoopInfo,
    start: &Affine,
    bound: &Affine,
    step: i128,
) -> bool {
    let magnitude = step.unsigned_abs();
    if !magnitude.is_power_of_two() {
        return false;
    }
    let needed = magnitude.trailing_zeros();
    let base_ok = |base: Option<Value>| {
        base.is_none_or(|b| known_trailing_zeros(func, loops, b, 0) >= needed)
    };
    let offsets_ok = bound
        .offset
        .checked_sub(start.offset)
        .is_some_and(|d| d.rem_euclid(magnitude as i128) == 0);
    offsets_ok && (start.base == bound.base || (base_ok(start.base) && base_ok(bound.base)))
}

/// How many low bits of `v` are provably zero (0 when nothing is known).
fn known_trailing_zeros(func: &Function, loops: &LoopInfo, v: Value, depth: usize) -> u32 {
    const MAX_DEPTH: usize = 8;
    let Some(bits) = func.dfg.value_type(v).int_bits() else { return 0 };
    if let Some(c) = const_int(func, v) {
        return if c == 0 { bits } else { c.trailing_zeros().min(bits) };
    }
    let v = forwarded(func, loops, v);
    let ValueDef::Result(inst) = func.dfg.value_def(v) else { return 0 };
    if depth >= MAX_DEPTH {
        return 0;
    }
    let tz = |x: Value| known_trailing_zeros(func, loops, x, depth + 1);
    let known = match &func.dfg.insts[inst] {
        InstructionData::Binary { op, args: [a, b], .. } => match op {
            BinaryOp::And => tz(*a).max(tz(*b)),
            BinaryOp::Or | BinaryOp::Xor | BinaryOp::Add | BinaryOp::Sub => tz(*a).min(tz(*b)),
            BinaryOp::Mul => tz(*a).saturating_add(tz(*b)),
            BinaryOp::Shl => match const_int(func, *b) {
                Some(s) if (0..i128::from(bits)).contains(&s) => tz(*a).saturating_add(s as u32),
                _ => 0,
            },
            _ => 0,
        },
        InstructionData::Cast { op: CastOp::Zext | CastOp::Sext | CastOp::Trunc, arg, .. } => {
            tz(*arg)
        }
        _ => 0,
    };
    known.min(bits)
}

fn constant_trips(
    start: i128,
    bound: i128,
    step: i128,
    inclusive: bool,
    signed: bool,
    upward: bool,
    bits: u32,
) -> Option<TripCount> {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, if bits >= 127 { i128::MAX } else { (1i128 << bits) - 1 })
    };
    // Unsigned values come sign-extended from `const_int`; reinterpret them.
    let fix = |v: i128| if signed || v >= 0 || bits >= 127 { v } else { v + (1i128 << bits) };
    let (start, bound) = (fix(start), fix(bound));
    let distance = if upward { bound - start } else { start - bound } + i128::from(inclusive);
    let magnitude = step.abs();
    let trips = if distance <= 0 { 0 } else { (distance + magnitude - 1) / magnitude };
    // The first value that fails the test must exist without wrapping.
    let last = start.checked_add(trips.checked_mul(step)?)?;
    (lo <= last && last <= hi).then_some(TripCount::Constant(trips as u128))
}

impl InductionVars {
    pub fn new(func: &Function, loops: &LoopInfo) -> InductionVars {
        let mut out = InductionVars::default();
        for l in &loops.loops {
            let outside: Vec<Block> = func
                .layout
                .blocks()
                .iter()
                .copied()
                .filter(|b| !l.contains(*b) && func.successors(*b).contains(&l.header))
                .collect();
            let ivs = find_ivs(func, loops, l, &outside);
            let trip_count = trip_count(func, loops, l, &ivs);
            out.loops.push(LoopIvs { ivs, trip_count, max_trip_count: None });
        }
        for id in 0..out.loops.len() {
            let max =
                out.loops[id].trip_count.clone().and_then(|t| out.bound_over_parents(loops, id, t));
            out.loops[id].max_trip_count = max;
        }
        out
    }

    /// `trips` of loop `id` with a start that is a rising induction variable of an
    /// enclosing loop replaced by that variable's start: an upward loop runs most often
    /// from the smallest start. `None` when some enclosing variable stays in it.
    fn bound_over_parents(
        &self,
        loops: &LoopInfo,
        id: usize,
        trips: TripCount,
    ) -> Option<TripCount> {
        let TripCount::Symbolic { mut start, bound, step, inclusive, signed } = trips else {
            return Some(trips);
        };
        let enclosing_iv = |v: Value| {
            let mut parent = loops.loops[id].parent;
            while let Some(p) = parent {
                let ivs = &self.loops.get(p)?.ivs;
                if let Some(iv) = ivs.iter().find(|iv| iv.param == v || iv.next == v) {
                    // The incremented value starts one step later.
                    let later = if iv.next == v { iv.step } else { Step::Const(0) };
                    return Some((iv.clone(), later));
                }
                parent = loops.loops[p].parent;
            }
            None
        };
        for _ in 0..loops.loops.len() {
            let Some(base) = start.base else { break };
            let Some((outer, later)) = enclosing_iv(base) else { break };
            let (Step::Const(later), Step::Const(outer_step)) = (later, outer.step) else {
                return None;
            };
            let no_wrap = if signed { InstFlags::NSW } else { InstFlags::NUW };
            if step < 0 || outer_step <= 0 || !outer.flags.contains(no_wrap) {
                return None;
            }
            start = Affine {
                base: outer.start.base,
                offset: outer.start.offset.checked_add(start.offset)?.checked_add(later)?,
            };
        }
        let depends_on_parent = |a: &Affine| a.base.is_some_and(|b| enclosing_iv(b).is_some());
        if depends_on_parent(&start) || depends_on_parent(&bound) {
            return None;
        }
        Some(TripCount::Symbolic { start, bound, step, inclusive, signed })
    }
}

impl FunctionAnalysis for InductionVars {
    const NAME: &'static str = "ivs";
    const DEPENDS_ON: DependsOn = DependsOn::Instructions;

    fn compute(func: &Function, cx: &mut AnalysisContext<'_>) -> Self {
        let loops = cx.get::<LoopInfo>(func);
        InductionVars::new(func, &loops)
    }
}

fn affine_text(a: &Affine, p: &FunctionPrinter<'_>) -> String {
    match (a.base, a.offset) {
        (None, c) => c.to_string(),
        (Some(v), 0) => p.value(v),
        (Some(v), c) if c < 0 => format!("{} - {}", p.value(v), c.unsigned_abs()),
        (Some(v), c) => format!("{} + {c}", p.value(v)),
    }
}

/// The trip count as text: `10`, `max(0, %n - 0)`, `max(0, ceil((%n - %a + 1) / 2))`.
pub fn trip_count_text(t: &TripCount, p: &FunctionPrinter<'_>) -> String {
    match t {
        TripCount::Constant(n) => n.to_string(),
        TripCount::Symbolic { start, bound, step, inclusive, signed } => {
            let (hi, lo) = if *step > 0 { (bound, start) } else { (start, bound) };
            let mut diff = format!("{} - {}", affine_text(hi, p), affine_text(lo, p));
            if *lo == (Affine { base: None, offset: 0 }) {
                diff = affine_text(hi, p);
            } else if lo.base.is_some() && lo.offset != 0 {
                diff = format!("{} - ({})", affine_text(hi, p), affine_text(lo, p));
            }
            if *inclusive {
                diff.push_str(" + 1");
            }
            let body =
                if step.abs() == 1 { diff } else { format!("ceil(({diff}) / {})", step.abs()) };
            format!("max(0, {body}) {}", if *signed { "signed" } else { "unsigned" })
        }
    }
}

/// `print-ivs`: per loop, `loop ^h: ivs [%i: start 0, step 1], trip count 10`
/// (`trip count unknown` when none is proved).
pub struct PrintIvs;

impl Pass for PrintIvs {
    fn name(&self) -> &'static str {
        "print-ivs"
    }
}

impl FunctionPass for PrintIvs {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let loops = cx.analysis::<LoopInfo>(func);
        let ivs = cx.analysis::<InductionVars>(func);
        let p = FunctionPrinter::new(cx.module, func);
        let _ = writeln!(cx.out, "ivs @{}", func.name);
        for (l, info) in loops.loops.iter().zip(&ivs.loops) {
            let list: Vec<String> = info
                .ivs
                .iter()
                .map(|iv| {
                    let step = match iv.step {
                        Step::Const(c) => c.to_string(),
                        Step::Invariant(v) => p.value(v),
                    };
                    format!(
                        "{}: start {}, step {step}",
                        p.value(iv.param),
                        affine_text(&iv.start, &p)
                    )
                })
                .collect();
            let mut trips =
                info.trip_count.as_ref().map_or("unknown".to_string(), |t| trip_count_text(t, &p));
            if let Some(max) =
                info.max_trip_count.as_ref().filter(|m| info.trip_count.as_ref() != Some(m))
            {
                trips.push_str(&format!(", at most {}", trip_count_text(max, &p)));
            }
            let _ = writeln!(
                cx.out,
                "  loop {}: ivs [{}], trip count {trips}",
                p.block(l.header),
                list.join("; ")
            );
        }
        Ok(PreservedAnalyses::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_trip_counts() {
        let c = |s, b, k, inc, signed, up| constant_trips(s, b, k, inc, signed, up, 32);
        assert_eq!(c(0, 10, 1, false, true, true), Some(TripCount::Constant(10)));
        assert_eq!(c(0, 10, 3, false, true, true), Some(TripCount::Constant(4)));
        assert_eq!(c(0, 10, 1, true, true, true), Some(TripCount::Constant(11)));
        assert_eq!(c(10, 0, -2, false, true, false), Some(TripCount::Constant(5)));
        assert_eq!(c(5, 0, 1, false, true, true), Some(TripCount::Constant(0)));
        // i <= INT_MAX never fails: the increment wraps.
        assert_eq!(c(0, i32::MAX as i128, 1, true, true, true), None);
    }

    #[test]
    fn the_sum_loop_runs_n_times() {
        let module = adc_ir::examples::sum_of_sines();
        let func = module.functions.values().find(|f| f.name == "sum").unwrap();
        let cfg = crate::cfg::ControlFlowGraph::new(func);
        let loops = LoopInfo::new(&cfg, &crate::domtree::DominatorTree::new(func, &cfg));
        let ivs = InductionVars::new(func, &loops);
        let n = func.params()[1];
        assert_eq!(
            ivs.loops[0].trip_count,
            Some(TripCount::Symbolic {
                start: Affine { base: None, offset: 0 },
                bound: Affine { base: Some(n), offset: 0 },
                step: 1,
                inclusive: false,
                signed: true
            })
        );
    }
}
