//! The cache planner on small primal functions, without a synthesis: the plan is a value
//! computed from the function and its analyses, so each decision can be checked alone.

use std::collections::HashSet;
use std::rc::Rc;

use adc_ir::text::parse_module;
use adc_ir::{Block, Function, Module, Value, ValueDef};
use adc_passes::alias::AliasAnalysis;
use adc_passes::effects::ModuleEffects;
use adc_passes::AnalysisManager;

use super::*;

/// `f(x, y, n)`: a counted loop reading `x[i]` and `y[i]`, both overwritten after the
/// loop; `%s` depends on both loads, `%c` on `%s` alone.
const CHAIN: &str = "
func @f(%x: ptr, %y: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %eight = const i64 8
  %off = mul i64 %i, %eight
  %px = ptradd ptr %x, %off
  %py = ptradd ptr %y, %off
  %a = load f64, %px, align 8
  %b = load f64, %py, align 8
  %s = fadd f64 %a, %b
  %two = const f64 2.0
  %d = fmul f64 %s, %two
  %onef = const f64 1.0
  %c = fsub f64 %d, %onef
  %sq = fmul f64 %c, %c
  %acc1 = fadd f64 %acc, %sq
  %one = const i64 1
  %i1 = add nsw i64 %i, %one
  %more = icmp slt i64 %i1, %n
  brif %more, ^loop(%i1, %acc1), ^done
^done:
  %z = const f64 0.0
  store %z, %x, align 8
  store %z, %y, align 8
  ret %acc1
}
";

/// `g(x, n)`: a loop reading `x[0]`, which nothing writes, and the same loop's sum.
const UNWRITTEN: &str = "
func @g(%x: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  %h = fmul f64 %acc0, %acc0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %a = load f64, %x, align 8
  %acc1 = fadd f64 %acc, %a
  %one = const i64 1
  %i1 = add nsw i64 %i, %one
  %more = icmp slt i64 %i1, %n
  brif %more, ^loop(%i1, %acc1), ^done
^done:
  ret %acc1
}
";

fn module(text: &str) -> Module {
    parse_module(text).expect("the test module parses")
}

fn function(module: &Module) -> &Function {
    module.functions.values().next().expect("one function")
}

fn plan<'a>(module: &'a Module, options: CacheOptions, split: bool) -> CachePlan<'a> {
    let primal = function(module);
    let effects = Rc::new(ModuleEffects::new(module, &mut AnalysisManager::new()));
    let alias = AliasAnalysis::new(module, primal, effects);
    let ordering = if split { Ordering::Unordered } else { Ordering::Sequential };
    CachePlan::compute(module, primal, options, split, ordering, &alias)
}

fn value(func: &Function, name: &str) -> Value {
    func.dfg.values.keys().find(|v| func.dfg.value_name(*v) == Some(name)).expect("named")
}

fn block_of(func: &Function, value: Value) -> Block {
    match func.dfg.value_def(value) {
        ValueDef::Result(inst) => func.layout.inst_block(inst).expect("laid out"),
        ValueDef::Param(block, _) => block,
    }
}

/// The plan's strategy for a primal value, asked as the synthesis asks for its clone
/// (here the primal itself), outside the value's loop.
fn strategy(plan: &CachePlan<'_>, name: &str) -> Strategy {
    let func = plan.primal;
    let v = value(func, name);
    let def = match func.dfg.value_def(v) {
        ValueDef::Result(inst) => Some(Definition {
            data: &func.dfg.insts[inst],
            bytes: func.dfg.value_type(v).size().max(1),
            primal_inst: Some(inst),
        }),
        ValueDef::Param(..) => None,
    };
    plan.strategy(block_of(func, v), def, Some(v), None)
}

#[test]
fn values_before_every_return_are_used_directly_unless_split() {
    let m = module(UNWRITTEN);
    assert_eq!(strategy(&plan(&m, CacheOptions::default(), false), "h"), Strategy::Direct);
    // A split function's reverse phase is another invocation: nothing is direct, and a
    // recomputable value is recomputed.
    assert_eq!(strategy(&plan(&m, CacheOptions::default(), true), "h"), Strategy::Recompute);
}

