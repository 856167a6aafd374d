//! The dependency index of the type analysis: which instructions must be visited again
//! when a value's tree (or a function's return tree) changes, and which constant-offset
//! `ptradd`s walk a pointer around a loop.
//!
//! The solver visits one instruction at a time and only re-visits the instructions that
//! mention a value whose tree grew, so a change costs its users' visits instead of a pass
//! over the whole function.

use std::collections::{HashMap, HashSet};

use adc_ir::{
    BinaryOp, CastOp, Constant, FuncId, Function, GlobalId, Inst, InstructionData, Module, Symbol,
    UnaryOp, Value, ValueDef,
};

/// One defined function's dependencies.
#[derive(Clone, Default, Debug)]
pub(super) struct FunctionDeps {
    /// For each value, the instructions whose rules read or write its tree: those using
    /// it as an operand (branch arguments included), the one defining it, and, for a
    /// block parameter, the branches passing it an argument.
    pub mentions: HashMap<Value, Vec<Inst>>,
    /// The `ret` instructions (they read and write the return tree).
    pub returns: Vec<Inst>,
    /// Constant-offset `ptradd`s whose result flows back into their own base pointer
    /// (`p' = p + 8` around a loop): pointer walks over an array.
    pub pointer_walks: HashSet<Inst>,
    /// For each merge (a block parameter or a `select`), the values it takes from
    /// outside its own cycle of the flow graph (see [`merge_sources`]).
    pub merge_sources: HashMap<Value, Vec<Value>>,
    /// The flow-graph cycle (strongly connected component) of each value on an edge:
    /// a branch argument in its parameter's cycle is derived from the parameter.
    pub cycles: HashMap<Value, usize>,
    /// For each constant address of a global (`@g + k`) but the first of the lowest
    /// offset, that one (the global's representative here) and `k` minus its offset:
    /// clang -O2 names `&g[1]` as a constant, unrelated to the `@g` a `memset` takes
    /// unless the analysis relates them, as if by a constant-offset `ptradd`.
    pub global_links: HashMap<Value, (Value, i64)>,
}

/// The dependencies of every defined function of a module.
#[derive(Clone, Default, Debug)]
pub(super) struct ModuleDeps {
    pub functions: HashMap<FuncId, FunctionDeps>,
    /// The calls to each defined function, as (caller, call instruction): they read and
    /// write the callee's parameter and return trees.
    pub call_sites: HashMap<FuncId, Vec<(FuncId, Inst)>>,
}

impl ModuleDeps {
    /// The dependencies of the defined functions of `scope` (every one when `None`).
    pub fn new(module: &Module, scope: Option<&HashSet<FuncId>>) -> ModuleDeps {
        let mut deps = ModuleDeps::default();
        // The scope's functions in module order (the order the call sites are listed in),
        // taken from the scope rather than by filtering the whole module: every request
        // indexes its own scope, and a walk over the module per request made N requests
        // cost O(N²).
        let ids: Vec<FuncId> = match scope {
            None => module.functions.keys().collect(),
            Some(scope) => {
                let mut ids: Vec<FuncId> = scope.iter().copied().collect();
                ids.sort();
                ids
            }
        };
        for id in ids {
            let Some(func) = module.functions.get(id).filter(|f| !f.is_declaration()) else {
                continue;
            };
            for (_, inst) in func.layout.insts() {
                if let InstructionData::Call { callee, .. } = func.inst(inst) {
                    deps.call_sites.entry(*callee).or_default().push((id, inst));
                }
            }
            deps.functions.insert(id, function_deps(func));
        }
        deps
    }
}

fn function_deps(func: &Function) -> FunctionDeps {
    let mut deps = FunctionDeps::default();
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        let mut mention = |value: Value| {
            let insts = deps.mentions.entry(value).or_default();
            // An instruction naming a value twice needs one visit per change.
            if insts.last() != Some(&inst) {
                insts.push(inst);
            }
        };
        data.for_each_arg(&mut mention);
        if let Some(result) = func.dfg.inst_result(inst) {
            mention(result);
        }
        for target in data.branch_targets() {
            for param in func.dfg.block_params(target.block) {
                mention(*param);
            }
        }
        if matches!(data, InstructionData::Return { .. }) {
            deps.returns.push(inst);
        }
    }
    let edges = flow_edges(func);
    deps.cycles = strongly_connected_components(&edges);
    deps.pointer_walks = pointer_walks(func, &deps.cycles);
    deps.global_links = global_links(func);
    // A representative that grew re-visits the constants linked to it.
    for (address, (representative, _)) in &deps.global_links {
        if let ValueDef::Result(inst) = func.dfg.value_def(*address) {
            let insts = deps.mentions.entry(*representative).or_default();
            if !insts.contains(&inst) {
                insts.push(inst);
            }
        }
    }
    let merges = Merges::of(func);
    deps.merge_sources = merge_sources(func, &merges.incoming, &deps.cycles);
    // A merge's rule reads its sources' trees: a source that grew re-visits the
    // instructions that apply the rule (the branches into the parameter's block, the
    // `select`).
    for (merge, sources) in &deps.merge_sources {
        for source in sources {
            let insts = deps.mentions.entry(*source).or_default();
            for inst in merges.appliers.get(merge).into_iter().flatten() {
                if !insts.contains(inst) {
                    insts.push(*inst);
                }
            }
        }
    }
    deps
}

