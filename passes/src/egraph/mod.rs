//! `egraph`: algebraic simplification with equality saturation (egg 0.11).
//!
//! Nothing of egg leaks out of this module: the pass takes adc instructions in and puts
//! adc instructions back. Per block, each pure integer/float expression tree (binary
//! arithmetic and `fneg` whose operands are computed in the same block) becomes one egg
//! expression; its leaves are the tree's inputs (`v12`) and constants (`i0`, `f3ff0...`
//! with the raw IEEE bits, so every constant is exact). Trees are disjoint: an operation is
//! inlined into its user's tree only when that is its single use (same block, same type),
//! and trees stop at `MAX_TREE_OPS` operations, so the pass is linear in the function.
//! One e-graph per tree (so that constants of different types never meet), bounded by
//! node and iteration limits and never by wall-clock time, so results do not depend on load;
//! the cheapest equivalent (saturating cost: instructions, division dearer) is rebuilt
//! before the tree's root when it is strictly cheaper, and the root's uses move to it.
//! The old instructions stay for `dce`.
//!
//! Rules (`rules.rs`) are one line each and named. IEEE-exact rules always apply (integer
//! algebra, `x * 1.0 -> x`, `x - 0.0 -> x`, `x + -0.0 -> x`, `fneg(fneg x) -> x`, float
//! commutativity); `x - x -> 0` only for integers. Fast-math rules apply only to
//! instructions that carry `reassoc nsz nnan ninf` (the language has a separate `fadd!`
//! family for them), e.g. `x - x -> 0.0`, `x + 0.0 -> x`, reassociation, and the
//! post-AD factoring `a*w + b*w -> (a+b)*w`.
//!
//! Statistics: "expressions simplified", "instructions added", the stop reason of each
//! run ("stop saturated", "stop iteration limit", "stop node limit"),
//! "trees skipped (one operation on distinct inputs)" (trees no rule can shorten, see
//! `Tree::is_irreducible`), and one counter per rule that fired: "rule NAME".

mod rules;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use egg::{CostFunction, Extractor, FromOp, Id, Language, RecExpr, Runner, StopReason, Symbol};

use adc_ir::{
    BinaryOp, Constant, Diagnostic, Function, Inst, InstFlags, InstructionData, Type, UnaryOp,
    Value, ValueDef,
};

use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{resolve, use_counts};

egg::define_language! {
    /// adc's pure integer/float operations. `!` ops are the fast-math ones.
    pub(crate) enum Op {
        "add" = Add([Id; 2]),
        "sub" = Sub([Id; 2]),
        "mul" = Mul([Id; 2]),
        "and" = And([Id; 2]),
        "or" = Or([Id; 2]),
        "xor" = Xor([Id; 2]),
        "shl" = Shl([Id; 2]),
        "fadd" = FAdd([Id; 2]),
        "fsub" = FSub([Id; 2]),
        "fmul" = FMul([Id; 2]),
        "fdiv" = FDiv([Id; 2]),
        "fneg" = FNeg(Id),
        "fadd!" = FAddFast([Id; 2]),
        "fsub!" = FSubFast([Id; 2]),
        "fmul!" = FMulFast([Id; 2]),
        "fdiv!" = FDivFast([Id; 2]),
        Leaf(Symbol),
    }
}

/// The flags a fast (`!`) node needs, and that a rebuilt one carries.
const FAST_NEEDED: InstFlags =
    InstFlags(InstFlags::REASSOC.0 | InstFlags::NSZ.0 | InstFlags::NNAN.0 | InstFlags::NINF.0);

pub const NODE_LIMIT: usize = 5_000;
pub const ITER_LIMIT: usize = 8;

/// Instructions, with division dearer; saturating so huge graphs cannot overflow.
struct Cost;

impl CostFunction<Op> for Cost {
    type Cost = u64;
    fn cost<C: FnMut(Id) -> u64>(&mut self, enode: &Op, mut costs: C) -> u64 {
        let own = match enode {
            Op::Leaf(_) => 0,
            Op::FDiv(_) | Op::FDivFast(_) => 4,
            Op::Mul(_) | Op::FMul(_) | Op::FMulFast(_) => 2,
            _ => 1,
        };
        enode.fold(own, |sum, id| sum.saturating_add(costs(id)))
    }
}

pub struct EGraphPass;

impl Pass for EGraphPass {
    fn name(&self) -> &'static str {
        "egraph"
    }
}

