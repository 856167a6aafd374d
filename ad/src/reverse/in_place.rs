//! In-place updates: a primal `x = load p; ...; store f(x), p` in one block, with nothing
//! in between touching `p`'s location (`out[j] = out[j] + t`, `acc[i] *= s`).
//!
//! The reverse of the store reads the shadow at `p` into the stored value's adjoint and
//! zeroes it; the reverse of the load then adds the load's adjoint into that zero. For
//! such a pair the zeroing store is dropped and the load's reverse stores its adjoint
//! instead of accumulating it: one load and one store of the shadow instead of two loads,
//! two stores and an addition, and for `out[j] = out[j] + t`, whose load adjoint is the
//! shadow value itself, a `store (load q), q` that `dse` removes.
//!
//! Sound because nothing between the two instructions reads or writes the location, so
//! no reverse instruction between the two adjoints touches the shadow there: the shadow
//! holds zero after the store's adjoint and the load's adjoint plus zero after the load's
//! (only the sign of a zero result may differ: `+0.0 + -0.0` is `+0.0`). Calls, copies,
//! fills and atomics in between disqualify a pair (their reverse may touch any shadow they
//! can reach). Only for floats and float vectors (an aggregate's shadow also holds pointer
//! shadows the adjoint lacks), and only for sequential code: in a GPU kernel other threads may accumulate into
//! the shadow between the two adjoints.

use std::collections::{HashMap, HashSet};

use adc_ir::{Function, Inst, InstructionData, Module, Type};
use adc_passes::alias::{AliasAnalysis, MemLoc, ModRef};

/// The in-place update pairs of a primal function.
#[derive(Default)]
pub(crate) struct InPlace {
    /// Store → the load of the same pointer whose value it updates.
    pub stores: HashMap<Inst, Inst>,
    /// The loads of `stores`' pairs.
    pub loads: HashSet<Inst>,
}

pub(crate) fn in_place_updates(module: &Module, func: &Function, alias: &AliasAnalysis) -> InPlace {
    let mut pairs = InPlace::default();
    for &block in func.layout.blocks() {
        let insts = func.layout.block_insts(block);
        // The loads whose location nothing has touched since.
        let mut open: Vec<(Inst, MemLoc)> = Vec::new();
        for &inst in insts {
            let data = &func.dfg.insts[inst];
            let Some(loc) = MemLoc::of_access(func, inst) else {
                if touches_memory(data) {
                    open.clear();
                }
                continue;
            };
            // A load or a store: it closes every open load it may touch, except its pair.
            let pair = match data {
                InstructionData::Store { value, ptr, volatile: false, .. } => {
                    open.iter().position(|(load, _)| {
                        let InstructionData::Load { ptr: from, ref ty, .. } = func.dfg.insts[*load]
                        else {
                            return false;
                        };
                        from == *ptr && *ty == *func.dfg.value_type(*value) && all_float(ty)
                    })
                }
                _ => None,
            };
            if let Some(k) = pair {
                let (load, _) = open.remove(k);
                pairs.stores.insert(inst, load);
                pairs.loads.insert(load);
            }
            open.retain(|(_, open_loc)| {
                alias.mod_ref(module, func, inst, open_loc) == ModRef::NoModRef
            });
            if let InstructionData::Load { volatile: false, .. } = data {
                open.push((inst, loc));
            }
        }
    }
    pairs
}

/// Floats or float vectors: the whole shadow value is the adjoint (an aggregate's shadow
/// also carries pointer shadows, which the adjoint does not).
fn all_float(ty: &Type) -> bool {
    ty.lane_type().is_float()
}

/// Instructions without a single known memory location whose reverse may touch shadow
/// memory: calls, copies, fills, atomics, fences, and loads of an unknown location.
fn touches_memory(data: &InstructionData) -> bool {
    (data.has_side_effects() && !data.is_terminator())
        || matches!(data, InstructionData::Load { .. })
}