#[test]
fn loop_values_are_recomputed_taped_or_reread() {
    let m = module(CHAIN);
    let p = plan(&m, CacheOptions::default(), false);
    assert_eq!(strategy(&p, "s"), Strategy::Recompute);
    assert_eq!(strategy(&p, "two"), Strategy::Recompute);
    // Overwritten after the loop: only a tape keeps the loaded value.
    assert_eq!(strategy(&p, "a"), Strategy::Tape);
    assert_eq!(strategy(&p, "acc"), Strategy::Tape);
    // Nothing writes `x`: the reverse pass loads it again.
    let m = module(UNWRITTEN);
    let p = plan(&m, CacheOptions::default(), false);
    assert_eq!(strategy(&p, "a"), Strategy::Recompute);
}

#[test]
fn stored_by_the_cut_overrides_recomputation() {
    let m = module(CHAIN);
    let mut p = plan(&m, CacheOptions::default(), false);
    p.store_instead.insert(value(p.primal, "s"));
    assert_eq!(strategy(&p, "s"), Strategy::Tape);
    assert_eq!(strategy(&p, "c"), Strategy::Recompute);
}

#[test]
fn a_loop_slot_replaces_the_tape_inside_its_loop() {
    let m = module(CHAIN);
    let p = plan(&m, CacheOptions::default(), false);
    let func = p.primal;
    let i = value(func, "i");
    let block = block_of(func, i);
    assert_eq!(p.strategy(block, None, Some(i), Some(1)), Strategy::IvSlot);
    assert_eq!(p.strategy(block, None, Some(i), None), Strategy::Tape);
}

#[test]
fn counted_loops_get_a_decider_and_iv_slots() {
    let m = module(CHAIN);
    let p = plan(&m, CacheOptions::default(), false);
    let func = p.primal;
    let (i, zero) = (value(func, "i"), value(func, "zero"));
    assert_eq!(
        p.loop_slots,
        [
            LoopSlot::DeciderStart { loop_id: 0, start: zero },
            LoopSlot::Counted { value: i, loop_id: 0, step: 1, nsw: true },
        ]
    );
    let header = block_of(func, i);
    let decider = p.loop_decider(header).expect("a counted loop with one latch");
    assert_eq!((decider.param, decider.start), (i, zero));
    let off = CacheOptions { loop_ivs: false, ..CacheOptions::default() };
    assert!(plan(&m, off, false).loop_slots.is_empty());
}

#[test]
fn an_invariant_load_gets_a_slot_with_licm() {
    let m = module(UNWRITTEN);
    let p = plan(&m, CacheOptions::default(), false);
    let a = value(p.primal, "a");
    assert!(p.loop_slots.contains(&LoopSlot::Invariant { value: a, loop_id: 0 }));
    let off = CacheOptions { licm: false, ..CacheOptions::default() };
    assert!(!plan(&m, off, false).loop_slots.iter().any(|s| s.value() == Some(a)));
}

#[test]
fn the_min_cut_stores_one_sum_instead_of_two_loads() {
    let m = module(CHAIN);
    let p = plan(&m, CacheOptions::default(), false);
    let func = p.primal;
    let roots = HashSet::from([value(func, "c")]);
    let stored = p.min_cut_stores(&roots);
    // `%s` is the narrowest point between the overwritten loads and the root.
    assert_eq!(stored.len(), 1);
    let s = *stored.iter().next().expect("one value");
    assert!(["s", "d", "c"].contains(&func.dfg.value_name(s).expect("named")));
    // A loop of unknown trip count runs its block 100 times by the estimate.
    assert_eq!(p.executions(block_of(func, s)), 100);
}

#[test]
fn cache_cse_finds_equal_loads_and_the_cut_uses_them_once_asked() {
    let text = CHAIN.replace("%py = ptradd ptr %y, %off", "%py = ptradd ptr %x, %off");
    let m = module(&text);
    let p = plan(&m, CacheOptions::default(), false);
    let func = p.primal;
    let (a, b, s) = (value(func, "a"), value(func, "b"), value(func, "s"));
    let roots = HashSet::from([b]);
    // Until the synthesis asks for the equal values, `%b` is a load to store like any
    // other (the cut lists only recomputable values it stores).
    assert_eq!(p.min_cut_stores(&roots), HashSet::new());
    assert_eq!(p.leaders().get(&b), Some(&a));
    assert_eq!(p.leaders().get(&s), None);
    // Then `%b` comes from `%a` for free, and the cut stores it as it would store `%a`.
    assert_eq!(p.min_cut_stores(&roots), HashSet::from([b]));
}
