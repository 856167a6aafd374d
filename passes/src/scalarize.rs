//! `scalarize`: splits every vector value of a function into its lanes, one scalar value
//! per lane, so that a `<2 x f64>` load becomes two `f64` loads, a shuffle a choice of
//! lanes, a reduction a chain of scalar operations.
//!
//! Reverse mode differentiates what it is given. From clang -O2's vectorized loops it
//! would build adjoints of whole vectors: vector tapes, shuffles and their transposes,
//! lane inserts and extracts kept alive across the reverse sweep, which measured 1.6x
//! slower on the GMM gradient than the same source compiled without vectorization. The
//! Enzyme API lowering therefore differentiates a scalarized copy of a vectorized
//! function (`enzyme_api::scalar_copy`); the primal keeps its vectors, and the post-AD
//! `vectorize` pass packs simple loops of the derivative again.
//!
//! All or nothing: a function is rewritten only when every instruction touching a vector
//! has a lane-wise form (element-wise arithmetic, compares, selects, same-width casts,
//! non-volatile loads and stores of byte-sized lanes, constant-index lane inserts and
//! extracts, shuffles, reductions) and no parameter or result of the function is a
//! vector. Anything else (calls taking vectors, lane-changing bitcasts, dynamic lane
//! indices, vectors of pointers offset by `ptradd`) leaves the function as it was.
//!
//! Lane `i` of a load or store addresses `ptr + i * size(lane)` with the alignment that
//! offset keeps, and the lane access carries the vector access's TBAA type. An ordered
//! reduction (`reduce.fadd` without `reassoc`) folds the lanes left to right from its
//! start value, exactly as the vector instruction is defined; a reduction without a
//! start begins from lane 0.
//!
//! Statistics: "functions scalarized", "vector instructions split".

use std::collections::HashMap;

use adc_ir::{
    Block, BlockCall, Constant, Diagnostic, Function, Inst, InstFlags, InstructionData, Type, Value,
};

use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::{pred_edges, remove_block_params};

/// Widest vector split (lanes); wider ones leave the function as it is.
pub const MAX_LANES: u32 = 16;

pub struct Scalarize;

impl Pass for Scalarize {
    fn name(&self) -> &'static str {
        "scalarize"
    }
}

impl FunctionPass for Scalarize {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let split = scalarize(func);
        if split == 0 {
            return Ok(PreservedAnalyses::All);
        }
        cx.stats.add("functions scalarized", 1);
        cx.stats.add("vector instructions split", split as u64);
        cx.invalidate(PreservedAnalyses::None);
        Ok(PreservedAnalyses::None)
    }
}

/// How `func` computes with vectors of floats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FloatVectorCensus {
    /// Instructions that produce or consume a vector of floats.
    pub instructions: usize,
    /// Of those, the lane moves: `insertlane`, `extractlane` and `shuffle`.
    pub lane_moves: usize,
}

/// Counts the instructions of `func` that produce or consume vectors of floats, and the
/// lane moves among them: loop-vectorized code is mostly vector loads, stores and
/// arithmetic, while straight-line (SLP) vectorization builds its vectors lane by lane.
pub fn float_vector_census(func: &Function) -> FloatVectorCensus {
    let float_vector = |v: Value| {
        let ty = func.dfg.value_type(v);
        ty.is_vector() && ty.lane_type().is_float()
    };
    let mut census = FloatVectorCensus::default();
    for (_, inst) in func.layout.insts() {
        let data = &func.dfg.insts[inst];
        if func.dfg.inst_result(inst).is_some_and(float_vector)
            || data.args().into_iter().any(float_vector)
        {
            census.instructions += 1;
            if matches!(
                data,
                InstructionData::InsertLane { .. }
                    | InstructionData::ExtractLane { .. }
                    | InstructionData::Shuffle { .. }
            ) {
                census.lane_moves += 1;
            }
        }
    }
    census
}