/// The constant addresses of each global in `func`, linked to the one of lowest offset (see
/// [`FunctionDeps::global_links`]).
fn global_links(func: &Function) -> HashMap<Value, (Value, i64)> {
    let mut by_global: HashMap<GlobalId, Vec<(Value, i64)>> = HashMap::new();
    for (_, inst) in func.layout.insts() {
        if let (
            InstructionData::Const {
                value: Constant::Address { symbol: Symbol::Global(global), offset },
                ..
            },
            Some(r),
        ) = (func.inst(inst), func.dfg.inst_result(inst))
        {
            by_global.entry(*global).or_default().push((r, *offset));
        }
    }
    let mut links = HashMap::new();
    for addresses in by_global.values() {
        let Some(&(representative, base)) = addresses.iter().min_by_key(|(_, offset)| *offset)
        else {
            continue;
        };
        for &(address, offset) in addresses {
            if address != representative {
                links.insert(address, (representative, offset - base));
            }
        }
    }
    links
}

/// The merges of a function (block parameters, `select` results): the values each can
/// take, and the instructions that pass them (branches, the `select` itself).
struct Merges {
    incoming: HashMap<Value, Vec<Value>>,
    appliers: HashMap<Value, Vec<Inst>>,
}

impl Merges {
    fn of(func: &Function) -> Merges {
        let mut merges = Merges { incoming: HashMap::new(), appliers: HashMap::new() };
        for (_, inst) in func.layout.insts() {
            let data = func.inst(inst);
            for target in data.branch_targets() {
                for (arg, param) in target.args.iter().zip(func.dfg.block_params(target.block)) {
                    merges.incoming.entry(*param).or_default().push(*arg);
                    merges.appliers.entry(*param).or_default().push(inst);
                }
            }
            if let (InstructionData::Select { args, .. }, Some(r)) =
                (data, func.dfg.inst_result(inst))
            {
                merges.incoming.entry(r).or_default().extend([args[1], args[2]]);
                merges.appliers.entry(r).or_default().push(inst);
            }
        }
        merges
    }
}

/// The incoming values of each merge (block parameter, `select` result) that lie
/// outside its flow-graph cycle, found by walking back through the members of the
/// cycle. For `p = phi [a, entry], [p + 8, loop]` that is `a`: `p + 8` is derived from
/// `p` itself. Constants are left out: a constant is a bit pattern, consistent with
/// every type (`null` meets any pointer).
fn merge_sources(
    func: &Function,
    incoming: &HashMap<Value, Vec<Value>>,
    cycles: &HashMap<Value, usize>,
) -> HashMap<Value, Vec<Value>> {
    let mut sources = HashMap::new();
    for &merge in incoming.keys() {
        let cycle = cycles.get(&merge);
        let mut found = Vec::new();
        let mut seen = HashSet::from([merge]);
        let mut todo = vec![merge];
        while let Some(value) = todo.pop() {
            let preds: Vec<Value> = match incoming.get(&value) {
                Some(values) => values.clone(),
                // A member of the cycle that is not a merge (`p + 8`, a cast): the
                // operands it moves along the cycle.
                None => flow_operands(func, value),
            };
            for pred in preds {
                if func.dfg.is_const(pred) || !seen.insert(pred) {
                    continue;
                }
                if cycle.is_some() && cycles.get(&pred) == cycle {
                    todo.push(pred);
                } else if incoming.contains_key(&value) {
                    found.push(pred);
                }
            }
        }
        sources.insert(merge, found);
    }
    sources
}

