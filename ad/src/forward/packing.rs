//! Lane packing for vector forward mode (`enzyme_width N`): after synthesis every lane's
//! tangent is separate scalar code; this step rewrites the float tangent arithmetic of the
//! N lanes into one instruction on an IR vector `<N x f32|f64>` per lane group, which the
//! backend can run as SIMD.
//!
//! Synthesis knows the lane groups: for each primal value, the tuple of its shadows in
//! lanes 0..N (the seeds). Packing grows from them towards operands: a tuple whose lanes
//! are isomorphic float instructions of one block (same unary/binary op and flags, `fma`,
//! `select` on one condition, `fpext`/`fptrunc`) becomes one vector instruction placed
//! after its last lane; a tuple of parameters of one block (not the entry) becomes one
//! vector parameter, so loops carry vector phis. Operands of a packed instruction are the
//! vectors of packed tuples, a splat of a value the lanes share (a primal value, a
//! constant), or else an `insertlane` chain (a gather: loads from the N shadow pointers,
//! the entry's shadow parameters). Users that were not packed read lanes back with
//! `extractlane`; a user placed before a vector is ready keeps its scalar lane.
//!
//! Invariant: packing is an exact rewrite. Every vector lane computes the very operation
//! its scalar lane did on the very same operands (no reassociation, no new rounding), so
//! results stay bit for bit the same. Before packing, duplicated pure computations that
//! do not depend on the lane (`cos x` of a `sin` rule, once per lane) are merged within
//! their block, which is exact too. The scalar lane code left without users is removed
//! by `adc_passes::dce` at the end.

use std::collections::{HashMap, HashSet};

use adc_ir::dominance::DomTree;
use adc_ir::{
    Block, CastOp, Constant, FuncAttrs, Function, Inst, InstructionData, Type, Value, ValueDef,
};

/// What packing did to one derivative.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Lane tuples of instructions now computed by one vector instruction.
    pub packed_insts: usize,
    /// Lane tuples of block parameters now carried as one vector parameter.
    pub packed_params: usize,
    /// Duplicated lane-independent pure instructions merged before packing.
    pub merged: usize,
}

/// How a tuple of lane values is available as a vector.
enum Class {
    /// Every lane is the same value: a splat of it.
    Uniform(Value),
    /// Isomorphic float instructions of one block: one vector instruction.
    Insts(Vec<Inst>),
    /// Parameters of one block (not the entry): one vector parameter.
    Params(Block),
    /// Anything else: an `insertlane` chain where a vector is needed.
    Gather,
}

/// Packs the lanes of `func`, a forward derivative whose lane groups are `seeds` (each
/// the tuple of one primal value's shadows in lanes 0..N, N ≥ 2).
pub(crate) fn pack_lanes(func: &mut Function, seeds: &[Vec<Value>]) -> PackStats {
    let mut stats = PackStats::default();
    let Some(width) = seeds.first().map(Vec::len).filter(|n| *n >= 2) else { return stats };
    let merged = merge_duplicates(func);
    stats.merged = merged.len();
    let resolve = |v: Value| {
        let mut v = v;
        while let Some(next) = merged.get(&v) {
            v = *next;
        }
        v
    };
    let seeds: Vec<Vec<Value>> =
        seeds.iter().map(|t| t.iter().map(|v| resolve(*v)).collect()).collect();
    let Some(dom) = DomTree::for_function(func) else { return stats };
    let mut packer = Packer::new(func, width, &dom);
    packer.discover(seeds);
    stats.packed_params = packer.param_groups.len();
    stats.packed_insts = packer.inst_groups.len();
    packer.emit();
    adc_passes::dce::dce(func);
    stats
}