/// Splits every vector of `func` into lanes when all of them can be (see the module
/// documentation); returns how many vector instructions were replaced (0: unchanged).
pub fn scalarize(func: &mut Function) -> usize {
    if !can_scalarize(func) {
        return 0;
    }
    let Some(domtree) = adc_ir::dominance::DomTree::for_function(func) else { return 0 };
    // Unreachable blocks are never split (only reachable ones are visited in order), so
    // their vector uses would outlive the vector definitions removed below.
    if domtree.rpo().len() != func.layout.blocks().len() {
        return 0;
    }
    let mut lanes: HashMap<Value, Vec<Value>> = HashMap::new();
    // Block parameters first: a loop header's lanes are used before its back edge is seen.
    let blocks: Vec<Block> = func.layout.blocks().to_vec();
    for &block in &blocks {
        for param in func.dfg.block_params(block).to_vec() {
            let ty = func.dfg.value_type(param).clone();
            if ty.is_vector() {
                let split = (0..ty.lanes())
                    .map(|_| func.dfg.append_block_param(block, lane(&ty)))
                    .collect();
                lanes.insert(param, split);
            }
        }
    }
    let mut replaced = Vec::new();
    for &block in domtree.rpo() {
        for inst in func.layout.block_insts(block).to_vec() {
            if split_instruction(func, inst, &mut lanes) {
                replaced.push(inst);
            }
        }
    }
    // Edges pass lanes to the new parameters; then the vector parameters go.
    for &block in &blocks {
        let Some(term) = func.terminator(block) else { continue };
        let mut data = func.dfg.insts[term].clone();
        for call in data.branch_targets_mut() {
            extend_with_lanes(func, call, &lanes);
        }
        func.dfg.insts[term] = data;
    }
    let preds = pred_edges::<std::collections::hash_map::RandomState>(func);
    for &block in &blocks {
        let edges = preds.get(&block).cloned().unwrap_or_default();
        let keep = |_: usize, v: Value| !lanes.contains_key(&v);
        remove_block_params(func, block, &edges, &keep);
    }
    for &inst in &replaced {
        func.layout.remove_inst(inst);
    }
    replaced.len()
}

fn lane(ty: &Type) -> Type {
    ty.lane_type().clone()
}

/// Appends, for each vector argument of `call`, its lanes (the block's new parameters come
/// in the same order as its vector parameters).
fn extend_with_lanes(func: &Function, call: &mut BlockCall, lanes: &HashMap<Value, Vec<Value>>) {
    let params = func.dfg.block_params(call.block);
    let mut extra = Vec::new();
    for (arg, param) in call.args.iter().zip(params) {
        if lanes.contains_key(param) {
            extra.extend(lanes.get(arg).cloned().unwrap_or_default());
        }
    }
    call.args.extend(extra);
}

/// Whether every vector in `func` has a lane-wise form.
fn can_scalarize(func: &Function) -> bool {
    let vector = |v: Value| func.dfg.value_type(v).is_vector();
    let narrow_enough = |ty: &Type| !ty.is_vector() || (ty.lanes() <= MAX_LANES && ty.lanes() > 0);
    let mut any = false;
    if func.params().iter().any(|&p| vector(p))
        || func.signature.ret.as_ref().is_some_and(Type::is_vector)
    {
        return false;
    }
    for &block in func.layout.blocks() {
        for &param in func.dfg.block_params(block) {
            if !narrow_enough(func.dfg.value_type(param)) {
                return false;
            }
        }
        for &inst in func.layout.block_insts(block) {
            let data = &func.dfg.insts[inst];
            let result = func.dfg.inst_result(inst);
            let touches = result.is_some_and(vector) || data.args().into_iter().any(vector);
            if !touches {
                continue;
            }
            any = true;
            if result.is_some_and(|r| !narrow_enough(func.dfg.value_type(r))) {
                return false;
            }
            if !lane_wise(func, data) {
                return false;
            }
        }
    }
    any
}