/// The operands whose value `value`'s instruction moves along a flow edge.
fn flow_operands(func: &Function, value: Value) -> Vec<Value> {
    let ValueDef::Result(inst) = func.dfg.value_def(value) else { return Vec::new() };
    match func.inst(inst) {
        InstructionData::PtrAdd { ptr, .. } => vec![*ptr],
        InstructionData::Cast { arg, .. } | InstructionData::Unary { arg, .. } => vec![*arg],
        InstructionData::Binary { args, .. } => args.to_vec(),
        _ => Vec::new(),
    }
}

/// The edges along which a pointer value flows into another value unchanged or moved:
/// `ptradd`, pointer casts, `select`, `freeze`, integer `add`/`sub` (pointer arithmetic
/// after `ptrtoint`) and branch arguments to block parameters.
fn flow_edges(func: &Function) -> HashMap<Value, Vec<Value>> {
    let mut edges: HashMap<Value, Vec<Value>> = HashMap::new();
    let mut edge = |from: Value, to: Value| edges.entry(from).or_default().push(to);
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        if let Some(r) = func.dfg.inst_result(inst) {
            match data {
                InstructionData::PtrAdd { ptr, .. } => edge(*ptr, r),
                InstructionData::Cast {
                    op:
                        CastOp::Bitcast | CastOp::Addrspacecast | CastOp::Ptrtoint | CastOp::Inttoptr,
                    arg,
                    ..
                } => edge(*arg, r),
                InstructionData::Unary { op: UnaryOp::Freeze, arg, .. } => edge(*arg, r),
                InstructionData::Select { args, .. } => {
                    edge(args[1], r);
                    edge(args[2], r);
                }
                InstructionData::Binary { op: BinaryOp::Add | BinaryOp::Sub, args, .. } => {
                    edge(args[0], r);
                    edge(args[1], r);
                }
                _ => {}
            }
        }
        for target in data.branch_targets() {
            for (arg, param) in target.args.iter().zip(func.dfg.block_params(target.block)) {
                edge(*arg, *param);
            }
        }
    }
    edges
}

/// The constant-offset `ptradd`s whose base and result lie on one cycle of the flow
/// graph (same strongly connected component).
fn pointer_walks(func: &Function, components: &HashMap<Value, usize>) -> HashSet<Inst> {
    let mut walks = HashSet::new();
    for (_, inst) in func.layout.insts() {
        let InstructionData::PtrAdd { ptr, .. } = func.inst(inst) else { continue };
        let Some(r) = func.dfg.inst_result(inst) else { continue };
        if let (Some(a), Some(b)) = (components.get(ptr), components.get(&r)) {
            if a == b {
                walks.insert(inst);
            }
        }
    }
    walks
}

/// Tarjan's algorithm, iteratively (large functions must not overflow the stack): the
/// component number of every value that has an edge.
fn strongly_connected_components(edges: &HashMap<Value, Vec<Value>>) -> HashMap<Value, usize> {
    let mut index: HashMap<Value, usize> = HashMap::new();
    let mut lowlink: HashMap<Value, usize> = HashMap::new();
    let mut on_stack: HashSet<Value> = HashSet::new();
    let mut stack: Vec<Value> = Vec::new();
    let mut component: HashMap<Value, usize> = HashMap::new();
    let mut components = 0;
    let mut roots: Vec<Value> = edges.keys().copied().collect();
    roots.sort();
    let no_successors = Vec::new();
    for root in roots {
        if index.contains_key(&root) {
            continue;
        }
        // Each frame: a value and how many of its successors were explored.
        let mut frames: Vec<(Value, usize)> = vec![(root, 0)];
        let next = index.len();
        index.insert(root, next);
        lowlink.insert(root, next);
        stack.push(root);
        on_stack.insert(root);
        while let Some((value, explored)) = frames.last().copied() {
            let successors = edges.get(&value).unwrap_or(&no_successors);
            if let Some(successor) = successors.get(explored).copied() {
                frames.last_mut().expect("a frame is open").1 += 1;
                if let Some(successor_index) = index.get(&successor).copied() {
                    if on_stack.contains(&successor) {
                        let low = lowlink[&value].min(successor_index);
                        lowlink.insert(value, low);
                    }
                } else {
                    let next = index.len();
                    index.insert(successor, next);
                    lowlink.insert(successor, next);
                    stack.push(successor);
                    on_stack.insert(successor);
                    frames.push((successor, 0));
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                let low = lowlink[parent].min(lowlink[&value]);
                lowlink.insert(*parent, low);
            }
            if lowlink[&value] == index[&value] {
                while let Some(member) = stack.pop() {
                    on_stack.remove(&member);
                    component.insert(member, components);
                    if member == value {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    component
}