/// Merges, block by block, pure instructions equal to an earlier one in the same block
/// (after their operands were merged); returns the replaced results and their survivors.
fn merge_duplicates(func: &mut Function) -> HashMap<Value, Value> {
    let mut replaced: HashMap<Value, Value> = HashMap::new();
    for block in func.layout.blocks().to_vec() {
        let mut seen: HashMap<(&'static str, Vec<Value>), Vec<Inst>> = HashMap::new();
        for inst in func.layout.block_insts(block).to_vec() {
            func.dfg.insts[inst].map_args(|v| *replaced.get(&v).unwrap_or(&v));
            let data = &func.dfg.insts[inst];
            let Some(result) = func.dfg.inst_result(inst) else { continue };
            if !is_pure(data) {
                continue;
            }
            let key = (data.opcode_name(), data.args());
            let candidates = seen.entry(key).or_default();
            let ty = func.dfg.value_type(result);
            let earlier = candidates.iter().copied().find(|c| {
                func.dfg.insts[*c] == *data
                    && func.dfg.inst_result(*c).is_some_and(|r| func.dfg.value_type(r) == ty)
            });
            match earlier {
                Some(earlier) => {
                    let survivor = func.dfg.inst_result(earlier).expect("a pure result");
                    replaced.insert(result, survivor);
                    func.layout.remove_inst(inst);
                }
                None => candidates.push(inst),
            }
        }
    }
    if !replaced.is_empty() {
        // Uses in blocks laid out before the definition's block.
        for block in func.layout.blocks().to_vec() {
            for inst in func.layout.block_insts(block).to_vec() {
                func.dfg.insts[inst].map_args(|v| *replaced.get(&v).unwrap_or(&v));
            }
        }
    }
    replaced
}

/// Whether two equal copies of the instruction always give the same result and may be
/// merged: value operations, and calls that touch no memory.
fn is_pure(data: &InstructionData) -> bool {
    use InstructionData as I;
    match data {
        I::Const { .. }
        | I::Unary { .. }
        | I::Binary { .. }
        | I::Fma { .. }
        | I::Icmp { .. }
        | I::Fcmp { .. }
        | I::Select { .. }
        | I::Cast { .. }
        | I::PtrAdd { .. }
        | I::ExtractLane { .. }
        | I::InsertLane { .. }
        | I::Shuffle { .. }
        | I::ExtractValue { .. }
        | I::InsertValue { .. } => true,
        I::Call { attrs, .. } => attrs.contains(FuncAttrs::READNONE),
        _ => false,
    }
}

/// The operands of a packable instruction that vary by lane (a `select`'s condition is
/// shared and not among them).
fn lane_operands(data: &InstructionData) -> Vec<Value> {
    use InstructionData as I;
    match data {
        I::Unary { arg, .. } | I::Cast { arg, .. } => vec![*arg],
        I::Binary { args, .. } => args.to_vec(),
        I::Fma { args, .. } => args.to_vec(),
        I::Select { args, .. } => vec![args[1], args[2]],
        _ => Vec::new(),
    }
}

/// Lane 0's instruction with its lane operands replaced by `vectors` (and a cast's target
/// type widened to `width` lanes).
fn vector_inst(data: &InstructionData, vectors: &[Value], width: u32) -> InstructionData {
    use InstructionData as I;
    let mut data = data.clone();
    match &mut data {
        I::Unary { arg, .. } => *arg = vectors[0],
        I::Cast { arg, ty, .. } => {
            *arg = vectors[0];
            *ty = Type::vector(ty.clone(), width);
        }
        I::Binary { args, .. } => args.copy_from_slice(vectors),
        I::Fma { args, .. } => args.copy_from_slice(vectors),
        I::Select { args, .. } => {
            args[1] = vectors[0];
            args[2] = vectors[1];
        }
        _ => unreachable!("only packable instructions are widened"),
    }
    data
}

/// Whether `b` does what `a` does, lane for lane, and either is packable.
fn isomorphic(a: &InstructionData, b: &InstructionData) -> bool {
    use InstructionData as I;
    match (a, b) {
        (I::Unary { op: x, flags: f, .. }, I::Unary { op: y, flags: g, .. }) => x == y && f == g,
        (I::Binary { op: x, flags: f, .. }, I::Binary { op: y, flags: g, .. }) => x == y && f == g,
        (I::Fma { flags: f, .. }, I::Fma { flags: g, .. }) => f == g,
        (I::Select { flags: f, args: x }, I::Select { flags: g, args: y }) => {
            f == g && x[0] == y[0]
        }
        (I::Cast { op: x, ty: s, .. }, I::Cast { op: y, ty: t, .. }) => {
            x == y && s == t && matches!(x, CastOp::Fpext | CastOp::Fptrunc)
        }
        _ => false,
    }
}

fn is_scalar_float(ty: &Type) -> bool {
    matches!(ty, Type::F32 | Type::F64)
}

/// One lane tuple of instructions to pack.
struct InstGroup {
    lanes: Vec<Value>,
    insts: Vec<Inst>,
    block: Block,
    /// The last lane in the block (and its position): the vector goes right after it.
    last_inst: Inst,
    last: usize,
}

struct ParamGroup {
    lanes: Vec<Value>,
    block: Block,
}

struct Packer<'f> {
    func: &'f mut Function,
    width: usize,
    rpo_index: HashMap<Block, usize>,
    /// Position of every instruction in its block, before packing inserts anything.
    position: HashMap<Inst, usize>,
    inst_groups: Vec<InstGroup>,
    param_groups: Vec<ParamGroup>,
    /// Values already in a group: a value is packed in one group only.
    claimed: HashSet<Value>,
    /// The vector of each packed tuple.
    vectors: HashMap<Vec<Value>, Value>,
    /// Lane index constants and `undef` vectors, made once at the top of the entry block.
    lane_indices: Vec<Value>,
    undef_vectors: HashMap<Type, Value>,
    /// The entry block's first instruction before packing: vector constants go before it.
    entry_top: Inst,
}

