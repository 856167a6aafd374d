//! `dse`: dead-store elimination. Two kinds of stores are removed:
//!
//! - **overwritten**: a non-volatile store whose bytes a later store (or constant-length
//!   `memset`) overwrites entirely before anything may read them. The search walks forward
//!   through the store's block and on along a straight-line chain (a `jump` to a block
//!   whose only predecessor is the current one), at most `SCAN_LIMIT` instructions. It stops
//!   at any instruction that may read the location (`AliasAnalysis::mod_ref`: loads, copies,
//!   calls that may read it), at a volatile or atomic access, at a call that may not return
//!   unless the location is a private alloca (code after a non-returning call, or an
//!   unwinding one, could otherwise observe it), and at any other terminator;
//! - **storing what is there**: a non-volatile store of a value just loaded (non-volatile,
//!   same type) from the same pointer, earlier in the same block, with no instruction in
//!   between that may write the location: memory already holds those bytes. (The reverse
//!   pass of an in-place update `out[i] = out[i] + t` leaves `store (load p), p` behind.)
//! - **never read again**: a non-volatile store, `memset` or `memcpy` into an alloca whose
//!   address never escapes, when no instruction that may read those bytes is reachable
//!   from it (later in its block, or in any block reachable from there, loops included).
//!   Nothing outside the function can read such memory, and it dies with the frame.
//!
//! Must not fire: a call or load that may read the location in between, a volatile store,
//! a store to an escaped alloca or to memory the caller can see (a parameter's, a global's)
//! that is not overwritten.
//!
//! Statistics: "stores removed" (all), "overwritten stores", "stores of the loaded value",
//! "stores never read".

use std::collections::HashSet;

use adc_ir::{Block, Diagnostic, Function, Inst, InstructionData, Module, ValueDef};

use crate::alias::{const_i64, decompose, AliasAnalysis, MemLoc};
use crate::cfg::ControlFlowGraph;
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};

/// How many instructions the overwrite search looks at after one store.
pub const SCAN_LIMIT: usize = 256;

pub struct Dse;

impl Pass for Dse {
    fn name(&self) -> &'static str {
        "dse"
    }
}

impl FunctionPass for Dse {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let aa = cx.analysis::<AliasAnalysis>(func);
        let cfg = cx.analysis::<ControlFlowGraph>(func);
        let module = cx.module;
        let mut dead: Vec<Inst> = Vec::new();
        let mut overwritten = 0u64;
        let mut reloaded = 0u64;
        let mut never_read = 0u64;
        // Decide on the unchanged function, then remove: a removed store never justifies
        // removing another (each decision looks only at readers and overwriting stores,
        // and a dead store is neither a reader nor needed as an overwrite of a kept one).
        for (block, inst) in func.layout.insts() {
            let Some(loc) = written_location(func, inst) else { continue };
            if is_plain_store(func, inst)
                && overwritten_later(module, func, &aa, &cfg, block, inst, &loc)
            {
                dead.push(inst);
                overwritten += 1;
            } else if stores_loaded_value(module, func, &aa, block, inst, &loc) {
                dead.push(inst);
                reloaded += 1;
            } else if aa.is_private(module, func, &loc)
                && !read_later(module, func, &aa, &cfg, block, inst, &loc)
            {
                dead.push(inst);
                never_read += 1;
            }
        }
        for &inst in &dead {
            func.layout.remove_inst(inst);
        }
        cx.stats.add("stores removed", dead.len() as u64);
        cx.stats.add("overwritten stores", overwritten);
        cx.stats.add("stores of the loaded value", reloaded);
        cx.stats.add("stores never read", never_read);
        Ok(if dead.is_empty() { PreservedAnalyses::All } else { PreservedAnalyses::Cfg })
    }
}

/// The bytes a non-volatile store, `memset` or `memcpy` writes (`size: None` when the
/// length is not a constant).
fn written_location(func: &Function, inst: Inst) -> Option<MemLoc> {
    let len = |v| const_i64(func, v).and_then(|n| u64::try_from(n).ok());
    match &func.dfg.insts[inst] {
        InstructionData::Store { volatile: false, .. } => MemLoc::of_access(func, inst),
        InstructionData::MemSet { dst, len: n, volatile: false, .. }
        | InstructionData::MemCopy { dst, len: n, volatile: false, .. } => {
            Some(MemLoc::new(*dst, len(*n)))
        }
        _ => None,
    }
}

fn is_plain_store(func: &Function, inst: Inst) -> bool {
    matches!(func.dfg.insts[inst], InstructionData::Store { volatile: false, .. })
}

/// Whether `store` (writing `loc`) stores the value a load of the same pointer and type
/// read earlier in `block`, with nothing in between that may write `loc`.
fn stores_loaded_value(
    module: &Module,
    func: &Function,
    aa: &AliasAnalysis,
    block: Block,
    store: Inst,
    loc: &MemLoc,
) -> bool {
    let InstructionData::Store { value, ptr, volatile: false, .. } = func.dfg.insts[store] else {
        return false;
    };
    let ValueDef::Result(load) = func.dfg.value_def(value) else { return false };
    let InstructionData::Load { ptr: loaded_from, volatile: false, ref ty, .. } =
        func.dfg.insts[load]
    else {
        return false;
    };
    if loaded_from != ptr || *ty != *func.dfg.value_type(value) {
        return false;
    }
    if func.layout.inst_block(load) != Some(block) {
        return false;
    }
    let insts = func.layout.block_insts(block);
    let (Some(from), Some(to)) =
        (insts.iter().position(|&i| i == load), insts.iter().position(|&i| i == store))
    else {
        return false;
    };
    from < to
        && insts[from + 1..to].iter().all(|&between| {
            // Another thread may write the location between synchronizing accesses.
            let synchronizes = matches!(
                func.dfg.insts[between],
                InstructionData::AtomicRmw { .. }
                    | InstructionData::CmpXchg { .. }
                    | InstructionData::Fence { .. }
            );
            !synchronizes && !aa.mod_ref(module, func, between, loc).may_write()
        })
}

