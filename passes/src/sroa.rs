//! `sroa`: scalar replacement of aggregates. An `alloca` of a small struct, array or vector
//! (at most `MAX_BYTES` bytes, arrays at most `MAX_ELEMENTS` elements) whose address is
//! only ever offset by constants and then loaded from, stored to, or used as one side of a
//! `memset`/`memcpy`/`memmove` of constant length, is replaced by one `alloca` per slice of
//! bytes those accesses use. Each slice is typed by its loads and stores, so `mem2reg` can
//! then promote it.
//!
//! Slices: every load or store covers a byte range `[offset, offset + size)`; two ranges
//! must be identical (the slice takes the first access's type) or disjoint. Bytes that only
//! `memset`/`memcpy` touch become `[n x i8]` slices, cut at every boundary of those ranges;
//! a `memset`/`memcpy` range must not cut through a typed slice. Such a byte slice of 1, 2,
//! 4, 8 or 16 bytes is typed as the integer of that size instead. A `memset` becomes a store
//! of `zeroinit` on each typed slice when its byte is the constant 0 (a `memset` of the
//! slice otherwise); a `memcpy` with the other side outside the alloca becomes, per typed
//! slice, a load and a store (what `mem2reg` understands: copying an uninitialized slice
//! becomes an undefined value, as with `mem2reg`'s uninitialized loads), and a `memcpy` per
//! byte slice.
//!
//! Must not fire (the alloca stays whole): the address, or an address derived from it, is
//! stored, passed to a call, cast, compared, selected, passed to a block, offset by a
//! non-constant, or used by a volatile or atomic access; an access reaches outside the
//! alloca; two accesses partially overlap; a `memcpy` has the alloca on both sides; a
//! dynamic element count.
//!
//! Statistics: "allocas split", "slices created".

use std::collections::{BTreeSet, HashMap};

use adc_ir::{Constant, Diagnostic, Function, Inst, InstFlags, InstructionData, Type, Value};

use crate::alias::const_i64;
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::insert_const_before;

/// The largest alloca split, in bytes.
pub const MAX_BYTES: u64 = 1024;
/// The most elements an array alloca may have to be split.
pub const MAX_ELEMENTS: u64 = 64;

pub struct Sroa;

impl Pass for Sroa {
    fn name(&self) -> &'static str {
        "sroa"
    }
}

