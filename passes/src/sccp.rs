//! `sccp`: sparse conditional constant propagation (Wegman and Zadeck) with constant
//! folding. Each SSA value has a lattice cell (unknown, one constant, overdefined); only
//! blocks reached through executable edges are evaluated, so a constant branch condition
//! keeps the untaken arm from polluting the join's parameters.
//!
//! Folding uses the interpreter's own value operations (`adc_ir::interp::fold`), so every
//! integer, float, compare, cast and select folds bit-exactly as the interpreter executes
//! it, flags and NaNs included; an operation that traps there (division by zero,
//! `INT_MIN / -1`) is not folded. Only constant operands are combined: no algebraic
//! identity (`x * 0`, `x - x`) is applied, so no IEEE result can change.
//!
//! Rewriting: every value proved constant becomes a `const` (before its definition, or at
//! the top of the block for a parameter) and its uses are replaced; folded instructions
//! are removed. A branch whose condition became constant is folded by `simplify-cfg`.

// Fx hashing: these tables are hot and keyed by entities (see adc_ir::FxHashMap).
use adc_ir::{FxHashMap as HashMap, FxHashSet as HashSet};

use adc_ir::interp::{fold, Val};
use adc_ir::{
    Block, Constant, Diagnostic, Function, Inst, InstructionData as I, Type, Value, ValueDef,
};

use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{insert_const_before, pred_edges};

pub struct Sccp;

impl Pass for Sccp {
    fn name(&self) -> &'static str {
        "sccp"
    }
}

/// A lattice cell. Unknown (no cell) is the top.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Const(Val),
    Over,
}

struct Solver<'f> {
    func: &'f Function,
    cells: HashMap<Value, Cell>,
    exec_blocks: HashSet<Block>,
    exec_edges: HashSet<(Block, usize)>,
    preds: HashMap<Block, Vec<(Block, usize)>>,
    users: HashMap<Value, Vec<Inst>>,
    block_work: Vec<Block>,
    value_work: Vec<Value>,
}

fn no_symbols(_: &adc_ir::Symbol) -> Result<u64, adc_ir::interp::ErrorKind> {
    Err(adc_ir::interp::ErrorKind::Unsupported("address".into()))
}

