//! `inline`: replaces direct calls by a copy of the callee's body.
//!
//! Cost model: a callee is inlined when it is defined, not varargs, not `noinline` (on the
//! function or the call site; ignored when every defined function has it, as clang -O0
//! emits), not recursive and not in a call cycle with the caller, and
//! either `alwaysinline`, at most `THRESHOLD` instructions, or internal with a single
//! direct call in the module (unless that call is outside loops and the callee has
//! `noalias` parameters, which inlining would drop). Each caller inlines at most
//! `MAX_PER_CALLER` call sites of ordinary callees, so that a chain of small functions
//! cannot blow it up. Tiny callees (at most `TINY` instructions, such as reverse mode's
//! `__adc_tape_push`, which a gradient calls once per taped value and loop iteration) do
//! not count against that cap: a call to them blocks every memory optimization around it,
//! and a gradient can hold a hundred of them. Growth stays bounded by
//! `MAX_COPIED_PER_CALLER`, the instructions one caller may receive per run.
//!
//! Mechanics, with block parameters: the calling block is split after the call; the part
//! after it becomes a continuation block whose parameter (for a non-void callee) is the
//! call's result. The callee's blocks are copied with fresh blocks and values (its entry
//! parameters become the call's arguments), every `ret %x` becomes `jump ^cont(%x)`, and
//! debug locations and names come along (names prefixed with the callee's). Fixed-size
//! `alloca`s of the callee's entry block move to the caller's entry block.
//!
//! Calls through a known function address (`call_indirect` of `const ptr @f` whose type is
//! `@f`'s own, as constant propagation or a specialized copy leaves them) become direct
//! calls first, so that they are inlined like any other; the rest of the pipeline and the
//! backend see a direct call either way.
//!
//! Statistics: "indirect calls made direct", "calls inlined", "instructions copied".

use std::collections::{HashMap, HashSet};

use adc_ir::{
    Block, BlockCall, Diagnostic, FuncAttrs, FuncId, Function, Inst, InstructionData, Linkage,
    Module, ParamAttrs, Value,
};

use crate::manager::{ModuleContext, ModulePass, Pass, PreservedAnalyses};

/// Callee size (instructions) up to which a call is inlined without `alwaysinline`.
pub const THRESHOLD: usize = 60;
/// At most this many inlined call sites of callees larger than `TINY`, per caller and run.
pub const MAX_PER_CALLER: usize = 64;
/// Callees up to this size (instructions) do not count against `MAX_PER_CALLER`.
pub const TINY: usize = 32;
/// At most this many instructions copied into one caller per run, tiny callees included.
pub const MAX_COPIED_PER_CALLER: usize = 8192;

pub struct Inline;

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }
}

impl ModulePass for Inline {
    fn run(
        &self,
        module: &mut Module,
        cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let policy = SitePolicy {
            cyclic: recursive_functions(module),
            honour_noinline: noinline_is_a_choice(module),
            in_tables: functions_in_global_initializers(module),
            called_once: internal_functions_called_once(module),
        };
        let direct = make_known_targets_direct(module);
        cx.stats.add("indirect calls made direct", direct);
        let mut changed = direct > 0;
        let ids: Vec<FuncId> = module.functions.keys().collect();
        for caller in ids {
            if module.functions[caller].is_declaration() {
                continue;
            }
            let mut count = 0;
            let mut copied_total = 0;
            while copied_total < MAX_COPIED_PER_CALLER {
                let Some((call, callee)) =
                    find_site(module, caller, &policy, count < MAX_PER_CALLER)
                else {
                    break;
                };
                let body = module.functions[callee].clone();
                if body.layout.insts().count() > TINY {
                    count += 1;
                }
                let copied = inline_call(&mut module.functions[caller], call, &body);
                cx.stats.inc("calls inlined");
                cx.stats.add("instructions copied", copied as u64);
                // At least one per site, so that the budget ends even empty callees' chains.
                copied_total += copied.max(1);
                changed = true;
            }
        }
        Ok(if changed { PreservedAnalyses::None } else { PreservedAnalyses::All })
    }
}

/// Rewrites every `call_indirect` whose callee is the address of a function of exactly the
/// call's type into a direct call of it; returns how many. A type mismatch (a function
/// called through a cast pointer) or a `byval` parameter (whose copy the call site's
/// lowering makes from the callee's declared size) keeps the indirect call.
fn make_known_targets_direct(module: &mut Module) -> u64 {
    let mut rewritten = 0;
    let ids: Vec<FuncId> = module.functions.keys().collect();
    for caller in ids {
        let mut sites = Vec::new();
        let func = &module.functions[caller];
        for (_, inst) in func.layout.insts() {
            let InstructionData::CallIndirect { sig, callee, args, attrs } = &func.dfg.insts[inst]
            else {
                continue;
            };
            let Some(target) = func.dfg.function_address(*callee) else { continue };
            let target_fn = &module.functions[target];
            if target_fn.signature == **sig && target_fn.byval_sizes.iter().all(Option::is_none) {
                let call =
                    InstructionData::Call { callee: target, args: args.clone(), attrs: *attrs };
                sites.push((inst, call));
            }
        }
        let func = &mut module.functions[caller];
        for (inst, call) in sites {
            func.dfg.insts[inst] = call;
            rewritten += 1;
        }
    }
    rewritten
}