/// Whether `later` (a store or constant-length memset) writes every byte of `loc`.
fn covers(module: &Module, func: &Function, later: Inst, loc: &MemLoc) -> bool {
    let Some(size) = loc.size else { return false };
    let Some(cover) = written_location(func, later) else { return false };
    if matches!(func.dfg.insts[later], InstructionData::MemCopy { .. }) {
        return false; // a copy may read the very bytes it is about to overwrite
    }
    let Some(cover_size) = cover.size else { return false };
    let (base, offset) = decompose(module, func, loc.ptr);
    let (cover_base, cover_offset) = decompose(module, func, cover.ptr);
    if loc.ptr == cover.ptr {
        return cover_size >= size;
    }
    match (offset, cover_offset) {
        (Some(o), Some(c)) if base == cover_base => {
            let (o, c) = (i128::from(o), i128::from(c));
            c <= o && o + i128::from(size) <= c + i128::from(cover_size)
        }
        _ => false,
    }
}

/// The forward search for an overwrite of `loc` before any possible read.
fn overwritten_later(
    module: &Module,
    func: &Function,
    aa: &AliasAnalysis,
    cfg: &ControlFlowGraph,
    block: Block,
    store: Inst,
    loc: &MemLoc,
) -> bool {
    let private = aa.is_private(module, func, loc);
    let mut block = block;
    let mut insts: Vec<Inst> = func.layout.block_insts(block).to_vec();
    let mut position = insts.iter().position(|&i| i == store).map_or(insts.len(), |p| p + 1);
    let mut seen: HashSet<Block> = HashSet::from([block]);
    for _ in 0..SCAN_LIMIT {
        let Some(&inst) = insts.get(position) else { return false };
        position += 1;
        let data = &func.dfg.insts[inst];
        if covers(module, func, inst, loc) {
            return true;
        }
        if let InstructionData::Jump { dest } = data {
            // Straight-line continuation: the successor is entered only from here.
            let next = dest.block;
            if cfg.preds(next) != [block] || !seen.insert(next) {
                return false;
            }
            block = next;
            insts = func.layout.block_insts(block).to_vec();
            position = 0;
            continue;
        }
        if data.is_terminator() {
            return false;
        }
        let effect = aa.mod_ref(module, func, inst, loc);
        if effect.may_read() {
            return false;
        }
        let ordered = matches!(
            data,
            InstructionData::Load { volatile: true, .. }
                | InstructionData::Store { volatile: true, .. }
                | InstructionData::MemSet { volatile: true, .. }
                | InstructionData::MemCopy { volatile: true, .. }
                | InstructionData::AtomicRmw { .. }
                | InstructionData::CmpXchg { .. }
                | InstructionData::Fence { .. }
        );
        if ordered {
            return false;
        }
        let may_not_return =
            matches!(data, InstructionData::Call { .. } | InstructionData::CallIndirect { .. })
                && aa.call_effects(module, data).may_not_return;
        if may_not_return && !private {
            return false;
        }
    }
    false
}

/// Whether an instruction that may read `loc` is reachable from just after `store`.
fn read_later(
    module: &Module,
    func: &Function,
    aa: &AliasAnalysis,
    cfg: &ControlFlowGraph,
    block: Block,
    store: Inst,
    loc: &MemLoc,
) -> bool {
    let reads = |inst: Inst| inst != store && aa.mod_ref(module, func, inst, loc).may_read();
    let insts = func.layout.block_insts(block);
    let after = insts.iter().position(|&i| i == store).map_or(insts.len(), |p| p + 1);
    if insts[after..].iter().any(|&i| reads(i)) {
        return true;
    }
    // Every block reachable from here, the store's own block included when a loop leads
    // back to it (then its instructions before the store run after it).
    let mut work: Vec<Block> = cfg.succs(block).to_vec();
    let mut seen: HashSet<Block> = HashSet::new();
    while let Some(b) = work.pop() {
        if !seen.insert(b) {
            continue;
        }
        if func.layout.block_insts(b).iter().any(|&i| reads(i)) {
            return true;
        }
        work.extend_from_slice(cfg.succs(b));
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::run_pass_on_text as run;

    #[test]
    fn a_store_overwritten_in_the_same_block_goes() {
        let (text, report) = run(
            "dse",
            "func @f(%p: ptr, %x: i64, %y: i64) {\n^e:\n  store %x, %p, align 8\n  store %y, %p, align 8\n  ret\n}\n",
        );
        assert_eq!(report.stat("dse", "overwritten stores"), 1, "{text}");
        assert!(!text.contains("store %x"), "{text}");
    }

    #[test]
    fn a_load_in_between_keeps_it() {
        let (text, report) = run(
            "dse",
            "func @f(%p: ptr, %x: i64, %y: i64) -> i64 {\n^e:\n  store %x, %p, align 8\n  %v = load i64, %p, align 8\n  store %y, %p, align 8\n  ret %v\n}\n",
        );
        assert_eq!(report.stat("dse", "stores removed"), 0, "{text}");
    }
}