/// Whether an instruction that touches vectors has a lane-wise form.
fn lane_wise(func: &Function, data: &InstructionData) -> bool {
    let ty = |v: Value| func.dfg.value_type(v);
    let const_index = |v: Value| crate::ivs::const_int(func, v).is_some_and(|i| i >= 0);
    let byte_lanes = |t: &Type| t.lane_type().scalar_bits().is_some_and(|b| b % 8 == 0);
    match data {
        InstructionData::Const { ty, value } => match value {
            Constant::Elements(elements) => elements.len() == ty.lanes() as usize,
            Constant::Zero | Constant::Undef | Constant::Poison => true,
            _ => false,
        },
        InstructionData::Unary { .. }
        | InstructionData::Binary { .. }
        | InstructionData::Fma { .. }
        | InstructionData::Icmp { .. }
        | InstructionData::Fcmp { .. }
        | InstructionData::Select { .. } => {
            let lanes: Vec<u32> = data
                .args()
                .into_iter()
                .filter(|a| ty(*a).is_vector())
                .map(|a| ty(a).lanes())
                .collect();
            lanes.windows(2).all(|w| w[0] == w[1])
        }
        InstructionData::Cast { arg, ty: to, .. } => {
            let from = ty(*arg);
            from.is_vector() && to.is_vector() && from.lanes() == to.lanes()
        }
        InstructionData::Load { ty: loaded, volatile, .. } => !volatile && byte_lanes(loaded),
        InstructionData::Store { value, volatile, ptr, .. } => {
            !volatile && !ty(*ptr).is_vector() && byte_lanes(ty(*value))
        }
        InstructionData::ExtractLane { index, vector } => {
            const_index(*index)
                && crate::ivs::const_int(func, *index)
                    .is_some_and(|i| i < i128::from(ty(*vector).lanes()))
        }
        InstructionData::InsertLane { vector, index, .. } => {
            const_index(*index)
                && crate::ivs::const_int(func, *index)
                    .is_some_and(|i| i < i128::from(ty(*vector).lanes()))
        }
        InstructionData::Shuffle { args: [a, b], mask } => {
            let total = ty(*a).lanes() + ty(*b).lanes();
            mask.iter().all(|m| m.is_none_or(|k| k < total))
        }
        InstructionData::Reduce { args, .. } => {
            args.first().is_some_and(|v| ty(*v).is_vector())
                && args.iter().skip(1).all(|s| !ty(*s).is_vector())
        }
        // Terminators pass vectors along edges; the edges get the lanes.
        InstructionData::Jump { .. } | InstructionData::Brif { .. } => true,
        _ => false,
    }
}

