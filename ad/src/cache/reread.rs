//! Which primal loads the reverse pass reads again instead of taping, and which primal
//! `free`s move to the reverse pass so that it can.
//!
//! The reverse pass of a (non-split) derivative runs right after its forward sweep, in
//! the same call. A load can be read again there when the memory still holds the value
//! the load saw: no instruction that may write the location (per alias analysis, calls
//! as `mod_ref` says) can execute after the load in the forward sweep, and the memory is
//! still allocated. Writers that can only run before the load (a first loop filling a
//! scratch array read by a second loop) do not matter; a writer in the load's loop, or in
//! an enclosing loop, is reachable from the load around the back edge and does.
//!
//! `free` is such a writer: a scratch block filled once, read in the main loops and freed
//! before the function returns would otherwise be taped at every read. Such frees are
//! **deferred** (as Enzyme does): the forward sweep drops the `free` and the reverse pass
//! frees the block where it undoes the allocation, after every reverse use of it (the
//! allocation dominates every access to its block). A `free` is deferred only when that
//! frees exactly the blocks the primal frees, once each: the `free`'s operand is the
//! result of one `malloc`/`calloc`/`aligned_alloc`/`operator new` call of this function (through
//! zero-offset `ptradd`s and block parameters all of whose incoming values are that
//! result), neither call is in a cycle of the CFG (each runs at most once per call), and
//! every path from the allocation to a `ret` passes the `free`.
//!
//! Not in split functions (their reverse half runs in another call, after the caller may
//! have written the memory: the cache plan never re-reads memory there) and not in GPU
//! code, where another thread may run a writer that precedes the load in program order
//! after this thread's load: there a load is read again only when no instruction of the
//! function may write its location.

use std::collections::{HashMap, HashSet};

use adc_ir::{Block, Function, HeapFunction, Inst, InstructionData, Module, Value, ValueDef};
use adc_passes::alias::{const_i64, AliasAnalysis, MemLoc};
use adc_passes::cfg::ControlFlowGraph;

/// What the reverse pass reads from primal memory instead of taping it.
#[derive(Default)]
pub(crate) struct Rereads {
    /// Non-volatile primal loads whose location is neither written nor freed after they
    /// execute: reading them again in the reverse pass gives the same value.
    pub loads: HashSet<Inst>,
    /// Primal `free` calls the forward sweep drops.
    pub deferred_frees: HashSet<Inst>,
    /// Primal allocator calls whose block the reverse pass frees where it undoes them,
    /// with the release the forward sweep dropped (`free`, or an `operator delete`).
    pub freed_at_undo: HashMap<Inst, Inst>,
}

impl Rereads {
    /// The allocations whose `free` is deferred, as `%name`s in program order.
    pub fn deferred_blocks(&self, func: &Function) -> Vec<String> {
        func.layout
            .insts()
            .filter(|(_, inst)| self.freed_at_undo.contains_key(inst))
            .filter_map(|(_, inst)| func.dfg.inst_result(inst))
            .map(|v| match func.dfg.value_name(v) {
                Some(name) => format!("%{name}"),
                None => format!("%{v}"),
            })
            .collect()
    }
}

/// How much of the forward sweep's order the analysis may rely on (see the module
/// documentation).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Ordering {
    /// One thread, reverse pass in the same call: writers that cannot run after a load
    /// do not matter, and frees may be deferred.
    Sequential,
    /// Split functions and GPU code: any writer in the function matters.
    Unordered,
}

pub(crate) fn rereads(
    module: &Module,
    func: &Function,
    alias: &AliasAnalysis,
    ordering: Ordering,
) -> Rereads {
    let cfg = ControlFlowGraph::new(func);
    let mut reach = Reachability::new(func, &cfg);
    let deferred = match ordering {
        Ordering::Sequential => deferrable_frees(module, func, &mut reach),
        Ordering::Unordered => HashMap::new(),
    };
    let writers: Vec<Inst> = func
        .layout
        .insts()
        .map(|(_, i)| i)
        .filter(|i| {
            let data = &func.dfg.insts[*i];
            data.has_side_effects() && !data.is_terminator() && !deferred.contains_key(i)
        })
        .collect();
    let loads = func
        .layout
        .insts()
        .map(|(_, i)| i)
        .filter(|i| matches!(func.dfg.insts[*i], InstructionData::Load { volatile: false, .. }))
        .filter(|load| {
            let Some(loc) = MemLoc::of_access(func, *load) else { return false };
            writers.iter().all(|w| {
                (ordering == Ordering::Sequential && !reach.can_run_after(*load, *w))
                    || !alias.mod_ref(module, func, *w, &loc).may_write()
            })
        })
        .collect();
    Rereads {
        loads,
        deferred_frees: deferred.keys().copied().collect(),
        freed_at_undo: deferred.iter().map(|(free, allocation)| (*allocation, *free)).collect(),
    }
}

