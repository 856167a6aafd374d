//! Function effects — what memory a function may read or write (its arguments' memory,
//! anything else), whether it may free memory, whether it surely returns — inferred
//! bottom-up over the call graph. Strongly connected components (recursion) are solved
//! together to a fixpoint from the optimistic "no effects"; a recursive function is never
//! `willreturn`. Declarations take their attributes, or a table of known libm/libc
//! functions, or the worst case.
//!
//! Accesses to the function's own allocas are not effects (the memory dies with the
//! frame). libm functions count as `readnone`: adc does not model `errno` (as with
//! `-fno-math-errno`, what Enzyme assumes too). `infer-effects` writes the attributes.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use adc_ir::{
    Diagnostic, FuncAttrs, FuncId, Function, HeapFunction, InstructionData, Module, Value,
};

use crate::alias::{decompose, Base};
use crate::domtree::DominatorTree;
use crate::ivs::InductionVars;
use crate::loops::irreducible_edge;
use crate::manager::{
    AnalysisManager, ModuleAnalysis, ModuleContext, ModulePass, Pass, PreservedAnalyses,
};

/// What a function may do, as a set of "may" facts (all false = pure and terminating).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Effects {
    pub reads_args: bool,
    pub writes_args: bool,
    pub reads_other: bool,
    pub writes_other: bool,
    pub may_free: bool,
    pub may_not_return: bool,
}

impl Effects {
    pub const WORST: Effects = Effects {
        reads_args: true,
        writes_args: true,
        reads_other: true,
        writes_other: true,
        may_free: true,
        may_not_return: true,
    };

    pub fn union(self, o: Effects) -> Effects {
        Effects {
            reads_args: self.reads_args || o.reads_args,
            writes_args: self.writes_args || o.writes_args,
            reads_other: self.reads_other || o.reads_other,
            writes_other: self.writes_other || o.writes_other,
            may_free: self.may_free || o.may_free,
            may_not_return: self.may_not_return || o.may_not_return,
        }
    }

    pub fn reads(&self) -> bool {
        self.reads_args || self.reads_other
    }

    pub fn writes(&self) -> bool {
        self.writes_args || self.writes_other
    }

    /// The attributes these effects justify.
    pub fn attrs(&self) -> FuncAttrs {
        let mut attrs = FuncAttrs::empty();
        if !self.reads() && !self.writes() {
            attrs.insert(FuncAttrs::READNONE);
        } else {
            if !self.writes() {
                attrs.insert(FuncAttrs::READONLY);
            }
            if !self.reads_other && !self.writes_other {
                attrs.insert(FuncAttrs::ARGMEMONLY);
            }
        }
        if !self.may_free {
            attrs.insert(FuncAttrs::NOFREE);
        }
        if !self.may_not_return {
            attrs.insert(FuncAttrs::WILLRETURN);
        }
        attrs
    }

    /// The effects declared attributes promise (the worst case where they say nothing).
    pub fn from_attrs(attrs: FuncAttrs) -> Effects {
        let mut e = Effects::WORST;
        if attrs.contains(FuncAttrs::READNONE) {
            (e.reads_args, e.reads_other, e.writes_args, e.writes_other) =
                (false, false, false, false);
        }
        if attrs.contains(FuncAttrs::READONLY) {
            (e.writes_args, e.writes_other) = (false, false);
        }
        if attrs.contains(FuncAttrs::ARGMEMONLY) {
            (e.reads_other, e.writes_other) = (false, false);
        }
        if attrs.contains(FuncAttrs::NOFREE) {
            e.may_free = false;
        }
        if attrs.contains(FuncAttrs::WILLRETURN) {
            e.may_not_return = false;
        }
        e
    }
}

const PURE: Effects = Effects {
    reads_args: false,
    writes_args: false,
    reads_other: false,
    writes_other: false,
    may_free: false,
    may_not_return: false,
};

/// Known C library functions by name (f/l suffixes of libm included).
pub fn known_library_effects(name: &str) -> Option<Effects> {
    const MATH: &[&str] = &[
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sqrt",
        "cbrt",
        "fabs",
        "floor",
        "ceil",
        "trunc",
        "round",
        "rint",
        "nearbyint",
        "fmod",
        "hypot",
        "fmin",
        "fmax",
        "copysign",
        "erf",
        "erfc",
        "tgamma",
        "lgamma",
        "fdim",
        "fma",
        "ldexp",
        "abs",
        "labs",
        "llabs",
    ];
    let base = name.strip_suffix('f').filter(|b| MATH.contains(b)).unwrap_or(name);
    let base = base.strip_suffix('l').filter(|b| MATH.contains(b)).unwrap_or(base);
    if MATH.contains(&base) {
        return Some(PURE);
    }
    let arg_reader = Effects { reads_args: true, ..PURE };
    Some(match name {
        "strlen" | "strcmp" | "strncmp" | "memcmp" | "strchr" | "strrchr" | "strnlen" => arg_reader,
        "memcpy" | "memmove" | "memset" | "strcpy" | "strncpy" | "strcat" => {
            Effects { reads_args: true, writes_args: true, ..PURE }
        }
        _ => return heap_function_effects(name),
    })
}

