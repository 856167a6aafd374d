//! Cache CSE: primal values that are provably equal share one cache entry.
//!
//! A value `v` has a **leader** `w` when `w`'s definition dominates `v`'s and either
//!
//! - both are the same pure computation (same instruction, operands with the same
//!   leaders): a pure instruction or a call of a pure libm function (`cost`); or
//! - both load the same address (operands with the same leaders) and no instruction on
//!   any path from `w` to `v` may write the loaded location (alias analysis).
//!
//! Dominance makes the equality hold for the latest execution of `w`, which is what the
//! reverse pass reads at `v`'s reverse region: a tape's top record is the latest
//! execution of its block that precedes the current one (the reverse pass replays the
//! trace backwards), a slot holds the latest value. So a value the planner would store
//! reads its leader's cache entry (or whatever the leader's plan is) instead.
//!
//! Not covered: a load of memory that an earlier loop taped at another index (GMM's
//! `xcentered[col]` after `xcentered[j]`); sharing those needs tapes indexed by
//! iteration, since push/pop tapes are read in reverse order per loop.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use adc_ir::{Block, Function, Inst, InstructionData, Module, Value};
use adc_passes::alias::{AliasAnalysis, MemLoc};
use adc_passes::cfg::ControlFlowGraph;
use adc_passes::domtree::DominatorTree;
use adc_passes::effects::ModuleEffects;

/// Each primal value that equals a dominating earlier value, mapped to that value.
pub(crate) fn equal_values(
    module: &Module,
    func: &Function,
    domtree: &DominatorTree,
    effects: Rc<ModuleEffects>,
) -> HashMap<Value, Value> {
    let mut numbering = Numbering::new(module, func, domtree, effects);
    for &block in domtree.rpo() {
        for &inst in func.layout.block_insts(block) {
            numbering.visit(block, inst);
        }
    }
    numbering.leaders
}

struct Numbering<'a> {
    module: &'a Module,
    func: &'a Function,
    domtree: &'a DominatorTree,
    cfg: ControlFlowGraph,
    /// Built on the first load whose earlier equal load has writers in between.
    alias: Option<AliasAnalysis>,
    /// The callees' effects the alias analysis reads calls with (the request's).
    effects: Rc<ModuleEffects>,
    /// Instructions that may write memory (stores, copies, calls, ...).
    writers: Vec<Inst>,
    /// Computation (with operands replaced by their leaders) -> the values computing it.
    table: HashMap<String, Vec<(Block, Value, Inst)>>,
    leaders: HashMap<Value, Value>,
}

impl<'a> Numbering<'a> {
    fn new(
        module: &'a Module,
        func: &'a Function,
        domtree: &'a DominatorTree,
        effects: Rc<ModuleEffects>,
    ) -> Self {
        let writers = func
            .layout
            .insts()
            .map(|(_, i)| i)
            .filter(|i| {
                let data = &func.dfg.insts[*i];
                data.has_side_effects() && !data.is_terminator()
            })
            .collect();
        Numbering {
            module,
            func,
            domtree,
            cfg: ControlFlowGraph::new(func),
            alias: None,
            effects,
            writers,
            table: HashMap::new(),
            leaders: HashMap::new(),
        }
    }

    fn leader(&self, value: Value) -> Value {
        self.leaders.get(&value).copied().unwrap_or(value)
    }

    fn visit(&mut self, block: Block, inst: Inst) {
        let func = self.func;
        let Some(result) = func.dfg.inst_result(inst) else { return };
        let data = &func.dfg.insts[inst];
        let is_load = matches!(data, InstructionData::Load { volatile: false, .. });
        let pure = super::recomputable(data)
            && !matches!(data, InstructionData::Const { .. } | InstructionData::Alloca { .. });
        if !(is_load || pure || super::cost::pure_libm_call(self.module, data).is_some()) {
            return;
        }
        let mut keyed = data.clone();
        keyed.map_args(|a| self.leader(a));
        let key = format!("{keyed:?}");
        let candidates = self.table.get(&key).cloned().unwrap_or_default();
        let found = candidates.into_iter().find(|&(earlier_block, _, earlier)| {
            self.domtree.dominates(earlier_block, block)
                && (!is_load || self.unwritten_between(earlier_block, earlier, block, inst))
        });
        match found {
            Some((_, leader, _)) => {
                self.leaders.insert(result, leader);
            }
            None => self.table.entry(key).or_default().push((block, result, inst)),
        }
    }

    /// Whether no instruction that may write the location `load` reads can run after
    /// `earlier` (in `from`) and before `load` (in `to`).
    fn unwritten_between(&mut self, from: Block, earlier: Inst, to: Block, load: Inst) -> bool {
        let Some(loc) = MemLoc::of_access(self.func, load) else { return false };
        let between = self.blocks_between(from, to);
        let func = self.func;
        let layout = &func.layout;
        let position = |i: Inst| layout.inst_index(i).unwrap_or(0);
        let (earlier_at, load_at) = (position(earlier), position(load));
        let on_path = |w: Inst| {
            let Some(b) = layout.inst_block(w) else { return false };
            if between.contains(&b) {
                return true;
            }
            let at = position(w);
            if from == to {
                return at > earlier_at && at < load_at;
            }
            (b == from && at > earlier_at) || (b == to && at < load_at)
        };
        let candidates: Vec<Inst> = self.writers.iter().copied().filter(|w| on_path(*w)).collect();
        if candidates.is_empty() {
            return true;
        }
        let module = self.module;
        let effects = &self.effects;
        let alias =
            self.alias.get_or_insert_with(|| AliasAnalysis::new(module, func, Rc::clone(effects)));
        candidates.into_iter().all(|w| !alias.mod_ref(module, func, w, &loc).may_write())
    }

    /// Blocks on some path from the end of `from` to the start of `to` (both included
    /// when such a path runs through them again, as in a loop).
    fn blocks_between(&self, from: Block, to: Block) -> HashSet<Block> {
        let forward = reachable(from, |b| self.cfg.succs(b));
        let backward = reachable(to, |b| self.cfg.preds(b));
        forward.intersection(&backward).copied().collect()
    }
}

/// The blocks reachable from `start` in one or more steps of `next`.
fn reachable<'c>(start: Block, next: impl Fn(Block) -> &'c [Block]) -> HashSet<Block> {
    let mut seen: HashSet<Block> = HashSet::new();
    let mut stack: Vec<Block> = next(start).to_vec();
    while let Some(b) = stack.pop() {
        if seen.insert(b) {
            stack.extend_from_slice(next(b));
        }
    }
    seen
}