impl<'f> Solver<'f> {
    fn new(func: &'f Function) -> Solver<'f> {
        let mut users: HashMap<Value, Vec<Inst>> = HashMap::default();
        for (_, inst) in func.layout.insts() {
            func.inst(inst).for_each_arg(|v| users.entry(v).or_default().push(inst));
        }
        Solver {
            func,
            cells: HashMap::default(),
            exec_blocks: HashSet::default(),
            exec_edges: HashSet::default(),
            preds: pred_edges(func),
            users,
            block_work: Vec::new(),
            value_work: Vec::new(),
        }
    }

    fn get(&self, v: Value) -> Option<&Cell> {
        self.cells.get(&v)
    }

    /// Lowers `v`'s cell to `new` (meet); queues its users when it changed.
    fn set(&mut self, v: Value, new: Cell) {
        let merged = match self.cells.get(&v) {
            None => new,
            Some(Cell::Over) => return,
            Some(Cell::Const(a)) => match &new {
                Cell::Const(b) if same_bits(a, b) => return,
                _ => Cell::Over,
            },
        };
        self.cells.insert(v, merged);
        self.value_work.push(v);
    }

    fn mark_edge(&mut self, block: Block, k: usize) {
        if !self.exec_edges.insert((block, k)) {
            return;
        }
        let Some(term) = self.func.terminator(block) else { return };
        let Some(call) = self.func.inst(term).branch_targets().get(k).map(|c| (*c).clone()) else {
            return;
        };
        if self.exec_blocks.insert(call.block) {
            self.block_work.push(call.block);
        } else {
            // Only the parameters can change for a block already being evaluated.
            self.eval_params(call.block);
        }
    }

    fn eval_params(&mut self, block: Block) {
        let params = self.func.dfg.block_params(block).to_vec();
        if Some(block) == self.func.entry_block() {
            for p in params {
                self.set(p, Cell::Over);
            }
            return;
        }
        for i in 0..params.len() {
            self.eval_param(block, i);
        }
    }

    /// Meets parameter `i` of `block` with its argument on every executable edge.
    fn eval_param(&mut self, block: Block, i: usize) {
        let p = self.func.dfg.block_params(block)[i];
        let func = self.func;
        let Some(edges) = self.preds.get(&block) else { return };
        let mut incoming: Vec<Option<Value>> = Vec::with_capacity(edges.len());
        for &(pred, k) in edges {
            if !self.exec_edges.contains(&(pred, k)) {
                continue;
            }
            let Some(term) = func.terminator(pred) else { continue };
            incoming
                .push(func.inst(term).branch_targets().get(k).and_then(|c| c.args.get(i).copied()));
        }
        for arg in incoming {
            match arg.and_then(|a| self.get(a).cloned()) {
                Some(cell) => self.set(p, cell),
                None if arg.is_none() => self.set(p, Cell::Over),
                None => {}
            }
        }
    }

    fn eval_inst(&mut self, inst: Inst) {
        let func = self.func;
        let data = func.inst(inst);
        let n_targets = data.branch_targets().len();
        let block = match func.layout.inst_block(inst) {
            Some(b) => b,
            None => return,
        };
        match data {
            I::Jump { .. } => self.mark_edge(block, 0),
            I::Brif { cond, .. } => match self.get(*cond).cloned() {
                None => {}
                Some(Cell::Const(v)) => {
                    let taken = if matches!(v, Val::Int(x) if x & 1 == 1) { 0 } else { 1 };
                    self.mark_edge(block, taken);
                }
                Some(Cell::Over) => {
                    self.mark_edge(block, 0);
                    self.mark_edge(block, 1);
                }
            },
            I::Switch { value, cases, .. } => match self.get(*value).cloned() {
                None => {}
                Some(Cell::Const(Val::Int(v))) => {
                    let bits = func.dfg.value_type(*value).int_bits().unwrap_or(128);
                    let k = cases
                        .iter()
                        .position(|(c, _)| adc_ir::constant::mask_to_width(*c, bits) == v)
                        .map_or(0, |i| i + 1);
                    self.mark_edge(block, k);
                }
                Some(_) => {
                    for k in 0..n_targets {
                        self.mark_edge(block, k);
                    }
                }
            },
            _ => {
                let Some(result) = func.dfg.inst_result(inst) else { return };
                // `None`: an operand is still unknown; it is evaluated again when it is set.
                if let Some(cell) = self.fold(data, func.dfg.value_type(result)) {
                    self.set(result, cell);
                }
            }
        }
    }

    /// The cell of a pure instruction's result; `None` while an operand is unknown.
    fn fold(&self, data: &I, ty: &Type) -> Option<Cell> {
        let func = self.func;
        let ty_of = |v: &Value| func.dfg.value_type(*v);
        let mut unknown = false;
        let mut over = false;
        let mut vals: Vec<Val> = Vec::new();
        let folds = matches!(
            data,
            I::Unary { .. }
                | I::Binary { .. }
                | I::Fma { .. }
                | I::Icmp { .. }
                | I::Fcmp { .. }
                | I::Select { .. }
                | I::Cast { .. }
        );
        if let I::Const { ty, value } = data {
            return Some(match fold::constant(ty, value, &no_symbols) {
                Ok(v) if to_constant(&v, ty).is_some() => Cell::Const(v),
                _ => Cell::Over,
            });
        }
        if !folds {
            return Some(Cell::Over);
        }
        data.for_each_arg(|a| match self.get(a) {
            None => unknown = true,
            Some(Cell::Over) => over = true,
            Some(Cell::Const(v)) => vals.push(v.clone()),
        });
        // A select on a known condition only needs the chosen operand.
        if let I::Select { args, .. } = data {
            if let Some(Cell::Const(c @ Val::Int(_))) = self.get(args[0]) {
                let pick = if matches!(c, Val::Int(x) if x & 1 == 1) { args[1] } else { args[2] };
                return self.get(pick).cloned();
            }
        }
        if over {
            return Some(Cell::Over);
        }
        if unknown {
            return None;
        }
        let r = match data {
            I::Unary { op, arg, .. } => fold::unary(*op, ty_of(arg), &vals[0]),
            I::Binary { op, args, .. } => fold::binary(*op, ty_of(&args[0]), &vals[0], &vals[1]),
            I::Fma { args, .. } => fold::fma(ty_of(&args[0]), &vals[0], &vals[1], &vals[2]),
            I::Icmp { cond, args } => fold::icmp(*cond, ty_of(&args[0]), &vals[0], &vals[1]),
            I::Fcmp { cond, args, .. } => fold::fcmp(*cond, ty_of(&args[0]), &vals[0], &vals[1]),
            I::Select { .. } => fold::select(&vals[0], &vals[1], &vals[2]),
            I::Cast { op, arg, ty: to } => fold::cast(*op, ty_of(arg), to, &vals[0]),
            _ => return Some(Cell::Over),
        };
        Some(match r {
            Ok(v) if to_constant(&v, ty).is_some() => Cell::Const(v),
            _ => Cell::Over,
        })
    }

    fn solve(&mut self) {
        let Some(entry) = self.func.entry_block() else { return };
        self.exec_blocks.insert(entry);
        self.block_work.push(entry);
        loop {
            if let Some(block) = self.block_work.pop() {
                self.eval_params(block);
                for &inst in self.func.layout.block_insts(block) {
                    self.eval_inst(inst);
                }
            } else if let Some(v) = self.value_work.pop() {
                for inst in self.users.get(&v).cloned().unwrap_or_default() {
                    let Some(b) = self.func.layout.inst_block(inst) else { continue };
                    if !self.exec_blocks.contains(&b) {
                        continue;
                    }
                    // A branch argument changes the parameters it is passed to.
                    if self.func.inst(inst).is_terminator() {
                        let fed: Vec<(Block, usize)> = self
                            .func
                            .inst(inst)
                            .branch_targets()
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| self.exec_edges.contains(&(b, *k)))
                            .flat_map(|(_, c)| {
                                c.args
                                    .iter()
                                    .enumerate()
                                    .filter(|(_, &a)| a == v)
                                    .map(move |(i, _)| (c.block, i))
                            })
                            .collect();
                        for (target, i) in fed {
                            self.eval_param(target, i);
                        }
                    }
                    self.eval_inst(inst);
                }
            } else {
                break;
            }
        }
    }
}