/// Effects of the C and C++ heap functions. The allocator's state is memory nobody else
/// reads; "other" keeps two calls from being merged or dropped. `operator new` throws
/// when it fails, so it may not return.
fn heap_function_effects(name: &str) -> Option<Effects> {
    let allocator = Effects { reads_other: true, writes_other: true, ..PURE };
    Some(match HeapFunction::of(name)? {
        HeapFunction::Allocate(a) => Effects {
            writes_args: !a.returns_block(),
            may_not_return: name.starts_with("_Zn") && !name.ends_with("nothrow_t"),
            ..allocator
        },
        HeapFunction::Reallocate | HeapFunction::Release => {
            Effects { writes_args: true, may_free: true, ..allocator }
        }
    })
}

/// Effects of every function of a module.
#[derive(Clone, Debug, Default)]
pub struct ModuleEffects {
    pub functions: HashMap<FuncId, Effects>,
}

impl ModuleEffects {
    pub fn get(&self, func: FuncId) -> Effects {
        self.functions.get(&func).copied().unwrap_or(Effects::WORST)
    }

    pub fn new(module: &Module, am: &mut AnalysisManager) -> ModuleEffects {
        ModuleEffects::new_in_scope(module, am, None)
    }

    /// The effects of the defined functions of `scope` and of the declarations they call
    /// (with `None`, of every function); the others count as unknown
    /// ([`Effects::WORST`]). For a scope closed under direct calls (every callee of a
    /// function in it is in it or a declaration), its functions' effects are those of
    /// the whole module's analysis, at the cost of the scope alone.
    pub fn new_in_scope(
        module: &Module,
        am: &mut AnalysisManager,
        scope: Option<&HashSet<FuncId>>,
    ) -> ModuleEffects {
        let in_scope = |id: FuncId| scope.is_none_or(|s| s.contains(&id));
        let declarations: Vec<FuncId> = match scope {
            None => module.functions.keys().collect(),
            Some(scope) => {
                let mut called: Vec<FuncId> =
                    scope.iter().flat_map(|&id| calls(&module.functions[id])).collect();
                called.sort();
                called.dedup();
                called
            }
        };
        let mut effects: HashMap<FuncId, Effects> = HashMap::new();
        for id in declarations {
            let func = &module.functions[id];
            if func.is_declaration() {
                let declared = Effects::from_attrs(func.attrs);
                let known = known_library_effects(&func.name).unwrap_or(Effects::WORST);
                // Both are promises; keep whichever says less may happen, field by field.
                let e = Effects {
                    reads_args: declared.reads_args && known.reads_args,
                    writes_args: declared.writes_args && known.writes_args,
                    reads_other: declared.reads_other && known.reads_other,
                    writes_other: declared.writes_other && known.writes_other,
                    may_free: declared.may_free && known.may_free,
                    may_not_return: declared.may_not_return && known.may_not_return,
                };
                effects.insert(id, e);
            }
        }
        // The defined functions of the scope, in module order. Taken from the scope itself,
        // not by filtering every function of the module: each differentiation request
        // computes the effects of its own scope, and a walk over the module per request
        // made N requests cost O(N²).
        let defined: Vec<FuncId> = match scope {
            None => module
                .functions
                .iter()
                .filter(|(_, f)| !f.is_declaration())
                .map(|(id, _)| id)
                .collect(),
            Some(scope) => {
                let mut ids: Vec<FuncId> = scope
                    .iter()
                    .copied()
                    .filter(|&id| module.functions.get(id).is_some_and(|f| !f.is_declaration()))
                    .collect();
                ids.sort();
                ids
            }
        };
        // Loop termination is a per-function fact; compute it before the SCC walk.
        let mut loops_end: HashMap<FuncId, bool> = HashMap::new();
        for &id in &defined {
            loops_end.insert(id, loops_terminate(module, id, &module.functions[id], am));
        }
        for scc in sccs(module, &defined, &in_scope) {
            let recursive = scc.len() > 1 || calls(&module.functions[scc[0]]).contains(&scc[0]);
            for &id in &scc {
                effects.insert(id, PURE);
            }
            loop {
                let mut changed = false;
                for &id in &scc {
                    let func = &module.functions[id];
                    let mut e = body_effects(module, func, &effects);
                    e.may_not_return |= recursive || !loops_end.get(&id).copied().unwrap_or(false);
                    let merged = e.union(effects[&id]);
                    if merged != effects[&id] {
                        effects.insert(id, merged);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        ModuleEffects { functions: effects }
    }
}

impl ModuleAnalysis for ModuleEffects {
    const NAME: &'static str = "effects";

    fn compute(module: &Module, am: &mut AnalysisManager) -> Self {
        ModuleEffects::new(module, am)
    }
}

/// Whether every cycle of the CFG is a natural loop with a proved trip count.
fn loops_terminate(module: &Module, id: FuncId, func: &Function, am: &mut AnalysisManager) -> bool {
    let ivs = am.function::<InductionVars>(module, id, func);
    if ivs.loops.iter().any(|l| l.trip_count.is_none()) {
        return false;
    }
    // A cycle that is not a natural loop (irreducible) has no trip count either.
    let dt = am.function::<DominatorTree>(module, id, func);
    irreducible_edge(func, &dt).is_none()
}

/// Direct callees of a function, each once.
fn calls(func: &Function) -> Vec<FuncId> {
    let mut out = Vec::new();
    for (_, inst) in func.layout.insts() {
        if let InstructionData::Call { callee, .. } = &func.dfg.insts[inst] {
            if !out.contains(callee) {
                out.push(*callee);
            }
        }
    }
    out
}

/// Tarjan's SCCs of the call graph of the `defined` functions (those of the scope, in
/// module order), callees before callers.
fn sccs(
    module: &Module,
    defined: &[FuncId],
    in_scope: &dyn Fn(FuncId) -> bool,
) -> Vec<Vec<FuncId>> {
    let edges: HashMap<FuncId, Vec<FuncId>> = defined
        .iter()
        .map(|&id| {
            let callees = calls(&module.functions[id])
                .into_iter()
                .filter(|c| {
                    module.functions.get(*c).is_some_and(|f| !f.is_declaration()) && in_scope(*c)
                })
                .collect();
            (id, callees)
        })
        .collect();
    let mut index: HashMap<FuncId, usize> = HashMap::new();
    let mut low: HashMap<FuncId, usize> = HashMap::new();
    let mut on_stack = std::collections::HashSet::new();
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for &root in defined {
        if index.contains_key(&root) {
            continue;
        }
        // Iterative Tarjan: (node, next edge).
        let mut work = vec![(root, 0usize)];
        index.insert(root, counter);
        low.insert(root, counter);
        counter += 1;
        stack.push(root);
        on_stack.insert(root);
        while let Some((node, next)) = work.last_mut() {
            let node = *node;
            if let Some(&callee) = edges[&node].get(*next) {
                *next += 1;
                if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(callee) {
                    slot.insert(counter);
                    low.insert(callee, counter);
                    counter += 1;
                    stack.push(callee);
                    on_stack.insert(callee);
                    work.push((callee, 0));
                } else if on_stack.contains(&callee) {
                    let l = low[&node].min(index[&callee]);
                    low.insert(node, l);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    let l = low[&parent].min(low[&node]);
                    low.insert(parent, l);
                }
                if low[&node] == index[&node] {
                    let mut scc = Vec::new();
                    while let Some(member) = stack.pop() {
                        on_stack.remove(&member);
                        scc.push(member);
                        if member == node {
                            break;
                        }
                    }
                    out.push(scc);
                }
            }
        }
    }
    out
}

/// Where a pointer points, for effects: `None` for the function's own stack.
fn class(module: &Module, func: &Function, ptr: Value) -> Option<bool> {
    match decompose(module, func, ptr).0 {
        Base::Alloca(_) => None,
        Base::Param(_) => Some(true),
        _ => Some(false),
    }
}

fn access(e: &mut Effects, class: Option<bool>, write: bool) {
    match (class, write) {
        (None, _) => {}
        (Some(true), false) => e.reads_args = true,
        (Some(true), true) => e.writes_args = true,
        (Some(false), false) => e.reads_other = true,
        (Some(false), true) => e.writes_other = true,
    }
}

/// The effects of one body, given the (current) effects of its callees.
fn body_effects(module: &Module, func: &Function, known: &HashMap<FuncId, Effects>) -> Effects {
    use InstructionData as I;
    let mut e = PURE;
    let cls = |v: Value| class(module, func, v);
    for (_, inst) in func.layout.insts() {
        match &func.dfg.insts[inst] {
            I::Load { ptr, volatile, .. } => {
                access(&mut e, cls(*ptr), false);
                if *volatile {
                    access(&mut e, Some(false), true);
                }
            }
            I::Store { ptr, volatile, .. } => {
                access(&mut e, cls(*ptr), true);
                if *volatile {
                    access(&mut e, Some(false), true);
                }
            }
            I::MemCopy { dst, src, .. } => {
                access(&mut e, cls(*dst), true);
                access(&mut e, cls(*src), false);
            }
            I::MemSet { dst, .. } => access(&mut e, cls(*dst), true),
            I::AtomicRmw { ptr, .. } | I::CmpXchg { ptr, .. } => {
                access(&mut e, cls(*ptr), true);
                access(&mut e, cls(*ptr), false);
            }
            I::Fence { .. } => {
                access(&mut e, Some(false), true);
                access(&mut e, Some(false), false);
            }
            I::Call { callee, args, .. } => {
                let c = known.get(callee).copied().unwrap_or(Effects::WORST);
                for &arg in args.iter().filter(|a| func.dfg.value_type(**a).is_ptr()) {
                    if c.reads_args {
                        access(&mut e, cls(arg), false);
                    }
                    if c.writes_args {
                        access(&mut e, cls(arg), true);
                    }
                }
                e.reads_other |= c.reads_other;
                e.writes_other |= c.writes_other;
                e.may_free |= c.may_free;
                e.may_not_return |= c.may_not_return;
            }
            I::CallIndirect { .. } => e = e.union(Effects::WORST),
            _ => {}
        }
    }
    e
}

/// Attribute names in text order, for printing.
fn attr_names(attrs: FuncAttrs) -> String {
    let names: Vec<&str> = [
        FuncAttrs::READNONE,
        FuncAttrs::READONLY,
        FuncAttrs::ARGMEMONLY,
        FuncAttrs::NOFREE,
        FuncAttrs::WILLRETURN,
    ]
    .iter()
    .filter(|a| attrs.contains(**a))
    .filter_map(|a| FuncAttrs::NAMES.iter().find(|(f, _)| f == a).map(|(_, n)| *n))
    .collect();
    if names.is_empty() {
        "-".to_string()
    } else {
        names.join(" ")
    }
}

/// `print-effects`: `@f: readonly argmemonly nofree willreturn` per function (`-` when
/// none applies), defined functions and declarations alike.
pub struct PrintEffects;

impl Pass for PrintEffects {
    fn name(&self) -> &'static str {
        "print-effects"
    }
}

impl ModulePass for PrintEffects {
    fn run(
        &self,
        module: &mut Module,
        cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let effects = cx.analyses.module::<ModuleEffects>(module);
        let _ = writeln!(cx.out, "effects");
        for (id, func) in &module.functions {
            let _ = writeln!(cx.out, "  @{}: {}", func.name, attr_names(effects.get(id).attrs()));
        }
        Ok(PreservedAnalyses::All)
    }
}

/// `infer-effects`: adds the inferred attributes to every function (never removes any).
pub struct InferEffects;

impl Pass for InferEffects {
    fn name(&self) -> &'static str {
        "infer-effects"
    }
}

impl ModulePass for InferEffects {
    fn run(
        &self,
        module: &mut Module,
        cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let effects = cx.analyses.module::<ModuleEffects>(module);
        let mut changed = false;
        for (id, func) in module.functions.iter_mut() {
            let mut attrs = func.attrs;
            let mut inferred = effects.get(id).attrs();
            // readonly is implied by readnone; do not add both.
            if attrs.contains(FuncAttrs::READNONE) {
                inferred.0 &= !FuncAttrs::READONLY.0;
            }
            attrs.insert(inferred);
            let added = (attrs.0 & !func.attrs.0).count_ones();
            if added > 0 {
                cx.stats.add("attributes added", u64::from(added));
                cx.stats.inc("functions annotated");
                func.attrs = attrs;
                changed = true;
            }
        }
        // Attributes feed alias and effect facts, not the CFG.
        Ok(if changed { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libm_names_with_suffixes() {
        assert_eq!(known_library_effects("sinf"), Some(PURE));
        assert_eq!(known_library_effects("sqrtl"), Some(PURE));
        assert_eq!(known_library_effects("printf"), None);
        assert!(known_library_effects("free").is_some_and(|e| e.may_free));
    }

    #[test]
    fn sum_of_sines_is_readonly_argmemonly() {
        let module = adc_ir::examples::sum_of_sines();
        let effects = ModuleEffects::new(&module, &mut AnalysisManager::new());
        let sum = module.function_by_name("sum").unwrap();
        let attrs = effects.get(sum).attrs();
        assert!(attrs.contains(FuncAttrs::READONLY | FuncAttrs::ARGMEMONLY | FuncAttrs::NOFREE));
        assert!(attrs.contains(FuncAttrs::WILLRETURN), "the loop runs n times");
    }
}