/// The `free` calls that can move to the undo of their allocation: `free` -> allocation.
fn deferrable_frees(
    module: &Module,
    func: &Function,
    reach: &mut Reachability<'_>,
) -> HashMap<Inst, Inst> {
    let mut frees_of: HashMap<Inst, Vec<Inst>> = HashMap::new();
    for (_, inst) in func.layout.insts() {
        let InstructionData::Call { callee, args, .. } = &func.dfg.insts[inst] else { continue };
        if !HeapFunction::is_release(&module.functions[*callee].name) || args.is_empty() {
            continue;
        }
        if let Some(allocation) = sole_allocation(module, func, args[0], &mut HashSet::new()) {
            frees_of.entry(allocation).or_default().push(inst);
        }
    }
    frees_of
        .into_iter()
        .filter_map(|(allocation, frees)| match frees[..] {
            [free] => Some((free, allocation)),
            _ => None,
        })
        .filter(|(free, allocation)| {
            reach.runs_at_most_once(*free)
                && reach.runs_at_most_once(*allocation)
                && every_return_path_passes(func, reach.cfg, *allocation, *free)
        })
        .collect()
}

/// The allocator call whose result `value` is, through zero-offset `ptradd`s and block
/// parameters whose incoming values are all that result. `Some` only for exactly one
/// call; parameters already being visited contribute nothing (a loop-carried copy).
fn sole_allocation(
    module: &Module,
    func: &Function,
    value: Value,
    visiting: &mut HashSet<Value>,
) -> Option<Inst> {
    sole_allocation_or_cycle(module, func, value, visiting).ok().flatten()
}

/// `Ok(None)`: only a cycle of block parameters; `Err`: anything but one allocation.
fn sole_allocation_or_cycle(
    module: &Module,
    func: &Function,
    value: Value,
    visiting: &mut HashSet<Value>,
) -> Result<Option<Inst>, ()> {
    if !visiting.insert(value) {
        return Ok(None);
    }
    match func.dfg.value_def(value) {
        ValueDef::Result(inst) => match &func.dfg.insts[inst] {
            InstructionData::Call { callee, .. }
                if HeapFunction::returns_new_block(&module.functions[*callee].name) =>
            {
                Ok(Some(inst))
            }
            InstructionData::PtrAdd { ptr, offset, .. } if const_i64(func, *offset) == Some(0) => {
                sole_allocation_or_cycle(module, func, *ptr, visiting)
            }
            _ => Err(()),
        },
        ValueDef::Param(block, index) => {
            if Some(block) == func.entry_block() {
                return Err(());
            }
            let mut found = None;
            for (_, term) in func.layout.insts() {
                for target in func.dfg.insts[term].branch_targets() {
                    if target.block != block {
                        continue;
                    }
                    let arg = *target.args.get(index as usize).ok_or(())?;
                    match (found, sole_allocation_or_cycle(module, func, arg, visiting)?) {
                        (_, None) => {}
                        (None, Some(inst)) => found = Some(inst),
                        (Some(a), Some(b)) if a == b => {}
                        _ => return Err(()),
                    }
                }
            }
            Ok(found)
        }
    }
}

/// Whether every path from `from` to a `ret` executes `through` (which comes later).
fn every_return_path_passes(
    func: &Function,
    cfg: &ControlFlowGraph,
    from: Inst,
    through: Inst,
) -> bool {
    let (Some(start), Some(goal)) = (func.layout.inst_block(from), func.layout.inst_block(through))
    else {
        return false;
    };
    if start == goal {
        return func.layout.inst_index(from) < func.layout.inst_index(through);
    }
    let mut seen = HashSet::from([start]);
    let mut stack = vec![start];
    while let Some(block) = stack.pop() {
        let returns = func
            .terminator(block)
            .is_some_and(|t| matches!(func.dfg.insts[t], InstructionData::Return { .. }));
        if returns {
            return false;
        }
        for &next in cfg.succs(block) {
            if next == start {
                // Around a cycle back to the allocation: it is outside every loop, so
                // this cannot happen; answer conservatively if it does.
                return false;
            }
            if next != goal && seen.insert(next) {
                stack.push(next);
            }
        }
    }
    true
}

/// Which instructions can execute after which in one run of the function.
struct Reachability<'f> {
    func: &'f Function,
    cfg: &'f ControlFlowGraph,
    /// Block -> the blocks reachable from its successors (itself when in a cycle).
    after: HashMap<Block, HashSet<Block>>,
    /// Instruction -> its index in its block.
    index: HashMap<Inst, usize>,
}

