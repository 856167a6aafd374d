//! Facts about callees that the analyses and the synthesis both rely on: which library
//! functions never carry derivatives, which functions an indirect call may reach, the
//! part of a module a request's analyses see, and the names of adc's runtime helpers.
//!
//! These are read off the module alone (no synthesis state), so the activity analysis
//! and both synthesis modes agree on them; they sit below everything that consumes them.

use std::collections::{HashMap, HashSet};

use adc_ir::{
    Allocation, Constant, FuncId, HeapFunction, InstructionData, Module, Signature, Symbol, Value,
};

use crate::custom::INACTIVE_FN;

/// `__adc_tape_push(ptr %tape, i64 %size) -> ptr`: reserves one element on a tape (defined
/// by the reverse synthesis in every module with derivatives).
pub const TAPE_PUSH: &str = "__adc_tape_push";
/// `__adc_tape_take(ptr slot, i64 bytes) -> ptr`: a tape buffer of at least `bytes`
/// (`tape-reuse`).
pub const TAPE_TAKE: &str = "__adc_tape_take";
/// `__adc_tape_give(ptr slot, ptr data)`: hands a buffer from `TAPE_TAKE` back.
pub const TAPE_GIVE: &str = "__adc_tape_give";
/// `__enzyme_iter(n, step)` (Enzyme's API): an integer each derivative raises by `step`;
/// a call with constant operands is a constant to be fixed when every request is lowered.
pub const ENZYME_ITER: &str = "__enzyme_iter";
/// Prefix of the slot globals that keep tape buffers across calls (`tape-reuse`).
pub const TAPE_SLOT_PREFIX: &str = "__adc_tape_cache_";

/// Library functions that only print or inspect and never carry derivatives.
const INACTIVE_LIBRARY: &[&str] =
    &["printf", "fprintf", "puts", "putchar", "fputs", "fflush", "abort", "exit"];

/// Whether calls to `name` never carry derivatives whatever their operands: the output-only
/// library functions above and the heap releases (`free`, `operator delete`), whose
/// blocks' shadows are released where the reverse pass undoes the allocation.
pub(crate) fn is_inactive_library(name: &str) -> bool {
    INACTIVE_LIBRARY.contains(&name) || HeapFunction::is_release(name)
}

/// The prefix of the Enzyme API functions: passing a function to one of them as the
/// function to differentiate does not make it a target of indirect calls.
const ENZYME_API_PREFIX: &str = "__enzyme_";

/// Whether a function of signature `function` may be called through a pointer of type
/// `call` (same parameter and result types).
pub(crate) fn same_type(function: &Signature, call: &Signature) -> bool {
    function.params == call.params && function.ret == call.ret && !function.varargs
}

/// The defined functions of type `sig` whose address the module takes (in a primal
/// function's code or in a global's initializer), in id order. Synthesized functions
/// (`__adc_*`) and the function argument of the Enzyme API calls do not count.
pub(crate) fn indirect_call_candidates(module: &Module, sig: &Signature) -> Vec<FuncId> {
    address_taken_functions(module, sig)
        .into_iter()
        .filter(|f| !module.functions[*f].is_declaration())
        .collect()
}

/// The functions of type `sig`, defined or declared, whose address the module takes (see
/// [`indirect_call_candidates`]).
pub(crate) fn address_taken_functions(module: &Module, sig: &Signature) -> Vec<FuncId> {
    let mut taken = std::collections::BTreeSet::new();
    for function in module.functions.values() {
        if function.name.starts_with("__adc_") {
            continue;
        }
        for (_, inst) in function.layout.insts() {
            let InstructionData::Const {
                value: Constant::Address { symbol: Symbol::Func(f), offset: 0 },
                ..
            } = &function.dfg.insts[inst]
            else {
                continue;
            };
            let Some(value) = function.dfg.inst_result(inst) else { continue };
            if !only_differentiated_by_api(module, function, value) {
                taken.insert(*f);
            }
        }
    }
    for global in module.globals.values() {
        if let Some(init) = &global.init {
            if !global.name.starts_with(INACTIVE_FN) {
                collect_function_addresses(init, &mut taken);
            }
        }
    }
    taken
        .into_iter()
        .filter(|f| {
            let function = &module.functions[*f];
            !function.name.starts_with("__adc_") && same_type(&function.signature, sig)
        })
        .collect()
}