/// Emits the lane-wise form of `inst` before it when it touches vectors; records the
/// lanes of a vector result, or redirects the uses of a scalar result. Returns whether
/// `inst` is to be removed.
fn split_instruction(
    func: &mut Function,
    inst: Inst,
    lanes: &mut HashMap<Value, Vec<Value>>,
) -> bool {
    let data = func.dfg.insts[inst].clone();
    let result = func.dfg.inst_result(inst);
    let result_ty = result.map(|r| func.dfg.value_type(r).clone());
    let is_vector = |v: &Value, func: &Function| func.dfg.value_type(*v).is_vector();
    let touches = result_ty.as_ref().is_some_and(Type::is_vector)
        || data.args().iter().any(|a| is_vector(a, func));
    if !touches || data.is_terminator() {
        return false;
    }
    let mut emit = |func: &mut Function, new: InstructionData, ty: Option<Type>| -> Option<Value> {
        let created = func.dfg.make_inst(new, ty);
        func.layout.insert_inst_before(created, inst);
        func.dfg.debug_locs[created] = func.dfg.debug_locs[inst].clone();
        func.dfg.tbaa[created] = func.dfg.tbaa[inst].clone();
        func.dfg.inst_result(created)
    };
    let lane_of = |func: &Function, lanes: &HashMap<Value, Vec<Value>>, v: Value, i: usize| {
        if is_vector(&v, func) {
            lanes[&v][i]
        } else {
            v
        }
    };
    let vector_ty = result_ty.clone().filter(Type::is_vector);
    let count = vector_ty.as_ref().map_or(0, |t| t.lanes() as usize);
    let elem = vector_ty.as_ref().map(lane);
    let mut out: Vec<Value> = Vec::with_capacity(count);
    match &data {
        InstructionData::Const { value, .. } => {
            let elem = elem.expect("a vector constant");
            for i in 0..count {
                let value = match value {
                    Constant::Elements(elements) => elements[i].clone(),
                    other => other.clone(),
                };
                out.extend(emit(
                    func,
                    InstructionData::Const { ty: elem.clone(), value },
                    Some(elem.clone()),
                ));
            }
        }
        InstructionData::Load { ty, ptr, align, volatile } => {
            let elem = lane(ty);
            for i in 0..ty.lanes() as usize {
                let (address, align) = lane_address(func, &mut emit, *ptr, *align, &elem, i);
                let load = InstructionData::Load {
                    ty: elem.clone(),
                    ptr: address,
                    align,
                    volatile: *volatile,
                };
                out.extend(emit(func, load, Some(elem.clone())));
            }
        }
        InstructionData::Store { value, ptr, align, volatile } => {
            let elem = lane(func.dfg.value_type(*value));
            for (i, &part) in lanes[value].iter().enumerate() {
                let (address, align) = lane_address(func, &mut emit, *ptr, *align, &elem, i);
                emit(
                    func,
                    InstructionData::Store {
                        value: part,
                        ptr: address,
                        align,
                        volatile: *volatile,
                    },
                    None,
                );
            }
        }
        InstructionData::ExtractLane { vector, index } => {
            let k = crate::ivs::const_int(func, *index).unwrap_or(0) as usize;
            let part = lanes[vector][k];
            func.dfg.replace_uses(result.expect("extract has a result"), part);
        }
        InstructionData::InsertLane { vector, value, index } => {
            let k = crate::ivs::const_int(func, *index).unwrap_or(0) as usize;
            out = lanes[vector].clone();
            out[k] = *value;
        }
        InstructionData::Shuffle { args: [a, b], mask } => {
            let elem = elem.expect("a shuffle makes a vector");
            let mut pool = lanes[a].clone();
            pool.extend(lanes[b].iter().copied());
            for m in mask {
                match m {
                    Some(k) => out.push(pool[*k as usize]),
                    None => {
                        let undef =
                            InstructionData::Const { ty: elem.clone(), value: Constant::Undef };
                        out.extend(emit(func, undef, Some(elem.clone())));
                    }
                }
            }
        }
        InstructionData::Reduce { op, flags, args } => {
            // `[vector]`, or `[vector, start]` for the ordered `fadd`/`fmul`.
            let vector = args[0];
            let parts = lanes[&vector].clone();
            let ty = lane(func.dfg.value_type(vector));
            let (mut acc, rest) = match args.get(1) {
                Some(start) if op.has_start() => (*start, &parts[..]),
                _ => (parts[0], &parts[1..]),
            };
            for &part in rest {
                let step = InstructionData::Binary {
                    op: op.binary_op(),
                    flags: *flags,
                    args: [acc, part],
                };
                acc = emit(func, step, Some(ty.clone())).expect("a binary has a result");
            }
            func.dfg.replace_uses(result.expect("a reduction has a result"), acc);
        }
        _ => {
            // Element-wise: unary, binary, fma, compares, select, casts.
            let elem = elem.expect("an element-wise vector instruction makes a vector");
            for i in 0..count {
                let mut lane_data = data.clone();
                lane_data.map_args(|a| lane_of(func, lanes, a, i));
                if let InstructionData::Cast { ty, .. } = &mut lane_data {
                    *ty = elem.clone();
                }
                out.extend(emit(func, lane_data, Some(elem.clone())));
            }
        }
    }
    if let (Some(r), true) = (result, vector_ty.is_some()) {
        debug_assert_eq!(out.len(), count);
        lanes.insert(r, out);
    }
    true
}

/// The address and alignment of lane `i` of a vector access at `ptr`.
fn lane_address(
    func: &mut Function,
    emit: &mut impl FnMut(&mut Function, InstructionData, Option<Type>) -> Option<Value>,
    ptr: Value,
    align: u32,
    elem: &Type,
    i: usize,
) -> (Value, u32) {
    if i == 0 {
        return (ptr, align);
    }
    let offset = elem.size() * i as u64;
    let constant =
        InstructionData::Const { ty: Type::I64, value: Constant::Int(u128::from(offset)) };
    let offset_value = emit(func, constant, Some(Type::I64)).expect("a const has a result");
    let add = InstructionData::PtrAdd { flags: InstFlags::INBOUNDS, ptr, offset: offset_value };
    let ptr_ty = func.dfg.value_type(ptr).clone();
    let address = emit(func, add, Some(ptr_ty)).expect("a ptradd has a result");
    // The largest power of two dividing both the vector's alignment and the offset.
    let lane_align = (u64::from(align.max(1)) | offset).trailing_zeros();
    (address, 1u32 << lane_align.min(31))
}