/// What decides, besides size, whether a call site is inlined (computed once per run).
struct SitePolicy {
    /// Functions in a call cycle: never inlined.
    cyclic: HashSet<FuncId>,
    /// See [`noinline_is_a_choice`].
    honour_noinline: bool,
    /// Functions whose address a global's initializer holds: tables that give them
    /// meaning beyond their body (Enzyme's `__enzyme_register_gradient_*`,
    /// `__enzyme_function_like`, ...). Their `noinline` always counts and they get no
    /// single-call bonus: inlining would bypass a registered derivative.
    in_tables: HashSet<FuncId>,
    /// Internal functions with one direct call in the module: inlined whatever their size,
    /// as LLVM's inliner does for the last call of a local function (the copy replaces
    /// the only use, so code hardly grows, and the caller's optimizations and the cache
    /// planner see through it instead of differentiating a split function). Except, see
    /// [`keeps_noalias`], a call outside any loop to a callee with `noalias` parameters.
    called_once: HashSet<FuncId>,
}

fn internal_functions_called_once(module: &Module) -> HashSet<FuncId> {
    let mut calls: HashMap<FuncId, usize> = HashMap::new();
    for func in module.functions.values() {
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Call { callee, .. } = &func.dfg.insts[inst] {
                *calls.entry(*callee).or_default() += 1;
            }
        }
    }
    calls
        .into_iter()
        .filter(|(f, n)| {
            *n == 1 && matches!(module.functions[*f].linkage, Linkage::Internal | Linkage::Private)
        })
        .map(|(f, _)| f)
        .collect()
}

fn functions_in_global_initializers(module: &Module) -> HashSet<FuncId> {
    let mut out = HashSet::new();
    for global in module.globals.values() {
        if let Some(init) = &global.init {
            init.for_each_function_address(&mut |f| {
                out.insert(f);
            });
        }
    }
    out
}

/// Whether `noinline` says something about a function: not when every function defined
/// in the module carries it, which is what clang -O0 emits (also with
/// `-Xclang -disable-O0-optnone`, the form AD tools take) so that later passes leave -O0
/// code alone. adc's pipelines are the later passes that code was waiting for.
/// Functions adc synthesizes (derivatives) do not carry it, so after AD the attribute
/// counts again (e.g. for the tape helpers).
fn noinline_is_a_choice(module: &Module) -> bool {
    !module
        .functions
        .values()
        .filter(|f| !f.is_declaration())
        .all(|f| f.attrs.contains(FuncAttrs::NOINLINE))
}

/// Functions that can reach themselves through direct calls.
fn recursive_functions(module: &Module) -> HashSet<FuncId> {
    let callees = |f: FuncId| -> Vec<FuncId> {
        let func = &module.functions[f];
        func.layout
            .insts()
            .filter_map(|(_, i)| match &func.dfg.insts[i] {
                InstructionData::Call { callee, .. } => Some(*callee),
                _ => None,
            })
            .collect()
    };
    let graph: HashMap<FuncId, Vec<FuncId>> =
        module.functions.keys().map(|f| (f, callees(f))).collect();
    let mut out = HashSet::new();
    for start in module.functions.keys() {
        let mut seen = HashSet::new();
        let mut work = graph.get(&start).cloned().unwrap_or_default();
        while let Some(f) = work.pop() {
            if f == start {
                out.insert(start);
                break;
            }
            if seen.insert(f) {
                work.extend(graph.get(&f).into_iter().flatten().copied());
            }
        }
    }
    out
}

/// The first call site in `caller` worth inlining; with `any_size` false only tiny callees
/// qualify (the caller has used up its `MAX_PER_CALLER` ordinary sites).
fn find_site(
    module: &Module,
    caller: FuncId,
    policy: &SitePolicy,
    any_size: bool,
) -> Option<(Inst, FuncId)> {
    let func = &module.functions[caller];
    for (_, inst) in func.layout.insts() {
        let InstructionData::Call { callee, attrs, .. } = &func.dfg.insts[inst] else {
            continue;
        };
        let Some(target) = module.functions.get(*callee) else {
            continue;
        };
        let all = *attrs | target.attrs;
        if target.is_declaration()
            || target.signature.varargs
            || ((policy.honour_noinline || policy.in_tables.contains(callee))
                && all.contains(FuncAttrs::NOINLINE))
            || *callee == caller
            || policy.cyclic.contains(callee)
        {
            continue;
        }
        let size = target.layout.insts().count();
        let wanted = all.contains(FuncAttrs::ALWAYSINLINE)
            || size <= THRESHOLD
            || (policy.called_once.contains(callee)
                && !policy.in_tables.contains(callee)
                && !keeps_noalias(func, inst, target));
        if size <= TINY || (any_size && wanted) {
            return Some((inst, *callee));
        }
    }
    None
}