/// Maps one instruction to a language node (children filled in by the caller).
fn op_of(data: &InstructionData, ty: &Type) -> Option<(&'static str, Vec<Value>)> {
    if !ty.is_int() && !ty.is_float() {
        return None;
    }
    match data {
        InstructionData::Binary { op, flags, args } => {
            let fast = flags.contains(FAST_NEEDED);
            let name = match (op, fast) {
                (BinaryOp::Add, _) => "add",
                (BinaryOp::Sub, _) => "sub",
                (BinaryOp::Mul, _) => "mul",
                (BinaryOp::And, _) => "and",
                (BinaryOp::Or, _) => "or",
                (BinaryOp::Xor, _) => "xor",
                (BinaryOp::Shl, _) => "shl",
                (BinaryOp::Fadd, false) => "fadd",
                (BinaryOp::Fsub, false) => "fsub",
                (BinaryOp::Fmul, false) => "fmul",
                (BinaryOp::Fdiv, false) => "fdiv",
                (BinaryOp::Fadd, true) => "fadd!",
                (BinaryOp::Fsub, true) => "fsub!",
                (BinaryOp::Fmul, true) => "fmul!",
                (BinaryOp::Fdiv, true) => "fdiv!",
                _ => return None,
            };
            Some((name, args.to_vec()))
        }
        InstructionData::Unary { op: UnaryOp::Fneg, arg, .. } => Some(("fneg", vec![*arg])),
        _ => None,
    }
}

/// Leaf name of a constant of `ty`, when it is a plain scalar.
fn const_leaf(data: &InstructionData) -> Option<String> {
    match data {
        InstructionData::Const { ty, value: Constant::Int(v) } if ty.is_int() => {
            Some(format!("i{}", adc_ir::constant::sign_extend(*v, ty.int_bits()?)))
        }
        InstructionData::Const { ty, value: Constant::Float(bits) } if ty.is_float() => {
            Some(format!("f{bits:x}"))
        }
        _ => None,
    }
}

struct Tree {
    expr: RecExpr<Op>,
    leaves: HashMap<String, Value>,
    size: usize,
}

impl Tree {
    /// One operation whose operands are distinct non-constant values: every rule that
    /// shortens a single operation needs a constant operand or the same operand twice,
    /// so no run could find anything cheaper. Most trees after AD are these, and skipping
    /// them saves building an e-graph each.
    fn is_irreducible(&self) -> bool {
        let operands = match self.expr.as_ref().last() {
            Some(Op::FNeg(_)) => 1,
            Some(Op::Leaf(_)) | None => return false,
            Some(_) => 2,
        };
        self.size == 1 && self.leaves.len() == operands && self.expr.as_ref().len() == operands + 1
    }
}

/// The largest tree one e-graph gets; deeper operations become leaves here and roots of
/// their own trees, so the work per function stays linear in its size.
pub const MAX_TREE_OPS: usize = 48;

/// Which values a tree may swallow: the result of a candidate operation whose only use is
/// another candidate of the same type in the same block. Everything else (values with
/// several uses, values used by other instructions or in other blocks) is a leaf of the
/// trees that use it and the root of its own tree, so every operation is in exactly one
/// tree.
struct Forest {
    absorbed: HashSet<Value>,
}

impl Forest {
    fn new(func: &Function) -> Forest {
        let counts = use_counts(func);
        let mut absorbed = HashSet::new();
        for (block, user) in func.layout.insts() {
            let Some(result) = func.dfg.inst_result(user) else { continue };
            let ty = func.dfg.value_type(result);
            if op_of(&func.dfg.insts[user], ty).is_none() {
                continue;
            }
            func.dfg.insts[user].for_each_arg(|arg| {
                let ValueDef::Result(def) = func.dfg.value_def(arg) else { return };
                if counts[arg] == 1
                    && func.layout.inst_block(def) == Some(block)
                    && func.dfg.value_type(arg) == ty
                    && op_of(&func.dfg.insts[def], ty).is_some()
                {
                    absorbed.insert(arg);
                }
            });
        }
        Forest { absorbed }
    }

