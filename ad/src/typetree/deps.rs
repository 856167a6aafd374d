//! The dependency index of the type analysis: which instructions must be visited again
//! when a value's tree (or a function's return tree) changes, and which constant-offset
//! `ptradd`s walk a pointer around a loop.
//!
//! The solver visits one instruction at a time and only re-visits the instructions that
//! mention a value whose tree grew, so a change costs its users' visits instead of a pass
//! over the whole function.

use std::collections::{HashMap, HashSet};

use adc_ir::{BinaryOp, CastOp, FuncId, Function, Inst, InstructionData, Module, UnaryOp, Value};

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
    deps.pointer_walks = pointer_walks(func);
    deps
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
fn pointer_walks(func: &Function) -> HashSet<Inst> {
    let edges = flow_edges(func);
    let components = strongly_connected_components(&edges);
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