/// Whether the one call of a large callee is better left a call: the callee has `noalias`
/// pointer parameters and the call is outside any loop. Inlined, the body would lose those
/// facts (adc's IR has no scoped alias metadata to carry them into the caller), which is
/// what lets alias analysis, licm and vectorize work on its loops; left alone it costs
/// one call. (GMM's reverse function, inlined into its only caller, kept its triangle
/// loops scalar and ran 1.6-1.9x slower at d = 64.) In a loop the call overhead and,
/// before differentiation, a split call per iteration cost more: ADBench's `Qtimesx`
/// is such a callee.
fn keeps_noalias(caller: &Function, call: Inst, callee: &Function) -> bool {
    callee.param_attrs.iter().any(|a| a.contains(ParamAttrs::NOALIAS))
        && caller.layout.inst_block(call).is_some_and(|b| !on_a_cycle(caller, b))
}

/// Whether `block` can reach itself through the control-flow graph (a walk from its
/// successors; only the blocks reachable from it are visited).
fn on_a_cycle(func: &Function, block: Block) -> bool {
    let mut seen = HashSet::new();
    let mut work = func.successors(block);
    while let Some(b) = work.pop() {
        if b == block {
            return true;
        }
        if seen.insert(b) {
            work.extend(func.successors(b));
        }
    }
    false
}