/// When every function of type `sig` whose address the module takes is a C allocator
/// returning its block, all with the same operands (`tup.allocfn = malloc`, Enzyme's
/// ReverseMode/metamalloc): that allocation, and the allocators.
pub(crate) fn indirect_allocators(
    module: &Module,
    sig: &Signature,
) -> Option<(Allocation, Vec<FuncId>)> {
    let targets = address_taken_functions(module, sig);
    let mut allocation = None;
    for f in &targets {
        let Some(HeapFunction::Allocate(a)) = HeapFunction::of(&module.functions[*f].name) else {
            return None;
        };
        if !a.returns_block() || allocation.is_some_and(|known| known != a) {
            return None;
        }
        allocation = Some(a);
    }
    allocation.map(|a| (a, targets))
}

fn collect_function_addresses(c: &Constant, out: &mut std::collections::BTreeSet<FuncId>) {
    match c {
        Constant::Address { symbol: Symbol::Func(f), .. } => {
            out.insert(*f);
        }
        Constant::Elements(items) => items.iter().for_each(|i| collect_function_addresses(i, out)),
        _ => {}
    }
}

/// Whether `value` is used, and only as the function to differentiate (the first
/// argument) of Enzyme API calls.
fn only_differentiated_by_api(module: &Module, function: &adc_ir::Function, value: Value) -> bool {
    let mut uses = function
        .layout
        .insts()
        .map(|(_, inst)| &function.dfg.insts[inst])
        .filter(|data| data.args().contains(&value))
        .peekable();
    uses.peek().is_some()
        && uses.all(|data| match data {
            InstructionData::Call { callee, args, .. } => {
                module.functions[*callee].name.starts_with(ENZYME_API_PREFIX)
                    && args.first() == Some(&value)
                    && !args[1..].contains(&value)
            }
            _ => false,
        })
}

/// The defined functions whose facts a request on `root` depends on: the analyses of a
/// request (`TypeAnalysis::analyze_scope`, the effects of `activity::ModuleFacts`) cover
/// these alone. Analysing the whole module for every request made a module of N
/// differentiated functions cost O(N²) (issue 30).
///
/// First what the synthesis may run or differentiate: `root`, its direct callees, the
/// functions whose address it takes, the candidates of its indirect calls, and the
/// functions a global lists beside one of those (registered custom derivatives, tables
/// of function pointers), transitively. Then, because the type analysis unifies the
/// arguments of every direct call with the callee's parameters (in both directions) and
/// the effects of a function are those of its body and direct callees, the closure of
/// that set under direct calls in both directions: the facts of a function depend only
/// on the functions so connected to it. Synthesized functions (`__adc_*`: earlier
/// derivatives, split functions, the tape helper) that `root`'s code cannot reach stay
/// out, so that the analyses neither pay for nor learn from unrelated synthesized code;
/// calls to them read as calls of declarations. Those `root` reaches stay: after an
/// inner request is lowered (reverse over forward), the primal calls its derivative,
/// whose slots and arguments need their trees like any other callee's.
pub(crate) fn analysis_scope(
    module: &Module,
    root: FuncId,
    calls: &mut CallIndex,
) -> HashSet<FuncId> {
    calls.refresh(module);
    let reachable = reachable_functions(module, root, Reach::Code);
    let excluded = |id: FuncId| {
        let function = &module.functions[id];
        function.is_declaration()
            || (function.name.starts_with("__adc_") && !reachable.contains(&id))
    };
    let mut scope: HashSet<FuncId> = reachable_functions(module, root, Reach::Synthesis)
        .into_iter()
        .filter(|&id| !excluded(id))
        .collect();
    let mut stack: Vec<FuncId> = scope.iter().copied().collect();
    while let Some(id) = stack.pop() {
        let neighbours = calls.callees(id).iter().chain(calls.callers(id)).copied();
        let neighbours: Vec<FuncId> = neighbours.filter(|&next| !excluded(next)).collect();
        for next in neighbours {
            if scope.insert(next) {
                stack.push(next);
            }
        }
    }
    scope
}

/// The direct calls between the functions of a module that changes between requests
/// (derivatives are added, lowered API calls rewritten), kept up to date cheaply: a
/// function is scanned again only when its instruction or value count changed, which any
/// new call instruction does. Edges of calls since removed may stay (a larger scope is
/// still closed under calls, so no fact changes); an edge is never missing.
#[derive(Debug, Default)]
pub struct CallIndex {
    /// Per function (by id): what it was last scanned as.
    scanned: Vec<Option<Scanned>>,
    callers: HashMap<FuncId, HashSet<FuncId>>,
}

