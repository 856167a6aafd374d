//! Neighbour loads: loads of one block at constant element offsets from a *home* load of
//! the same pointer (`in[i-1]`, `in[i]`, `in[i+1]` of a stencil). When the lanes of a warp
//! hold consecutive elements, lane L's neighbour at offset c is lane L+c's home element,
//! so the reverse pass can hand the adjoint to that lane with a shuffle, which adds it to
//! the adjoint of its home element, instead of adding it atomically itself: the group's
//! atomics per lane drop to one (the home element's) plus those whose receiver falls
//! outside the warp. Whether a receiver exists is checked at run time by comparing
//! addresses, so the layout of lanes only decides how much is saved.

use std::collections::HashMap;

use adc_ir::{Function, Inst, InstructionData, Value, ValueDef};

/// A load of a neighbour group.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// The group's home load (offset 0); its shadow element collects the group's adjoints.
    pub home: Inst,
    /// This load's element, in elements from the home load's.
    pub offset: i32,
    /// The group's first load in the block, whose reverse comes last: after it, the
    /// collected adjoint is added to the home element.
    pub flush: bool,
}

/// Lanes a shuffle reaches: offsets of at most this many elements are exchanged.
const MAX_OFFSET: i64 = 31;

/// The neighbour groups among `candidates` (active loads whose shadow is shared by
/// threads): per block, loads of one scalar float type whose pointers are the same base
/// plus constant byte offsets that are multiples of the size, with a load of the base
/// itself as the home. Groups of one load are left out.
pub(crate) fn neighbor_groups(
    f: &Function,
    candidates: &[(Inst, Value)],
) -> HashMap<Inst, Neighbor> {
    // (block, root pointer, element size) -> [(load, byte offset)] in layout order
    let mut groups: HashMap<(adc_ir::Block, Value, u64), Vec<(Inst, i64)>> = HashMap::new();
    let position: HashMap<Inst, usize> =
        f.layout.insts().enumerate().map(|(i, (_, inst))| (inst, i)).collect();
    let mut ordered: Vec<(Inst, Value)> = candidates.to_vec();
    ordered.sort_by_key(|(inst, _)| position.get(inst).copied().unwrap_or(usize::MAX));
    for (load, ptr) in ordered {
        let Some(block) = f.layout.inst_block(load) else { continue };
        let Some(result) = f.dfg.inst_result(load) else { continue };
        let ty = f.dfg.value_type(result);
        if !ty.is_float() {
            continue;
        }
        let (root, bytes) = constant_offset(f, ptr);
        groups.entry((block, root, ty.size())).or_default().push((load, bytes));
    }
    let mut result = HashMap::new();
    for ((_, _, size), members) in groups {
        let Some(&(home, _)) = members.iter().find(|(_, bytes)| *bytes == 0) else { continue };
        let size = size as i64;
        let offsets: Vec<(Inst, i32)> = members
            .iter()
            .filter(|(_, bytes)| bytes % size == 0 && (bytes / size).abs() <= MAX_OFFSET)
            .map(|(load, bytes)| (*load, (bytes / size) as i32))
            .collect();
        if offsets.iter().filter(|(_, c)| *c != 0).count() == 0 {
            continue;
        }
        let first = offsets[0].0;
        for (load, offset) in offsets {
            result.insert(load, Neighbor { home, offset, flush: load == first });
        }
    }
    result
}

/// `ptr` as a root pointer plus a constant byte offset (through `ptradd`s of constants).
fn constant_offset(f: &Function, ptr: Value) -> (Value, i64) {
    let mut root = ptr;
    let mut bytes = 0i64;
    for _ in 0..16 {
        let ValueDef::Result(inst) = f.dfg.value_def(root) else { break };
        let InstructionData::PtrAdd { ptr, offset, .. } = f.dfg.insts[inst] else { break };
        let Some(c) = f.dfg.const_int(offset).and_then(|c| i64::try_from(c).ok()) else {
            break;
        };
        bytes = bytes.saturating_add(c);
        root = ptr;
    }
    (root, bytes)
}