impl<'f> Reachability<'f> {
    fn new(func: &'f Function, cfg: &'f ControlFlowGraph) -> Reachability<'f> {
        let index = func
            .layout
            .blocks()
            .iter()
            .flat_map(|b| func.layout.block_insts(*b).iter().enumerate().map(|(k, i)| (*i, k)))
            .collect();
        Reachability { func, cfg, after: HashMap::new(), index }
    }

    /// Whether `inst` is in no cycle of the CFG (loops, irreducible ones included).
    fn runs_at_most_once(&mut self, inst: Inst) -> bool {
        self.func.layout.inst_block(inst).is_some_and(|b| !self.blocks_after(b).contains(&b))
    }

    /// Whether `later` can execute after `earlier` has.
    fn can_run_after(&mut self, earlier: Inst, later: Inst) -> bool {
        let (Some(a), Some(b)) =
            (self.func.layout.inst_block(earlier), self.func.layout.inst_block(later))
        else {
            return true;
        };
        if a == b && self.index[&earlier] < self.index[&later] {
            return true;
        }
        self.blocks_after(a).contains(&b)
    }

    fn blocks_after(&mut self, block: Block) -> &HashSet<Block> {
        let cfg = self.cfg;
        self.after.entry(block).or_insert_with(|| {
            let mut seen = HashSet::new();
            let mut stack: Vec<Block> = cfg.succs(block).to_vec();
            while let Some(next) = stack.pop() {
                if seen.insert(next) {
                    stack.extend_from_slice(cfg.succs(next));
                }
            }
            seen
        })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use adc_ir::text::parse_module;
    use adc_passes::effects::ModuleEffects;
    use adc_passes::manager::AnalysisManager;

    use super::{rereads, AliasAnalysis, Ordering, Rereads};

    const DECLS: &str = "
declare @malloc(i64) -> ptr willreturn noalias_return nofree
declare @free(ptr nocapture) willreturn
";

    fn analyze(body: &str, ordering: Ordering) -> (Rereads, Vec<String>) {
        let module = parse_module(&format!("{DECLS}{body}")).unwrap();
        let func = &module.functions[module.function_by_name("f").unwrap()];
        let effects = Rc::new(ModuleEffects::new(&module, &mut AnalysisManager::new()));
        let alias = AliasAnalysis::new(&module, func, effects);
        let found = rereads(&module, func, &alias, ordering);
        let reread_names = func
            .layout
            .insts()
            .filter(|(_, i)| found.loads.contains(i))
            .filter_map(|(_, i)| func.dfg.inst_result(i))
            .map(|v| func.dfg.value_name(v).unwrap_or_default().to_string())
            .collect();
        (found, reread_names)
    }

    /// A block filled, then read in a loop, then freed (through a block parameter) on
    /// every path: the free is deferred and the read is re-readable; the fill's own load
    /// of `%w` too (nothing writes `%w`).
    const FILL_READ_FREE: &str = "
func @f(%w: ptr noalias nocapture, %n: i64, %c: i1) -> f64 {
^entry:
  %bytes = const i64 64
  %a = call @malloc(%bytes)
  %zero = const i64 0
  %v = load f64, %w, align 8
  store %v, %a, align 8
  jump ^loop(%zero)
^loop(%i: i64):
  %s = load f64, %a, align 8
  %one = const i64 1
  %i1 = add i64 %i, %one
  %more = icmp slt i64 %i1, %n
  brif %more, ^loop(%i1), ^exit
^exit:
  brif %c, ^left, ^right
^left:
  jump ^join(%a)
^right:
  %same = ptradd ptr %a, %zero
  jump ^join(%same)
^join(%p: ptr):
  call @free(%p)
  ret %s
}
";

    #[test]
    fn free_on_every_path_is_deferred_and_its_block_reread() {
        let (found, names) = analyze(FILL_READ_FREE, Ordering::Sequential);
        assert_eq!(found.deferred_frees.len(), 1);
        assert_eq!(found.freed_at_undo.len(), 1);
        assert_eq!(names, ["v", "s"]);
    }

    #[test]
    fn split_functions_keep_every_free_and_tape_the_block() {
        let (found, names) = analyze(FILL_READ_FREE, Ordering::Unordered);
        assert!(found.deferred_frees.is_empty());
        assert_eq!(names, ["v"]);
    }

    #[test]
    fn free_on_one_path_only_is_not_deferred() {
        let body = "
func @f(%n: i64, %c: i1) -> f64 {
^entry:
  %bytes = const i64 64
  %a = call @malloc(%bytes)
  %x = const f64 2.0
  store %x, %a, align 8
  %s = load f64, %a, align 8
  brif %c, ^free, ^keep
^free:
  call @free(%a)
  ret %s
^keep:
  ret %s
}
";
        let (found, names) = analyze(body, Ordering::Sequential);
        assert!(found.deferred_frees.is_empty());
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn free_inside_a_loop_is_not_deferred() {
        let body = "
func @f(%n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %bytes = const i64 8
  %a = call @malloc(%bytes)
  %x = const f64 2.0
  store %x, %a, align 8
  %s = load f64, %a, align 8
  %acc1 = fadd f64 %acc, %s
  call @free(%a)
  %one = const i64 1
  %i1 = add i64 %i, %one
  %more = icmp slt i64 %i1, %n
  brif %more, ^loop(%i1, %acc1), ^done
^done:
  ret %acc1
}
";
        let (found, names) = analyze(body, Ordering::Sequential);
        assert!(found.deferred_frees.is_empty());
        assert!(names.is_empty(), "{names:?}");
    }
}