/// Whether `function` may differ from when it had `counts` (its instruction and value
/// counts): what [`CallIndex`] and the kept signatures check before looking closer. No
/// code changes a function's signature or calls in place; a function replaced whole (a
/// placeholder by its body) or given a new call has new counts.
pub fn changed_since(function: &adc_ir::Function, counts: (usize, usize)) -> bool {
    (function.dfg.insts.len(), function.dfg.values.len()) != counts
}

/// Every function's signature by id, kept across the requests of one lowering and
/// brought up to date from the functions that are new or changed ([`changed_since`]): a
/// fresh copy per request or per lowered call made N of them cost O(N²).
#[derive(Debug, Default)]
pub struct SignatureCache {
    signatures: HashMap<FuncId, Signature>,
    /// The counts each function had when its signature was read.
    counts: Vec<(usize, usize)>,
}

impl SignatureCache {
    pub fn refresh(&mut self, module: &Module) -> &HashMap<FuncId, Signature> {
        self.counts.resize(module.functions.len(), (usize::MAX, 0));
        for (id, function) in module.functions.iter() {
            let counts = &mut self.counts[id.as_u32() as usize];
            if changed_since(function, *counts) {
                *counts = (function.dfg.insts.len(), function.dfg.values.len());
                self.signatures.insert(id, function.signature.clone());
            }
        }
        &self.signatures
    }

    /// The signatures as of the last [`Self::refresh`].
    pub fn current(&self) -> &HashMap<FuncId, Signature> {
        &self.signatures
    }
}

/// A function as [`CallIndex`] last scanned it.
#[derive(Debug, Clone)]
struct Scanned {
    /// Its instruction and value counts then (a new call changes the first).
    counts: (usize, usize),
    callees: Vec<FuncId>,
}

impl CallIndex {
    /// Scans the functions that are new or have new instructions since the last refresh.
    pub fn refresh(&mut self, module: &Module) {
        self.scanned.resize(module.functions.len(), None);
        for (id, function) in module.functions.iter() {
            let counts = (function.dfg.insts.len(), function.dfg.values.len());
            let slot = &mut self.scanned[id.as_u32() as usize];
            if slot.as_ref().is_some_and(|scanned| !changed_since(function, scanned.counts)) {
                continue;
            }
            let mut callees: Vec<FuncId> = function
                .layout
                .insts()
                .filter_map(|(_, inst)| match function.inst(inst) {
                    InstructionData::Call { callee, .. } => Some(*callee),
                    _ => None,
                })
                .collect();
            callees.sort();
            callees.dedup();
            if let Some(old) = slot.take() {
                for callee in old.callees {
                    if let Some(set) = self.callers.get_mut(&callee) {
                        set.remove(&id);
                    }
                }
            }
            for &callee in &callees {
                self.callers.entry(callee).or_default().insert(id);
            }
            *slot = Some(Scanned { counts, callees });
        }
    }

    /// The functions `id` calls directly (as of the last refresh).
    pub fn callees(&self, id: FuncId) -> &[FuncId] {
        self.scanned.get(id.as_u32() as usize).and_then(Option::as_ref).map_or(&[], |s| &s.callees)
    }

    /// The functions that call `id` directly (as of the last refresh).
    pub fn callers(&self, id: FuncId) -> impl Iterator<Item = &FuncId> {
        self.callers.get(&id).into_iter().flatten()
    }
}

/// Which edges [`reachable_functions`] follows.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Reach {
    /// Direct calls and function addresses in code: what `root`'s own code names.
    Code,
    /// Also the candidates of indirect calls and the functions a global lists beside a
    /// reached one: everything the synthesis of `root` may differentiate or call.
    Synthesis,
}

/// The functions reached from `root` along the edges `reach` names, `root` included.
fn reachable_functions(module: &Module, root: FuncId, reach: Reach) -> HashSet<FuncId> {
    // Each global's functions, and the globals that list each function.
    let mut listed: Vec<Vec<FuncId>> = Vec::new();
    let mut listing: HashMap<FuncId, Vec<usize>> = HashMap::new();
    if reach == Reach::Synthesis {
        for global in module.globals.values() {
            let mut found = std::collections::BTreeSet::new();
            // The inactive-function lists name functions that are never differentiated.
            if let Some(init) =
                global.init.as_ref().filter(|_| !global.name.starts_with(INACTIVE_FN))
            {
                collect_function_addresses(init, &mut found);
            }
            for f in &found {
                listing.entry(*f).or_default().push(listed.len());
            }
            listed.push(found.into_iter().collect());
        }
    }
    let mut candidates: Vec<(Signature, Vec<FuncId>)> = Vec::new();
    let mut reachable = HashSet::from([root]);
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let function = &module.functions[id];
        let mut found: Vec<FuncId> = Vec::new();
        for (_, inst) in function.layout.insts() {
            match function.inst(inst) {
                InstructionData::Call { callee, .. } => found.push(*callee),
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Func(callee), .. },
                    ..
                } => found.push(*callee),
                InstructionData::CallIndirect { sig, .. } if reach == Reach::Synthesis => {
                    let known = candidates.iter().position(|(known, _)| known == sig.as_ref());
                    let index = known.unwrap_or_else(|| {
                        candidates
                            .push((sig.as_ref().clone(), indirect_call_candidates(module, sig)));
                        candidates.len() - 1
                    });
                    found.extend(&candidates[index].1);
                }
                _ => {}
            }
        }
        for global in listing.get(&id).into_iter().flatten() {
            found.extend(&listed[*global]);
        }
        for callee in found {
            if reachable.insert(callee) {
                stack.push(callee);
            }
        }
    }
    reachable
}