    /// The tree rooted at `root`; operations cut off by the size limit go to `spill`.
    fn tree(&self, func: &Function, root: Inst, spill: &mut Vec<Inst>) -> Option<Tree> {
        let result = func.dfg.inst_result(root)?;
        let ty = func.dfg.value_type(result).clone();
        let mut tree = Tree { expr: RecExpr::default(), leaves: HashMap::new(), size: 0 };
        let mut memo: HashMap<Value, Id> = HashMap::new();
        self.add_value(func, &ty, result, true, &mut tree, &mut memo, spill)?;
        Some(tree)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_value(
        &self,
        func: &Function,
        ty: &Type,
        v: Value,
        is_root: bool,
        tree: &mut Tree,
        memo: &mut HashMap<Value, Id>,
        spill: &mut Vec<Inst>,
    ) -> Option<Id> {
        if let Some(id) = memo.get(&v) {
            return Some(*id);
        }
        let def = match func.dfg.value_def(v) {
            ValueDef::Result(i) => Some(i),
            _ => None,
        };
        let constant = def.and_then(|i| const_leaf(&func.dfg.insts[i]));
        let expandable = is_root || self.absorbed.contains(&v);
        let id = if let Some(name) = constant.filter(|_| func.dfg.value_type(v) == ty) {
            tree.expr.add(Op::Leaf(Symbol::from(name)))
        } else if let (true, Some(inst)) = (expandable, def) {
            if tree.size >= MAX_TREE_OPS {
                spill.push(inst);
                self.leaf(tree, v)
            } else {
                let (name, args) = op_of(&func.dfg.insts[inst], ty)?;
                tree.size += 1;
                let mut ids = Vec::new();
                for a in args {
                    ids.push(self.add_value(func, ty, a, false, tree, memo, spill)?);
                }
                Op::from_op(name, ids).ok().map(|node| tree.expr.add(node))?
            }
        } else {
            self.leaf(tree, v)
        };
        memo.insert(v, id);
        Some(id)
    }

    fn leaf(&self, tree: &mut Tree, v: Value) -> Id {
        let name = format!("v{}", v.as_u32());
        tree.leaves.insert(name.clone(), v);
        tree.expr.add(Op::Leaf(Symbol::from(name)))
    }
}

impl FunctionPass for EGraphPass {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let rules = rules::compiled();
        let forest = Forest::new(func);
        let mut roots: Vec<Inst> = func
            .layout
            .insts()
            .map(|(_, i)| i)
            .filter(|i| {
                let Some(r) = func.dfg.inst_result(*i) else { return false };
                op_of(&func.dfg.insts[*i], func.dfg.value_type(r)).is_some()
                    && !forest.absorbed.contains(&r)
            })
            .collect();
        // Replacements are applied once at the end: rewriting uses after every tree would
        // walk the whole function per simplified expression.
        let mut replaced: HashMap<Value, Value> = HashMap::new();
        let mut removed = Vec::new();
        while let Some(root) = roots.pop() {
            let mut spill = Vec::new();
            let Some(tree) = forest.tree(func, root, &mut spill) else { continue };
            roots.extend(spill);
            if tree.is_irreducible() {
                cx.stats.inc("trees skipped (one operation on distinct inputs)");
                continue;
            }
            let before = Cost.cost_rec(&tree.expr);
            let runner = Runner::default()
                .with_node_limit(NODE_LIMIT)
                .with_iter_limit(ITER_LIMIT)
                .with_time_limit(Duration::MAX)
                .with_expr(&tree.expr)
                .run(rules);
            cx.stats.inc(match runner.stop_reason {
                Some(StopReason::Saturated) => "stop saturated",
                Some(StopReason::IterationLimit(_)) => "stop iteration limit",
                Some(StopReason::NodeLimit(_)) => "stop node limit",
                _ => "stop other",
            });
            let extractor = Extractor::new(&runner.egraph, Cost);
            let (after, best) = extractor.find_best(runner.roots[0]);
            if after >= before {
                continue;
            }
            for iteration in &runner.iterations {
                for (name, hits) in &iteration.applied {
                    if let Some(stat) = rules::stat_name(name.as_str()) {
                        cx.stats.add(stat, *hits as u64);
                    }
                }
            }
            let Some(result) = func.dfg.inst_result(root) else { continue };
            let ty = func.dfg.value_type(result).clone();
            let Some((value, added)) = rebuild(func, root, &ty, &best, &tree.leaves) else {
                continue;
            };
            replaced.insert(result, value);
            removed.push(root);
            cx.stats.inc("expressions simplified");
            cx.stats.add("instructions added", added);
        }
        if replaced.is_empty() {
            return Ok(PreservedAnalyses::All);
        }
        for data in func.dfg.insts.values_mut() {
            data.map_args(|v| resolve(&replaced, v));
        }
        // The roots are now unused; the rest of their trees is dce's.
        for root in removed {
            func.layout.remove_inst(root);
        }
        Ok(PreservedAnalyses::Cfg)
    }
}

