//! Memory seen through computed addresses: how the facts of an object map to those of
//! an element when a pointer moves by a constant, by `stride * i` (an array, folded modulo
//! the stride) or by `stride * i + phase` (a field of an array of records), and the
//! facts that hold at every offset.

use adc_ir::{BinaryOp, CastOp, Function, InstructionData, Value, ValueDef};

use super::{BaseType, Step, TypeTree};

/// `offset` as `stride * i + phase` for some integer `i`: `(stride, phase)` with the
/// largest stride visible (`8` for `i * 8`, `16` and phase `8` for the second field of a
/// 16-byte record, `i * 16 + 8`), `phase` in `[0, stride)`; `None` when nothing is known.
/// A stride of 0 is the constant `phase` itself (inside sums only).
pub(super) fn offset_pattern(func: &Function, offset: Value, depth: u32) -> Option<(u64, i128)> {
    if depth > 8 {
        return None;
    }
    if let Some(c) = func.dfg.const_int(offset) {
        return Some((0, c));
    }
    let ValueDef::Result(inst) = func.dfg.value_def(offset) else { return None };
    let normalized = |stride: u64, phase: i128| match stride {
        0 => (0, phase),
        s => (s, phase.rem_euclid(i128::from(s))),
    };
    match func.inst(inst) {
        InstructionData::Binary { op: BinaryOp::Mul, args, .. } => {
            // A product is a multiple of each factor's stride (or constant).
            let factor = |v: Value| match offset_pattern(func, v, depth + 1) {
                Some((0, c)) => u64::try_from(c.unsigned_abs()).unwrap_or(1).max(1),
                Some((s, _)) => s,
                None => 1,
            };
            let stride = factor(args[0]).saturating_mul(factor(args[1]));
            (stride > 1).then_some((stride, 0))
        }
        InstructionData::Binary { op: BinaryOp::Shl, args, .. } => {
            let shift = func.dfg.const_int(args[1])?;
            (0..63).contains(&shift).then(|| (1u64 << shift, 0))
        }
        InstructionData::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub), args, .. } => {
            let (sa, pa) = offset_pattern(func, args[0], depth + 1)?;
            let (sb, pb) = offset_pattern(func, args[1], depth + 1)?;
            let phase = if *op == BinaryOp::Add { pa + pb } else { pa - pb };
            Some(normalized(gcd(sa, sb), phase))
        }
        InstructionData::Cast { op: CastOp::Sext | CastOp::Zext, arg, .. } => {
            offset_pattern(func, *arg, depth + 1)
        }
        _ => None,
    }
}

/// Moves every concrete first-step offset `o` (below `stride`) to `(o + delta) mod stride`:
/// the residues of an array of `stride`-byte elements seen from `phase` bytes into one.
pub(super) fn rotated(memory: &TypeTree, delta: i128, stride: u64) -> TypeTree {
    let mut out = TypeTree::new();
    for (path, base) in memory.entries() {
        let mut path = path.to_vec();
        if let Step::Offset(o) = path[0] {
            let moved = (i128::from(o) + delta).rem_euclid(i128::from(stride));
            path[0] = Step::Offset(moved as u64);
        }
        out.insert(path, base);
    }
    out
}

pub(super) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The facts of `memory` that hold at every offset.
pub(super) fn only_any(memory: &TypeTree) -> TypeTree {
    let mut out = TypeTree::new();
    for (path, base) in memory.entries() {
        if path[0] == Step::Any {
            out.insert(path.to_vec(), base);
        }
    }
    out
}

/// Most elements of an array in an object whose facts are laid out one by one (beyond it,
/// facts at every element stand for them: `Any`).
pub(super) const MAX_SPREAD_ELEMENTS: u64 = 64;

/// The facts of `memory` in `[start, end)`, and those that hold at every offset.
pub(super) fn within(memory: &TypeTree, start: u64, end: u64) -> TypeTree {
    let mut inside = TypeTree::new();
    for (path, base) in memory.entries() {
        let keep = match path[0] {
            Step::Offset(o) => (start..end).contains(&o),
            Step::Any => true,
        };
        if keep {
            inside.insert(path.to_vec(), base);
        }
    }
    inside
}

/// The facts of one element of an array of `stride`-byte elements at `[start, end)` (the
/// memory behind `base + start + stride * i`, folded modulo `stride`), laid out at every
/// element of the range; `None` past [`MAX_SPREAD_ELEMENTS`].
pub(super) fn spread(element: &TypeTree, stride: u64, start: u64, end: u64) -> Option<TypeTree> {
    if stride == 0 || end <= start || (end - start) / stride > MAX_SPREAD_ELEMENTS {
        return None;
    }
    let mut out = TypeTree::new();
    for (path, base) in element.entries() {
        // A fact at every offset of the element holds at every offset of the range.
        let residues: Vec<u64> = match path[0] {
            Step::Offset(o) => vec![o % stride],
            Step::Any => (0..stride).step_by(base_size(base).max(1) as usize).collect(),
        };
        for residue in residues {
            let first = start + (residue + stride - start % stride) % stride;
            let mut at = first;
            while at < end {
                let mut moved = path.to_vec();
                moved[0] = Step::Offset(at);
                out.insert(moved, base);
                at += stride;
            }
        }
    }
    Some(out)
}

/// Bytes of a scalar of this base type (pointers and unknown integers: 8).
fn base_size(base: BaseType) -> u64 {
    match base {
        BaseType::Float(kind) => kind.size(),
        _ => 8,
    }
}

/// Folds the memory of an array of `stride`-byte elements onto one element (offsets
/// modulo `stride`). With `widen`, an element holding one scalar that fills it (a
/// `double` every 8 bytes) becomes a fact at every offset (`-1`), the array form.
pub(super) fn modulo(memory: &TypeTree, stride: u64, widen: bool) -> TypeTree {
    let mut folded = TypeTree::new();
    for (path, base) in memory.entries() {
        let mut path = path.to_vec();
        if let Step::Offset(o) = path[0] {
            path[0] = Step::Offset(o % stride);
        }
        folded.insert(path, base);
    }
    if !widen {
        return folded;
    }
    let scalars: Vec<(Step, BaseType)> =
        folded.top_level().entries().map(|(path, base)| (path[0], base)).collect();
    let fills = match scalars.as_slice() {
        [(Step::Offset(0), BaseType::Float(kind))] => kind.size() == stride,
        [(Step::Offset(0), BaseType::Pointer)] => stride == 8,
        [(Step::Offset(0), BaseType::Integer)] => stride <= 8,
        _ => false,
    };
    if fills {
        folded.at_any_offset()
    } else {
        folded
    }
}