impl FunctionPass for Sroa {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let candidates: Vec<Inst> = func
            .layout
            .insts()
            .map(|(_, inst)| inst)
            .filter(|&inst| match &func.dfg.insts[inst] {
                InstructionData::Alloca { ty, count: None, .. } => splittable_type(ty),
                _ => false,
            })
            .collect();
        let mut split = 0u64;
        let mut created = 0u64;
        // A split changes the uses of another alloca only through a `memcpy` with it (the
        // copy becomes loads and stores of the other side), so the use lists are rebuilt
        // after such a split alone: rebuilt for every candidate, they made the pass
        // quadratic. Other splits leave stale lists only for the split alloca's own
        // pointers, which no later candidate reaches.
        let mut users = users_of_values(func);
        for alloca in candidates {
            let Some(plan) = plan_split(func, alloca, &users) else { continue };
            created += plan.slices.len() as u64;
            split += 1;
            rewrite(func, alloca, &plan);
            if plan.accesses.iter().any(|a| matches!(a.what, Use::MemCopy { .. })) {
                users = users_of_values(func);
            }
        }
        cx.stats.add("allocas split", split);
        cx.stats.add("slices created", created);
        // Only instructions changed: no block or edge was added or removed.
        Ok(if split > 0 { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

fn splittable_type(ty: &Type) -> bool {
    let small = ty.size() > 0 && ty.size() <= MAX_BYTES;
    match ty {
        Type::Array(_, n) => small && *n <= MAX_ELEMENTS,
        Type::Struct(_) | Type::Vector(..) => small,
        _ => false,
    }
}

/// Every instruction that uses each value, once per use.
fn users_of_values(func: &Function) -> HashMap<Value, Vec<Inst>> {
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    for (_, inst) in func.layout.insts() {
        func.dfg.insts[inst].for_each_arg(|v| users.entry(v).or_default().push(inst));
    }
    users
}

/// How an instruction touches the alloca, at `offset` bytes from its start.
#[derive(Clone, Debug)]
enum Use {
    Load,
    Store,
    MemSet {
        len: u64,
    },
    /// `other` is the pointer on the other side of the copy.
    MemCopy {
        len: u64,
        into_alloca: bool,
        other: Value,
    },
}

#[derive(Clone, Debug)]
struct Access {
    inst: Inst,
    offset: u64,
    what: Use,
}

/// A slice of the alloca's bytes that becomes its own alloca.
#[derive(Clone, Debug)]
struct Slice {
    offset: u64,
    ty: Type,
    /// Only `memset`/`memcpy` touch it and no integer fits: an `[n x i8]`, copied and set
    /// with `memcpy`/`memset`.
    bytes: bool,
    align: u32,
}

impl Slice {
    fn end(&self) -> u64 {
        self.offset + self.ty.size()
    }
}

struct Plan {
    accesses: Vec<Access>,
    /// The `ptradd`s derived from the alloca, in the order found (users after definitions).
    derived: Vec<Inst>,
    slices: Vec<Slice>,
}

/// Collects the accesses and slices, or `None` when the alloca must stay whole.
fn plan_split(func: &Function, alloca: Inst, users: &HashMap<Value, Vec<Inst>>) -> Option<Plan> {
    let InstructionData::Alloca { ty, align, .. } = &func.dfg.insts[alloca] else { return None };
    let (total, base_align) = (ty.size(), *align);
    let addr = func.dfg.inst_result(alloca)?;
    let mut accesses: Vec<Access> = Vec::new();
    let mut derived: Vec<Inst> = Vec::new();
    let mut derived_values: Vec<Value> = vec![addr];
    let mut work: Vec<(Value, i64)> = vec![(addr, 0)];
    while let Some((value, offset)) = work.pop() {
        for &user in users.get(&value).map(Vec::as_slice).unwrap_or(&[]) {
            let in_bounds = |size: u64| {
                let start = u64::try_from(offset).ok()?;
                (start.checked_add(size)? <= total).then_some(start)
            };
            let access = |what: Use, at: u64| Access { inst: user, offset: at, what };
            match &func.dfg.insts[user] {
                InstructionData::PtrAdd { ptr, offset: by, .. } if *ptr == value => {
                    let next = offset.checked_add(const_i64(func, *by)?)?;
                    let result = func.dfg.inst_result(user)?;
                    derived.push(user);
                    derived_values.push(result);
                    work.push((result, next));
                }
                InstructionData::Load { ty, ptr, volatile: false, .. } if *ptr == value => {
                    accesses.push(access(Use::Load, in_bounds(ty.size())?));
                }
                InstructionData::Store { value: stored, ptr, volatile: false, .. }
                    if *ptr == value && *stored != value =>
                {
                    let size = func.dfg.value_type(*stored).size();
                    accesses.push(access(Use::Store, in_bounds(size)?));
                }
                InstructionData::MemSet { dst, byte, len, volatile: false }
                    if *dst == value && *byte != value && *len != value =>
                {
                    let len = u64::try_from(const_i64(func, *len)?).ok()?;
                    accesses.push(access(Use::MemSet { len }, in_bounds(len)?));
                }
                InstructionData::MemCopy { dst, src, len, volatile: false, .. }
                    if (*dst == value) != (*src == value) && *len != value =>
                {
                    let len = u64::try_from(const_i64(func, *len)?).ok()?;
                    let into_alloca = *dst == value;
                    let other = if into_alloca { *src } else { *dst };
                    accesses
                        .push(access(Use::MemCopy { len, into_alloca, other }, in_bounds(len)?));
                }
                // Anything else lets the address out, or is an access we cannot slice.
                _ => return None,
            }
        }
    }
    // A copy from one part of the alloca to another: the other side is derived too.
    if accesses.iter().any(|a| {
        matches!(&a.what, Use::MemCopy { other, .. } if derives_from(func, *other, &derived_values))
    }) {
        return None;
    }
    let slices = slice(func, &accesses, base_align)?;
    let unchanged = slices.len() == 1 && slices[0].offset == 0 && &slices[0].ty == ty;
    if slices.is_empty() || unchanged {
        return None;
    }
    Some(Plan { accesses, derived, slices })
}

/// Whether `ptr` is one of `values` or computed from one by `ptradd`s.
fn derives_from(func: &Function, mut ptr: Value, values: &[Value]) -> bool {
    for _ in 0..64 {
        if values.contains(&ptr) {
            return true;
        }
        let adc_ir::ValueDef::Result(inst) = func.dfg.value_def(ptr) else { return false };
        match &func.dfg.insts[inst] {
            InstructionData::PtrAdd { ptr: p, .. } => ptr = *p,
            _ => return false,
        }
    }
    // A chain this long is not worth splitting for: answer "yes" to keep the alloca.
    true
}

/// The slices the accesses need, or `None` for partial overlaps.
fn slice(func: &Function, accesses: &[Access], base_align: u32) -> Option<Vec<Slice>> {
    let mut typed: Vec<Slice> = Vec::new();
    for a in accesses {
        let (ty, align) = match (&a.what, &func.dfg.insts[a.inst]) {
            (Use::Load, InstructionData::Load { ty, align, .. }) => (ty.clone(), *align),
            (Use::Store, InstructionData::Store { value, align, .. }) => {
                (func.dfg.value_type(*value).clone(), *align)
            }
            _ => continue,
        };
        let size = ty.size();
        if size == 0 {
            return None;
        }
        match typed.iter_mut().find(|s| s.offset < a.offset + size && a.offset < s.end()) {
            Some(s) if s.offset == a.offset && s.ty.size() == size => s.align = s.align.max(align),
            Some(_) => return None,
            None => typed.push(Slice { offset: a.offset, ty, bytes: false, align }),
        }
    }
    let ranges: Vec<(u64, u64)> = accesses
        .iter()
        .filter_map(|a| match a.what {
            Use::MemSet { len } | Use::MemCopy { len, .. } => Some((a.offset, a.offset + len)),
            _ => None,
        })
        .filter(|(lo, hi)| lo < hi)
        .collect();
    // A memset/memcpy must cover each typed slice entirely or not at all.
    for &(lo, hi) in &ranges {
        if typed.iter().any(|s| s.offset < hi && lo < s.end() && (s.offset < lo || s.end() > hi)) {
            return None;
        }
    }
    // Bytes only memset/memcpy touch: cut at every range and typed-slice boundary.
    let mut cuts: BTreeSet<u64> = BTreeSet::new();
    for &(lo, hi) in &ranges {
        cuts.insert(lo);
        cuts.insert(hi);
    }
    for s in &typed {
        cuts.insert(s.offset);
        cuts.insert(s.end());
    }
    let cuts: Vec<u64> = cuts.into_iter().collect();
    let mut slices = typed;
    for pair in cuts.windows(2) {
        let (lo, hi) = (pair[0], pair[1]);
        let touched = ranges.iter().any(|&(a, b)| a <= lo && hi <= b);
        let typed_here = slices.iter().any(|s| s.offset < hi && lo < s.end());
        if touched && !typed_here {
            // An integer when one fits, so that copies become loads and stores mem2reg
            // promotes; bytes otherwise.
            let (ty, bytes) = match hi - lo {
                1 => (Type::I8, false),
                2 => (Type::I16, false),
                4 => (Type::I32, false),
                8 => (Type::I64, false),
                16 => (Type::I128, false),
                n => (Type::array(Type::I8, n), true),
            };
            slices.push(Slice { offset: lo, ty, bytes, align: 1 });
        }
    }
    for s in &mut slices {
        // The part's alignment inside the original, and at least what its accesses claim.
        let inherited = if s.offset == 0 {
            base_align
        } else {
            base_align.min(1u32 << s.offset.trailing_zeros().min(31))
        };
        s.align = s.align.max(inherited).max(1);
    }
    slices.sort_by_key(|s| s.offset);
    Some(slices)
}

fn rewrite(func: &mut Function, alloca: Inst, plan: &Plan) {
    let base_name =
        func.dfg.inst_result(alloca).and_then(|v| func.dfg.value_name(v)).map(String::from);
    // Same address space as the original.
    let ptr_ty = func.dfg.inst_result(alloca).map_or(Type::PTR, |v| func.dfg.value_type(v).clone());
    let mut slice_addr: Vec<Value> = Vec::new();
    for s in &plan.slices {
        let data = InstructionData::Alloca { ty: s.ty.clone(), count: None, align: s.align };
        let inst = func.dfg.make_inst(data, Some(ptr_ty.clone()));
        func.layout.insert_inst_before(inst, alloca);
        let addr = func.dfg.inst_result(inst).expect("an alloca has a result");
        if let Some(name) = &base_name {
            let name = format!("{name}.{}", s.offset);
            func.dfg.set_value_name(addr, &name);
        }
        slice_addr.push(addr);
    }
    let at = |offset: u64| plan.slices.iter().position(|s| s.offset == offset);
    let within = |lo: u64, len: u64| {
        plan.slices
            .iter()
            .enumerate()
            .filter(move |(_, s)| lo <= s.offset && s.end() <= lo + len)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    for a in &plan.accesses {
        match &a.what {
            Use::Load | Use::Store => {
                let Some(i) = at(a.offset) else { continue };
                match &mut func.dfg.insts[a.inst] {
                    InstructionData::Load { ptr, .. } | InstructionData::Store { ptr, .. } => {
                        *ptr = slice_addr[i];
                    }
                    _ => {}
                }
            }
            Use::MemSet { len } => {
                let InstructionData::MemSet { byte, .. } = func.dfg.insts[a.inst].clone() else {
                    continue;
                };
                let zero = const_i64(func, byte) == Some(0);
                for i in within(a.offset, *len) {
                    let s = &plan.slices[i];
                    if zero && !s.bytes {
                        let z = insert_const_before(func, a.inst, s.ty.clone(), Constant::Zero);
                        let store = InstructionData::Store {
                            value: z,
                            ptr: slice_addr[i],
                            align: s.align,
                            volatile: false,
                        };
                        insert(func, store, None, a.inst);
                    } else {
                        let n = insert_const_before(
                            func,
                            a.inst,
                            Type::I64,
                            Constant::Int(u128::from(s.ty.size())),
                        );
                        let set = InstructionData::MemSet {
                            dst: slice_addr[i],
                            byte,
                            len: n,
                            volatile: false,
                        };
                        insert(func, set, None, a.inst);
                    }
                }
                func.layout.remove_inst(a.inst);
            }
            Use::MemCopy { len, into_alloca, other } => {
                for i in within(a.offset, *len) {
                    let s = plan.slices[i].clone();
                    let delta = s.offset - a.offset;
                    let outside = if delta == 0 {
                        *other
                    } else {
                        let d = insert_const_before(
                            func,
                            a.inst,
                            Type::I64,
                            Constant::Int(u128::from(delta)),
                        );
                        let add = InstructionData::PtrAdd {
                            flags: InstFlags::empty(),
                            ptr: *other,
                            offset: d,
                        };
                        insert(func, add, Some(Type::PTR), a.inst).unwrap_or(*other)
                    };
                    let (to, from) = if *into_alloca {
                        (slice_addr[i], outside)
                    } else {
                        (outside, slice_addr[i])
                    };
                    // The other side's alignment is unknown: 1 there, the slice's here.
                    let (to_align, from_align) =
                        if *into_alloca { (s.align, 1) } else { (1, s.align) };
                    if s.bytes {
                        let n = insert_const_before(
                            func,
                            a.inst,
                            Type::I64,
                            Constant::Int(u128::from(s.ty.size())),
                        );
                        let copy = InstructionData::MemCopy {
                            dst: to,
                            src: from,
                            len: n,
                            may_overlap: false,
                            volatile: false,
                        };
                        insert(func, copy, None, a.inst);
                    } else {
                        let load = InstructionData::Load {
                            ty: s.ty.clone(),
                            ptr: from,
                            align: from_align,
                            volatile: false,
                        };
                        let Some(v) = insert(func, load, Some(s.ty.clone()), a.inst) else {
                            continue;
                        };
                        let store = InstructionData::Store {
                            value: v,
                            ptr: to,
                            align: to_align,
                            volatile: false,
                        };
                        insert(func, store, None, a.inst);
                    }
                }
                func.layout.remove_inst(a.inst);
            }
        }
    }
    // Nothing uses the derived addresses or the alloca any more.
    for &inst in plan.derived.iter().rev() {
        func.layout.remove_inst(inst);
    }
    func.layout.remove_inst(alloca);
}

/// Inserts a new instruction before `before`; its result, if it has one.
fn insert(
    func: &mut Function,
    data: InstructionData,
    ty: Option<Type>,
    before: Inst,
) -> Option<Value> {
    let inst = func.dfg.make_inst(data, ty);
    func.layout.insert_inst_before(inst, before);
    func.dfg.inst_result(inst)
}

#[cfg(test)]
mod tests {
    use crate::run_pass_on_text as run;

    #[test]
    fn a_struct_of_two_fields_becomes_two_allocas() {
        let (text, report) = run(
            "sroa",
            "func @f(%x: f64, %k: i32) -> f64 {\n^e:\n  %s = alloca {i32, f64}, align 8\n  %eight = const i64 8\n  %p = ptradd inbounds ptr %s, %eight\n  store %k, %s, align 8\n  store %x, %p, align 8\n  %y = load f64, %p, align 8\n  ret %y\n}\n",
        );
        assert_eq!(report.stat("sroa", "allocas split"), 1, "{text}");
        assert_eq!(report.stat("sroa", "slices created"), 2, "{text}");
        assert!(text.contains("%s.0 = alloca i32, align 8"), "{text}");
        assert!(text.contains("%s.8 = alloca f64, align 8"), "{text}");
        assert!(!text.contains("ptradd"), "{text}");
    }

    #[test]
    fn a_variable_offset_keeps_the_alloca() {
        let (text, report) = run(
            "sroa",
            "func @f(%i: i64, %x: f64) -> f64 {\n^e:\n  %a = alloca [4 x f64], align 8\n  %p = ptradd inbounds ptr %a, %i\n  store %x, %p, align 8\n  %y = load f64, %a, align 8\n  ret %y\n}\n",
        );
        assert_eq!(report.stat("sroa", "allocas split"), 0, "{text}");
    }
}