/// Emits the extracted expression before `at`; returns its value and how many
/// instructions were added.
fn rebuild(
    func: &mut Function,
    at: Inst,
    ty: &Type,
    expr: &RecExpr<Op>,
    leaves: &HashMap<String, Value>,
) -> Option<(Value, u64)> {
    let mut values: Vec<Value> = Vec::with_capacity(expr.as_ref().len());
    let mut added = 0;
    for node in expr.as_ref() {
        let arg = |i: &Id| values[usize::from(*i)];
        let data = match node {
            Op::Leaf(sym) => {
                let name = sym.as_str();
                if let Some(v) = leaves.get(name) {
                    values.push(*v);
                    continue;
                }
                let value = if let Some(n) = name.strip_prefix('i') {
                    Constant::int(ty, n.parse::<i128>().ok()?)
                } else {
                    Constant::Float(u64::from_str_radix(name.strip_prefix('f')?, 16).ok()?)
                };
                InstructionData::Const { ty: ty.clone(), value }
            }
            Op::FNeg(a) => {
                InstructionData::Unary { op: UnaryOp::Fneg, flags: InstFlags::empty(), arg: arg(a) }
            }
            Op::Add(a)
            | Op::Sub(a)
            | Op::Mul(a)
            | Op::And(a)
            | Op::Or(a)
            | Op::Xor(a)
            | Op::Shl(a)
            | Op::FAdd(a)
            | Op::FSub(a)
            | Op::FMul(a)
            | Op::FDiv(a)
            | Op::FAddFast(a)
            | Op::FSubFast(a)
            | Op::FMulFast(a)
            | Op::FDivFast(a) => {
                let (op, flags) = match node {
                    Op::Add(_) => (BinaryOp::Add, InstFlags::empty()),
                    Op::Sub(_) => (BinaryOp::Sub, InstFlags::empty()),
                    Op::Mul(_) => (BinaryOp::Mul, InstFlags::empty()),
                    Op::And(_) => (BinaryOp::And, InstFlags::empty()),
                    Op::Or(_) => (BinaryOp::Or, InstFlags::empty()),
                    Op::Xor(_) => (BinaryOp::Xor, InstFlags::empty()),
                    Op::Shl(_) => (BinaryOp::Shl, InstFlags::empty()),
                    Op::FAdd(_) => (BinaryOp::Fadd, InstFlags::empty()),
                    Op::FSub(_) => (BinaryOp::Fsub, InstFlags::empty()),
                    Op::FMul(_) => (BinaryOp::Fmul, InstFlags::empty()),
                    Op::FDiv(_) => (BinaryOp::Fdiv, InstFlags::empty()),
                    Op::FAddFast(_) => (BinaryOp::Fadd, FAST_NEEDED),
                    Op::FSubFast(_) => (BinaryOp::Fsub, FAST_NEEDED),
                    Op::FMulFast(_) => (BinaryOp::Fmul, FAST_NEEDED),
                    _ => (BinaryOp::Fdiv, FAST_NEEDED),
                };
                InstructionData::Binary { op, flags, args: [arg(&a[0]), arg(&a[1])] }
            }
        };
        let inst = func.dfg.make_inst(data, Some(ty.clone()));
        func.dfg.debug_locs[inst] = func.dfg.debug_locs[at].clone();
        func.layout.insert_inst_before(inst, at);
        values.push(func.dfg.inst_result(inst)?);
        added += 1;
    }
    values.last().map(|v| (*v, added))
}

#[cfg(test)]
mod tests {
    fn run(text: &str) -> (String, crate::Report) {
        crate::run_pass_on_text("egraph", text)
    }

    #[test]
    fn integer_self_subtraction_folds_but_float_does_not() {
        let (text, report) = run("func @f(%a: i64, %x: f64) -> f64 {\n^e:\n  %d = sub i64 %a, %a\n  %y = sitofp %d to f64\n  %z = fsub f64 %x, %x\n  %r = fadd f64 %y, %z\n  ret %r\n}\n");
        assert!(report.stat("egraph", "rule sub-self") >= 1, "{text}");
        assert!(text.contains("%z = fsub f64 %x, %x"), "{text}");
    }
}