/// Whether two values are the same bits (so `-0.0` differs from `0.0`, NaNs by payload).
fn same_bits(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::F32(x), Val::F32(y)) => x.to_bits() == y.to_bits(),
        (Val::F64(x), Val::F64(y)) => x.to_bits() == y.to_bits(),
        (Val::Vector(x), Val::Vector(y)) | (Val::Aggregate(x), Val::Aggregate(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_bits(a, b))
        }
        _ => a == b,
    }
}

/// The constant for a value of type `ty`, when one can express it (not a non-null pointer).
fn to_constant(v: &Val, ty: &Type) -> Option<Constant> {
    let c = match (v, ty) {
        (Val::Int(x), t) if t.is_int() => Constant::Int(*x),
        (Val::F32(x), Type::F32) => Constant::f32(*x),
        (Val::F64(x), Type::F64) => Constant::f64(*x),
        (Val::Ptr(0), Type::Ptr(_)) => Constant::Int(0),
        (Val::Vector(lanes), Type::Vector(elem, _)) => {
            Constant::Elements(lanes.iter().map(|l| to_constant(l, elem)).collect::<Option<_>>()?)
        }
        (Val::Aggregate(elems), Type::Array(elem, _)) => {
            Constant::Elements(elems.iter().map(|e| to_constant(e, elem)).collect::<Option<_>>()?)
        }
        (Val::Aggregate(fields), Type::Struct(s)) if fields.len() == s.fields.len() => {
            Constant::Elements(
                fields
                    .iter()
                    .zip(&s.fields)
                    .map(|(f, t)| to_constant(f, t))
                    .collect::<Option<_>>()?,
            )
        }
        _ => return None,
    };
    c.fits(ty).then_some(c)
}

impl FunctionPass for Sccp {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        if func.is_declaration() {
            return Ok(PreservedAnalyses::All);
        }
        let mut solver = Solver::new(func);
        solver.solve();
        let mut consts: Vec<(Value, Constant)> = Vec::new();
        for (&v, cell) in &solver.cells {
            if let Cell::Const(val) = cell {
                let already = func.dfg.is_const(v);
                if !already {
                    if let Some(c) = to_constant(val, func.dfg.value_type(v)) {
                        consts.push((v, c));
                    }
                }
            }
        }
        consts.sort_by_key(|(v, _)| *v);
        let (mut folded, mut params) = (0u64, 0u64);
        // One walk over the function replaces them all: one walk per constant made the
        // pass quadratic (issue 30: 50% of lstm's build).
        let mut replacements: HashMap<Value, Value> =
            HashMap::with_capacity_and_hasher(consts.len(), Default::default());
        for (v, c) in consts {
            let ty = func.dfg.value_type(v).clone();
            let (before, removed) = match func.dfg.value_def(v) {
                ValueDef::Result(inst) => (Some(inst), Some(inst)),
                ValueDef::Param(block, _) => (func.layout.first_inst(block), None),
            };
            let Some(before) = before else { continue };
            let new = insert_const_before(func, before, ty, c);
            replacements.insert(v, new);
            if let Some(inst) = removed {
                func.layout.remove_inst(inst);
                folded += 1;
            } else {
                params += 1;
            }
        }
        func.dfg.replace_all_uses(&replacements);
        cx.stats.add("instructions folded", folded);
        cx.stats.add("block params made constant", params);
        Ok(if folded + params > 0 { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_is_not_positive_zero() {
        assert!(!same_bits(&Val::F64(0.0), &Val::F64(-0.0)));
        assert_eq!(to_constant(&Val::Ptr(8), &Type::PTR), None);
        assert_eq!(to_constant(&Val::Int(255), &Type::I8), Some(Constant::Int(255)));
    }
}