/// Inlines `callee` at `call` (a direct call laid out in `func`). Returns how many
/// instructions were copied. Outside this pass, the differentiator inlines a derivative
/// into the function a nested request differentiates next.
pub fn inline_call(func: &mut Function, call: Inst, callee: &Function) -> usize {
    let Some(block) = func.layout.inst_block(call) else {
        return 0;
    };
    let InstructionData::Call { args, .. } = func.dfg.insts[call].clone() else {
        return 0;
    };
    let result = func.dfg.inst_result(call);
    // Split: everything after the call moves to the continuation block, except the
    // entry block's fixed-size stack slots, which stay in the entry (before the call: an
    // alloca has no other effect) so that they remain slots of the frame rather than
    // allocations the backend must make each time the continuation runs.
    let cont = func.dfg.make_block();
    let cont_param = result.map(|r| {
        let ty = func.dfg.value_type(r).clone();
        func.dfg.append_block_param(cont, ty)
    });
    let in_entry = func.entry_block() == Some(block);
    let insts = func.layout.block_insts(block).to_vec();
    let position = insts.iter().position(|i| *i == call).unwrap_or(insts.len());
    for &inst in &insts[position + 1..] {
        func.layout.remove_inst(inst);
        let static_slot =
            matches!(func.dfg.insts[inst], InstructionData::Alloca { count: None, .. });
        if in_entry && static_slot {
            func.layout.insert_inst_before(inst, call);
        } else {
            func.layout.append_inst(inst, cont);
        }
    }
    func.layout.remove_inst(call);
    // Fresh blocks and values for the callee's.
    let prefix = callee.name.clone();
    let mut blocks: HashMap<Block, Block> = HashMap::new();
    let mut values: HashMap<Value, Value> = HashMap::new();
    let entry = callee.entry_block();
    let mut new_blocks = Vec::new();
    for &b in callee.layout.blocks() {
        let nb = func.dfg.make_block();
        if let Some(name) = callee.dfg.block_name(b) {
            func.dfg.set_block_name(nb, &format!("{prefix}.{name}"));
        }
        if Some(b) == entry {
            for (p, a) in callee.dfg.block_params(b).iter().zip(&args) {
                values.insert(*p, *a);
            }
        } else {
            for &p in callee.dfg.block_params(b) {
                let np = func.dfg.append_block_param(nb, callee.dfg.value_type(p).clone());
                copy_name(func, callee, p, np, &prefix);
                values.insert(p, np);
            }
        }
        blocks.insert(b, nb);
        new_blocks.push(nb);
    }
    // The callee's fixed-size stack slots go to the caller's entry block, as LLVM's
    // inliner does: the callee's frame died at its return, so one slot serves every
    // execution of the call (in a loop too), and the backend keeps entry-block allocas
    // in the stack frame instead of allocating them at run time.
    let caller_entry = func.entry_block();
    let mut copied = Vec::new();
    for &b in callee.layout.blocks() {
        for &inst in callee.layout.block_insts(b) {
            let data = callee.dfg.insts[inst].clone();
            let ty = callee.dfg.inst_result(inst).map(|r| callee.dfg.value_type(r).clone());
            let ni = func.dfg.make_inst(data, ty);
            func.dfg.debug_locs[ni] = callee.dfg.debug_locs[inst].clone();
            func.dfg.tbaa[ni] = callee.dfg.tbaa[inst].clone();
            func.dfg.index_bounds[ni] = callee.dfg.index_bounds[inst];
            if let (Some(old), Some(new)) = (callee.dfg.inst_result(inst), func.dfg.inst_result(ni))
            {
                copy_name(func, callee, old, new, &prefix);
                values.insert(old, new);
            }
            let static_slot =
                matches!(callee.dfg.insts[inst], InstructionData::Alloca { count: None, .. });
            match caller_entry.filter(|_| static_slot && Some(b) == entry) {
                // Before the entry's first instruction; into the entry itself when the call
                // was its first (the split left it empty and the jump comes later).
                Some(target) => match func.layout.first_inst(target) {
                    Some(first) => func.layout.insert_inst_before(ni, first),
                    None => func.layout.append_inst(ni, target),
                },
                None => func.layout.append_inst(ni, blocks[&b]),
            }
            copied.push(ni);
        }
    }
    for &ni in &copied {
        let data = &mut func.dfg.insts[ni];
        data.map_args(|v| values.get(&v).copied().unwrap_or(v));
        for target in data.branch_targets_mut() {
            target.block = blocks.get(&target.block).copied().unwrap_or(target.block);
        }
        if let InstructionData::Return { value } = data {
            let args = value.iter().copied().collect();
            *data = InstructionData::Jump { dest: BlockCall::new(cont, args) };
        }
    }
    // The calling block now enters the copied entry.
    if let Some(new_entry) = entry.and_then(|e| blocks.get(&e).copied()) {
        let jump = func
            .dfg
            .make_inst(InstructionData::Jump { dest: BlockCall::new(new_entry, vec![]) }, None);
        func.dfg.debug_locs[jump] = func.dfg.debug_locs[call].clone();
        func.layout.append_inst(jump, block);
    }
    if let (Some(r), Some(p)) = (result, cont_param) {
        func.dfg.replace_uses(r, p);
        if let Some(name) = func.dfg.value_name(r).map(str::to_string) {
            func.dfg.set_value_name(p, &name);
            func.dfg.value_names[r] = None;
        }
    }
    // Layout: the copied blocks, then the continuation, right after the calling block.
    let next = {
        let order = func.layout.blocks();
        order.iter().position(|b| *b == block).and_then(|i| order.get(i + 1).copied())
    };
    for nb in new_blocks.into_iter().chain(std::iter::once(cont)) {
        match next {
            Some(n) => func.layout.insert_block_before(nb, n),
            None => func.layout.append_block(nb),
        }
    }
    if let Some(name) = func.dfg.block_name(block).map(str::to_string) {
        func.dfg.set_block_name(cont, &format!("{name}.cont"));
    }
    copied.len()
}

fn copy_name(func: &mut Function, callee: &Function, old: Value, new: Value, prefix: &str) {
    if let Some(name) = callee.dfg.value_name(old) {
        func.dfg.set_value_name(new, &format!("{prefix}.{name}"));
    }
}

#[cfg(test)]
mod tests {
    fn run(text: &str) -> (String, crate::Report) {
        crate::run_pass_on_text("inline", text)
    }

    #[test]
    fn small_callee_with_two_returns() {
        let (text, report) = run("func @abs(%x: i64) -> i64 {\n^e:\n  %z = const i64 0\n  %c = icmp slt i64 %x, %z\n  brif %c, ^neg, ^pos\n^neg:\n  %n = sub i64 %z, %x\n  ret %n\n^pos:\n  ret %x\n}\nfunc @f(%a: i64) -> i64 {\n^e:\n  %r = call @abs(%a)\n  %s = add i64 %r, %r\n  ret %s\n}\n");
        assert_eq!(report.stat("inline", "calls inlined"), 1, "{text}");
        assert!(text.contains("^e.cont(%r: i64):"), "{text}");
    }

    #[test]
    fn recursion_is_left_alone() {
        let (_, report) = run("func @f(%x: i64) -> i64 {\n^e:\n  %r = call @f(%x)\n  ret %r\n}\nfunc @g(%x: i64) -> i64 {\n^e:\n  %r = call @f(%x)\n  ret %r\n}\n");
        assert_eq!(report.stat("inline", "calls inlined"), 0);
    }
}