/// `base`, or `base.N` for the first N that no function of the module uses.
pub(crate) fn fresh_name(module: &Module, base: &str) -> String {
    if module.function_by_name(base).is_none() {
        return base.to_string();
    }
    (1..)
        .map(|n| format!("{base}.{n}"))
        .find(|n| module.function_by_name(n).is_none())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use adc_ir::text::parse_module;
    use adc_ir::Type;

    use super::*;

    const MODULE: &str = "
declare @__enzyme_autodiff(ptr, ...) -> f64
declare @sin(f64) -> f64
global internal const @table: [2 x ptr], align 8 = [@in_table, @other_type]
global @__enzyme_inactivefn: [1 x ptr], align 8 = [@inactive]

func @in_code(%x: f64) -> f64 {
^entry:
  ret %x
}
func @in_table(%x: f64) -> f64 {
^entry:
  ret %x
}
func @other_type(%x: f64, %y: f64) -> f64 {
^entry:
  ret %x
}
func @differentiated(%x: f64) -> f64 {
^entry:
  ret %x
}
func @inactive(%x: f64) -> f64 {
^entry:
  ret %x
}
func @never_taken(%x: f64) -> f64 {
^entry:
  ret %x
}
func @main(%x: f64) -> f64 {
^entry:
  %a = const ptr @in_code
  %s = const ptr @sin
  %d = const ptr @differentiated
  %g = call @__enzyme_autodiff(%d, %x)
  ret %g
}
";

    fn names(module: &Module, ids: &[FuncId]) -> Vec<String> {
        ids.iter().map(|f| module.functions[*f].name.clone()).collect()
    }

    #[test]
    fn candidates_are_defined_address_taken_functions_of_the_call_type() {
        let module = parse_module(MODULE).unwrap();
        let unary = Signature::new(vec![Type::F64], Some(Type::F64));
        let found = indirect_call_candidates(&module, &unary);
        // Not: @sin (no body), @other_type (another type), @differentiated (only handed
        // to the Enzyme API), @inactive (only listed as inactive), @never_taken.
        assert_eq!(names(&module, &found), ["in_code", "in_table"]);
        let binary = Signature::new(vec![Type::F64, Type::F64], Some(Type::F64));
        assert_eq!(names(&module, &indirect_call_candidates(&module, &binary)), ["other_type"]);
        let void = Signature::new(vec![Type::PTR], None);
        assert!(indirect_call_candidates(&module, &void).is_empty());
    }

    #[test]
    fn a_function_also_called_through_a_pointer_stays_a_candidate() {
        let text = MODULE.replace(
            "%g = call @__enzyme_autodiff(%d, %x)",
            "%g = call @__enzyme_autodiff(%d, %x)\n  %h = call_indirect fn(f64) -> f64 %d(%x)",
        );
        let module = parse_module(&text).unwrap();
        let unary = Signature::new(vec![Type::F64], Some(Type::F64));
        let found = indirect_call_candidates(&module, &unary);
        assert_eq!(names(&module, &found), ["in_code", "in_table", "differentiated"]);
    }

    const SCOPED: &str = "
declare @sin(f64) -> f64
global internal const @pair: [2 x ptr], align 8 = [@listed_with_callee, @callee]
func @root(%x: f64, %p: ptr) -> f64 {
^entry:
  %y = call @callee(%x)
  %t = call_indirect fn(f64, f64) -> f64 %p(%x, %y)
  ret %t
}
func @callee(%x: f64) -> f64 {
^entry:
  %s = call @sin(%x)
  ret %s
}
func @other_caller(%x: f64) -> f64 {
^entry:
  %y = call @callee(%x)
  %z = call @callers_caller(%y)
  ret %z
}
func @callers_caller(%x: f64) -> f64 {
^entry:
  ret %x
}
func @listed_with_callee(%x: f64) -> f64 {
^entry:
  ret %x
}
func @candidate(%x: f64, %y: f64) -> f64 {
^entry:
  ret %x
}
func @takes_candidate() -> ptr {
^entry:
  %c = const ptr @candidate
  ret %c
}
func @unrelated(%x: f64) -> f64 {
^entry:
  ret %x
}
func @__adc_unreached(%x: f64) -> f64 {
^entry:
  %y = call @callee(%x)
  ret %y
}
";

    #[test]
    fn the_scope_is_what_synthesis_reaches_closed_under_calls_both_ways() {
        let module = parse_module(SCOPED).unwrap();
        let root = module.function_by_name("root").unwrap();
        let mut scope: Vec<String> = analysis_scope(&module, root, &mut CallIndex::default())
            .into_iter()
            .map(|f| module.functions[f].name.clone())
            .collect();
        scope.sort();
        // @other_caller unifies its argument with @callee's parameter, so it and its own
        // callee are in; @takes_candidate only takes an address (no call edge), and the
        // unreached synthesized function stays out although it calls @callee.
        assert_eq!(
            scope,
            ["callee", "callers_caller", "candidate", "listed_with_callee", "other_caller", "root"]
        );
    }

    /// The point of the scope: within it, the analyses give what they give on the whole
    /// module.
    #[test]
    fn analyses_within_the_scope_match_the_whole_module() {
        use crate::typetree::TypeAnalysis;
        use adc_passes::effects::ModuleEffects;
        use adc_passes::manager::AnalysisManager;
        // @other_caller, which @root cannot reach, passes @callee an argument and gives
        // its own values facts of their own (a stored double).
        let text = SCOPED.replace(
            "func @other_caller(%x: f64) -> f64 {\n^entry:\n  %y = call @callee(%x)",
            "func @other_caller(%x: f64) -> f64 {\n^entry:\n  %y = call @callee(%x)\n  %n = const i64 8\n  %b = call @malloc(%n)\n  store %y, %b, align 8",
        ) + "declare @malloc(i64) -> ptr\n";
        let module = parse_module(&text).unwrap();
        let root = module.function_by_name("root").unwrap();
        let scope = analysis_scope(&module, root, &mut CallIndex::default());
        let whole = TypeAnalysis::analyze(&module);
        let scoped = TypeAnalysis::analyze_scope(&module, Some(&scope));
        let whole_effects = ModuleEffects::new(&module, &mut AnalysisManager::new());
        let scoped_effects =
            ModuleEffects::new_in_scope(&module, &mut AnalysisManager::new(), Some(&scope));
        for &id in &scope {
            let function = &module.functions[id];
            for value in function.dfg.values.keys() {
                assert_eq!(
                    whole.tree(id, value),
                    scoped.tree(id, value),
                    "{} {value}",
                    function.name
                );
            }
            assert_eq!(whole.return_tree(id), scoped.return_tree(id), "{}", function.name);
            assert_eq!(whole_effects.get(id), scoped_effects.get(id), "{}", function.name);
        }
        let unrelated = module.function_by_name("unrelated").unwrap();
        assert!(!scope.contains(&unrelated));
    }

    #[test]
    fn the_call_index_follows_new_calls() {
        let mut module = parse_module(SCOPED).unwrap();
        let id = |m: &Module, name: &str| m.function_by_name(name).unwrap();
        let mut calls = CallIndex::default();
        calls.refresh(&module);
        let (callee, unrelated) = (id(&module, "callee"), id(&module, "unrelated"));
        let mut callers: Vec<FuncId> = calls.callers(callee).copied().collect();
        callers.sort();
        assert_eq!(
            callers,
            [id(&module, "root"), id(&module, "other_caller"), id(&module, "__adc_unreached")]
        );
        // @unrelated starts calling @callee: the next refresh sees the new instruction.
        let function = &mut module.functions[unrelated];
        let x = function.params()[0];
        let call = function.dfg.make_inst(
            InstructionData::Call { callee, args: vec![x], attrs: Default::default() },
            Some(adc_ir::Type::F64),
        );
        let ret = function.layout.insts().last().unwrap().1;
        function.layout.insert_inst_before(call, ret);
        calls.refresh(&module);
        assert!(calls.callers(callee).any(|&c| c == unrelated));
        assert_eq!(calls.callees(unrelated), [callee]);
    }
}