impl<'f> Packer<'f> {
    fn new(func: &'f mut Function, width: usize, dom: &DomTree) -> Packer<'f> {
        let rpo_index = dom.rpo().iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let entry = func.entry_block().expect("a function with a dominator tree has a body");
        let entry_top = func.layout.first_inst(entry).expect("a block ends in a terminator");
        let mut position = HashMap::new();
        for &block in func.layout.blocks() {
            for (i, inst) in func.layout.block_insts(block).iter().enumerate() {
                position.insert(*inst, i);
            }
        }
        Packer {
            func,
            width,
            rpo_index,
            position,
            inst_groups: Vec::new(),
            param_groups: Vec::new(),
            claimed: HashSet::new(),
            vectors: HashMap::new(),
            lane_indices: Vec::new(),
            undef_vectors: HashMap::new(),
            entry_top,
        }
    }

    fn classify(&self, tuple: &[Value]) -> Class {
        let dfg = &self.func.dfg;
        if tuple.iter().all(|v| *v == tuple[0]) {
            return Class::Uniform(tuple[0]);
        }
        let ty = dfg.value_type(tuple[0]);
        let distinct = tuple.iter().collect::<HashSet<_>>().len() == tuple.len();
        if !distinct || tuple.iter().any(|v| dfg.value_type(*v) != ty) {
            return Class::Gather;
        }
        // Equal constants (zero tangents of each lane) are one shared value.
        let constant = |v: Value| match dfg.value_def(v) {
            ValueDef::Result(inst) => match &dfg.insts[inst] {
                InstructionData::Const { value, .. } => Some(value),
                _ => None,
            },
            ValueDef::Param(..) => None,
        };
        if let Some(first) = constant(tuple[0]) {
            if tuple.iter().all(|v| constant(*v) == Some(first)) {
                return Class::Uniform(tuple[0]);
            }
        }
        if !is_scalar_float(ty) {
            return Class::Gather;
        }
        match dfg.value_def(tuple[0]) {
            ValueDef::Param(block, _) => {
                let same_block = tuple
                    .iter()
                    .all(|v| matches!(dfg.value_def(*v), ValueDef::Param(b, _) if b == block));
                if same_block && Some(block) != self.func.entry_block() {
                    Class::Params(block)
                } else {
                    Class::Gather
                }
            }
            ValueDef::Result(first) => {
                let block = self.func.layout.inst_block(first);
                let mut insts = Vec::with_capacity(tuple.len());
                for v in tuple {
                    let ValueDef::Result(inst) = dfg.value_def(*v) else { return Class::Gather };
                    let same = self.func.layout.inst_block(inst) == block
                        && block.is_some()
                        && isomorphic(&dfg.insts[first], &dfg.insts[inst]);
                    if !same {
                        return Class::Gather;
                    }
                    insts.push(inst);
                }
                Class::Insts(insts)
            }
        }
    }

    /// Finds the groups to pack: the seeds, and from packed groups their operand tuples
    /// (and, for parameters, the tuples passed on every edge).
    fn discover(&mut self, seeds: Vec<Vec<Value>>) {
        let mut seen: HashSet<Vec<Value>> = HashSet::new();
        let mut work: Vec<Vec<Value>> =
            seeds.into_iter().filter(|t| t.len() == self.width).rev().collect();
        while let Some(tuple) = work.pop() {
            if !seen.insert(tuple.clone()) || tuple.iter().any(|v| self.claimed.contains(v)) {
                continue;
            }
            match self.classify(&tuple) {
                Class::Insts(insts) => {
                    let block = self.func.layout.inst_block(insts[0]).expect("laid out");
                    let last_inst = *insts.iter().max_by_key(|i| self.position[i]).expect("lanes");
                    let last = self.position[&last_inst];
                    let operands: Vec<Vec<Value>> =
                        insts.iter().map(|i| lane_operands(&self.func.dfg.insts[*i])).collect();
                    for position in 0..operands[0].len() {
                        work.push(operands.iter().map(|o| o[position]).collect());
                    }
                    self.claimed.extend(tuple.iter().copied());
                    self.inst_groups.push(InstGroup {
                        lanes: tuple,
                        insts,
                        block,
                        last_inst,
                        last,
                    });
                }
                Class::Params(block) => {
                    for (_, term) in self.terminators() {
                        for target in self.func.dfg.insts[term].branch_targets() {
                            if target.block == block {
                                work.push(
                                    tuple
                                        .iter()
                                        .map(|p| target.args[self.param_index(*p)])
                                        .collect(),
                                );
                            }
                        }
                    }
                    self.claimed.extend(tuple.iter().copied());
                    self.param_groups.push(ParamGroup { lanes: tuple, block });
                }
                Class::Uniform(_) | Class::Gather => {}
            }
        }
        // Operands before their users: dominating blocks first, then block order.
        let rpo = &self.rpo_index;
        self.inst_groups
            .sort_by_key(|g| (rpo.get(&g.block).copied().unwrap_or(usize::MAX), g.last));
    }

    fn param_index(&self, param: Value) -> usize {
        match self.func.dfg.value_def(param) {
            ValueDef::Param(_, index) => index as usize,
            ValueDef::Result(_) => unreachable!("a parameter group holds parameters"),
        }
    }

    fn terminators(&self) -> Vec<(Block, Inst)> {
        let func = &self.func;
        func.layout.blocks().iter().filter_map(|b| func.terminator(*b).map(|t| (*b, t))).collect()
    }

    fn emit(&mut self) {
        let original: Vec<(Block, Inst)> = self.func.layout.insts().collect();
        self.make_lane_indices();
        let mut unconditional: HashMap<Value, Value> = HashMap::new();
        // Where a lane of a packed instruction may be read from its vector: after `last`
        // in `block`, or anywhere in another block (which the lane's block dominates).
        let mut conditional: HashMap<Value, (Value, Block, usize)> = HashMap::new();
        let groups = std::mem::take(&mut self.param_groups);
        for group in &groups {
            let ty =
                Type::vector(self.func.dfg.value_type(group.lanes[0]).clone(), self.width as u32);
            let vector = self.func.dfg.append_block_param(group.block, ty);
            self.name_like(vector, group.lanes[0]);
            self.vectors.insert(group.lanes.clone(), vector);
            let anchor = self.func.layout.first_inst(group.block).expect("a terminator");
            for (lane, param) in group.lanes.iter().enumerate() {
                let extracted = self.extract(vector, lane, anchor);
                unconditional.insert(*param, extracted);
            }
        }
        let inst_groups = std::mem::take(&mut self.inst_groups);
        let packed_insts: HashSet<Inst> =
            inst_groups.iter().flat_map(|g| g.insts.iter().copied()).collect();
        for group in &inst_groups {
            let insts = self.func.layout.block_insts(group.block);
            let after_last =
                insts.iter().position(|i| *i == group.last_inst).expect("laid out") + 1;
            let anchor = insts[after_last];
            let lane_data: Vec<InstructionData> =
                group.insts.iter().map(|i| self.func.dfg.insts[*i].clone()).collect();
            let operands: Vec<Vec<Value>> = lane_data.iter().map(lane_operands).collect();
            let mut vectors = Vec::new();
            for position in 0..operands[0].len() {
                let tuple: Vec<Value> = operands.iter().map(|o| o[position]).collect();
                vectors.push(self.materialize(&tuple, anchor));
            }
            let data = vector_inst(&lane_data[0], &vectors, self.width as u32);
            let ty = match &data {
                InstructionData::Cast { ty, .. } => ty.clone(),
                _ => self.func.dfg.value_type(vectors[0]).clone(),
            };
            let vector = self.insert(data, ty, anchor);
            self.name_like(vector, group.lanes[0]);
            self.vectors.insert(group.lanes.clone(), vector);
            for (lane, value) in group.lanes.iter().enumerate() {
                let extracted = self.extract(vector, lane, anchor);
                conditional.insert(*value, (extracted, group.block, group.last));
            }
        }
        self.patch_edges(&groups);
        for (block, inst) in original {
            if packed_insts.contains(&inst) {
                continue;
            }
            let at = self.position[&inst];
            self.func.dfg.insts[inst].map_args(|v| {
                if let Some(e) = unconditional.get(&v) {
                    return *e;
                }
                match conditional.get(&v) {
                    Some(&(e, lane_block, last)) if lane_block != block || at > last => e,
                    _ => v,
                }
            });
        }
    }

    /// Every edge into a block with vector parameters passes one vector per group, in the
    /// order of the parameters; the scalar lane arguments die with their parameters.
    fn patch_edges(&mut self, groups: &[ParamGroup]) {
        for (_, term) in self.terminators() {
            let targets: Vec<(Block, Vec<Value>)> = self.func.dfg.insts[term]
                .branch_targets()
                .iter()
                .map(|t| (t.block, t.args.clone()))
                .collect();
            let mut extra: Vec<Vec<Value>> = Vec::new();
            for (block, args) in &targets {
                let mut passed = Vec::new();
                for group in groups.iter().filter(|g| g.block == *block) {
                    let tuple: Vec<Value> =
                        group.lanes.iter().map(|p| args[self.param_index(*p)]).collect();
                    passed.push(self.materialize(&tuple, term));
                }
                extra.push(passed);
            }
            let mut data = self.func.dfg.insts[term].clone();
            for (target, passed) in data.branch_targets_mut().into_iter().zip(extra) {
                target.args.extend(passed);
            }
            self.func.dfg.insts[term] = data;
        }
    }

    /// The tuple as one vector, available just before `anchor`. A splat or gather is
    /// built once, right after the lanes are defined when they are defined in one block
    /// (so that a loop does not gather the function's shadow parameters on every
    /// iteration), else at `anchor`.
    fn materialize(&mut self, tuple: &[Value], anchor: Inst) -> Value {
        if let Some(vector) = self.vectors.get(tuple) {
            return *vector;
        }
        let lane_ty = self.func.dfg.value_type(tuple[0]).clone();
        let ty = Type::vector(lane_ty, self.width as u32);
        let undef = self.undef_vector(&ty);
        let class = self.classify(tuple);
        if let Class::Uniform(value) = class {
            if let Some(constant) = self.constant_of(value) {
                let elements = match constant {
                    Constant::Zero => Constant::Zero,
                    other => Constant::Elements(vec![other; self.width]),
                };
                let data = InstructionData::Const { ty: ty.clone(), value: elements };
                let vector = self.insert(data, ty, self.entry_top);
                self.vectors.insert(tuple.to_vec(), vector);
                return vector;
            }
        }
        let home = self.home(tuple);
        let at = home.unwrap_or(anchor);
        let vector = match class {
            Class::Uniform(value) => {
                let one = self.insert_lane(undef, value, 0, at);
                let mask = vec![Some(0); self.width];
                self.insert(InstructionData::Shuffle { args: [one, one], mask }, ty, at)
            }
            _ => {
                let mut vector = undef;
                for (lane, value) in tuple.iter().enumerate() {
                    vector = self.insert_lane(vector, *value, lane, at);
                }
                vector
            }
        };
        if home.is_some() {
            self.vectors.insert(tuple.to_vec(), vector);
        }
        vector
    }

    /// Where the lanes are all defined in one block, the point right after the last of
    /// them (the start of the block for parameters).
    fn home(&self, tuple: &[Value]) -> Option<Inst> {
        let dfg = &self.func.dfg;
        let layout = &self.func.layout;
        let block_of = |v: Value| match dfg.value_def(v) {
            ValueDef::Param(block, _) => Some(block),
            ValueDef::Result(inst) => layout.inst_block(inst),
        };
        let block = block_of(tuple[0])?;
        if tuple.iter().any(|v| block_of(*v) != Some(block)) {
            return None;
        }
        let insts = layout.block_insts(block);
        let after_last_def = tuple
            .iter()
            .filter_map(|v| match dfg.value_def(*v) {
                ValueDef::Result(inst) => layout.inst_index(inst).map(|i| i + 1),
                ValueDef::Param(..) => None,
            })
            .max()
            .unwrap_or(0);
        let after_last_def = if Some(block) == self.func.entry_block() {
            // After the lane indices and undef vectors made at the top of the entry.
            after_last_def.max(layout.inst_index(self.entry_top).unwrap_or(0))
        } else {
            after_last_def
        };
        insts.get(after_last_def).copied()
    }

    /// The value of a constant instruction's result.
    fn constant_of(&self, value: Value) -> Option<Constant> {
        match self.func.dfg.value_def(value) {
            ValueDef::Result(inst) => match &self.func.dfg.insts[inst] {
                InstructionData::Const { value, .. } => Some(value.clone()),
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    fn insert_lane(&mut self, vector: Value, value: Value, lane: usize, anchor: Inst) -> Value {
        let ty = self.func.dfg.value_type(vector).clone();
        let index = self.lane_indices[lane];
        self.insert(InstructionData::InsertLane { vector, value, index }, ty, anchor)
    }

    fn extract(&mut self, vector: Value, lane: usize, anchor: Inst) -> Value {
        let ty = self.func.dfg.value_type(vector).lane_type().clone();
        let index = self.lane_indices[lane];
        self.insert(InstructionData::ExtractLane { vector, index }, ty, anchor)
    }

    fn insert(&mut self, data: InstructionData, ty: Type, anchor: Inst) -> Value {
        let inst = self.func.dfg.make_inst(data, Some(ty));
        self.func.layout.insert_inst_before(inst, anchor);
        self.func.dfg.inst_result(inst).expect("made with a result")
    }

    /// Lane indices at the top of the entry block, where they dominate every use.
    fn make_lane_indices(&mut self) {
        let top = self.entry_top;
        for lane in 0..self.width {
            let data = InstructionData::Const { ty: Type::I32, value: Constant::Int(lane as u128) };
            let index = self.insert(data, Type::I32, top);
            self.lane_indices.push(index);
        }
    }

    /// The `undef` vector of a type, made at the top of the entry block the first time.
    fn undef_vector(&mut self, ty: &Type) -> Value {
        if let Some(undef) = self.undef_vectors.get(ty) {
            return *undef;
        }
        let data = InstructionData::Const { ty: ty.clone(), value: Constant::Undef };
        let undef = self.insert(data, ty.clone(), self.entry_top);
        self.undef_vectors.insert(ty.clone(), undef);
        undef
    }

    /// `d.x` in lane 0 names the vector `dv.x`.
    fn name_like(&mut self, vector: Value, lane0: Value) {
        if let Some(name) = self.func.dfg.value_name(lane0) {
            let name = match name.strip_prefix("d.") {
                Some(rest) => format!("dv.{rest}"),
                None => format!("{name}.v"),
            };
            self.func.dfg.set_value_name(vector, &name);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;
    use adc_ir::{InstructionData, Module, Type};

    use crate::forward::{synthesize_forward_with, ForwardOptions};
    use crate::{ArgActivity, DiffMode, DiffRequest, RetActivity};

    /// A loop with a lane-independent libm call, a select and a memory round trip.
    const SOURCE: &str = "declare @exp(f64) -> f64\n\
        func @f(%x: f64, %p: ptr, %n: i32) -> f64 {\n\
        ^entry:\n  %zero = const i32 0\n  %z = const f64 0.0\n  jump ^head(%zero, %z)\n\
        ^head(%i: i32, %acc: f64):\n  %more = icmp slt i32 %i, %n\n  brif %more, ^body, ^exit\n\
        ^body:\n  %e = call @exp(%acc)\n  %m = fmul f64 %e, %x\n  %y = load f64, %p, align 8\n\
          %big = fcmp ogt f64 %m, %y\n  %s = select f64 %big, %m, %y\n\
          %acc2 = fadd f64 %s, %x\n  store %acc2, %p, align 8\n  %one = const i32 1\n\
          %i2 = add i32 %i, %one\n  jump ^head(%i2, %acc2)\n\
        ^exit:\n  ret %acc\n}\n";

    fn derive(width: u32, lane_packing: bool) -> Module {
        let mut module = parse_module(SOURCE).expect("parses");
        let request = DiffRequest {
            function: module.function_by_name("f").expect("f"),
            mode: DiffMode::Forward,
            args: vec![ArgActivity::Dup, ArgActivity::Dup, ArgActivity::Const],
            ret: RetActivity::Dup,
            width,
        };
        let options = ForwardOptions { lane_packing };
        synthesize_forward_with(
            &mut module,
            &request,
            "f.fwd",
            &mut HashMap::new(),
            &mut Default::default(),
            options,
        )
        .expect("synthesis");
        adc_ir::verify::verify_module(&module).expect("verifies");
        module
    }

    /// Runs `f.fwd` at x = 0.3 (shadow k+1 in lane k), with p -> 0.5 (shadow -k in lane
    /// k); returns the result and the final primal and shadow memory.
    fn run(module: &Module, width: usize) -> (Option<Val>, Vec<Vec<Val>>) {
        let mut interp = Interpreter::new(module).expect("interpreter");
        let mut args = vec![Val::F64(0.3)];
        args.extend((0..width).map(|k| Val::F64(k as f64 + 1.0)));
        let mut buffers = vec![interp.alloc(&Type::F64, &[Val::F64(0.5)]).expect("alloc")];
        for k in 0..width {
            buffers.push(interp.alloc(&Type::F64, &[Val::F64(-(k as f64))]).expect("alloc"));
        }
        args.extend(buffers.iter().cloned());
        args.push(Val::Int(3));
        let f = module.function_by_name("f.fwd").expect("derivative");
        let result = interp.call(f, &args).expect("runs");
        let memory = buffers.iter().map(|b| interp.read(b, &Type::F64, 1).expect("read")).collect();
        (result, memory)
    }

    fn vector_insts(module: &Module) -> usize {
        let f = &module.functions[module.function_by_name("f.fwd").expect("derivative")];
        f.layout
            .insts()
            .filter(|(_, i)| {
                let data = f.inst(*i);
                !matches!(data, InstructionData::Const { .. })
                    && f.dfg.inst_result(*i).is_some_and(|r| {
                        matches!(f.dfg.value_type(r), Type::Vector(..))
                            && !matches!(
                                data,
                                InstructionData::InsertLane { .. }
                                    | InstructionData::Shuffle { .. }
                            )
                    })
            })
            .count()
    }

    #[test]
    fn packing_is_exact_and_packs_the_tangent_arithmetic() {
        for width in [2, 3, 4, 8] {
            let packed = derive(width, true);
            let unpacked = derive(width, false);
            assert_eq!(
                run(&packed, width as usize),
                run(&unpacked, width as usize),
                "width {width}"
            );
            assert_eq!(vector_insts(&unpacked), 0);
            // fmul and fadd of the loop-carried tangent, the exp-scaled product, the
            // select: at least four vector operations.
            assert!(vector_insts(&packed) >= 4, "width {width}: {}", vector_insts(&packed));
        }
    }

    #[test]
    fn lanes_match_width_one() {
        let (packed, memory) = run(&derive(4, true), 4);
        let Some(Val::Aggregate(fields)) = packed else { panic!("a struct result") };
        for lane in 0..4 {
            let mut single = parse_module(SOURCE).expect("parses");
            let request = DiffRequest {
                function: single.function_by_name("f").expect("f"),
                mode: DiffMode::Forward,
                args: vec![ArgActivity::Dup, ArgActivity::Dup, ArgActivity::Const],
                ret: RetActivity::Dup,
                width: 1,
            };
            crate::forward::synthesize_forward(&mut single, &request, "f.fwd").expect("width 1");
            let mut interp = Interpreter::new(&single).expect("interpreter");
            let p = interp.alloc(&Type::F64, &[Val::F64(0.5)]).expect("alloc");
            let dp = interp.alloc(&Type::F64, &[Val::F64(-(lane as f64))]).expect("alloc");
            let args = [Val::F64(0.3), Val::F64(lane as f64 + 1.0), p, dp.clone(), Val::Int(3)];
            let f = single.function_by_name("f.fwd").expect("derivative");
            let Some(Val::Aggregate(one)) = interp.call(f, &args).expect("runs") else {
                panic!("a pair")
            };
            assert_eq!(fields[lane + 1], one[1], "lane {lane}");
            assert_eq!(memory[lane + 1], interp.read(&dp, &Type::F64, 1).expect("read"));
        }
    }
}
