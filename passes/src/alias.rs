//! Alias analysis: `alias(a, b)` answers NoAlias / MayAlias / MustAlias for two memory
//! locations, `mod_ref(inst, loc)` whether an instruction may read or write one.
//!
//! Facts used, each one conservative: distinct identified objects (allocas, globals,
//! results of `noalias_return` calls such as malloc) do not alias; an alloca whose address
//! never escapes aliases nothing reached through another base; a `noalias` parameter
//! aliases no other base; one base with constant offsets aliases only where the byte
//! ranges overlap; two accesses whose TBAA types are different scalar types do not alias
//! (`omnipotent char` and pointer types are never distinguished). Anything else is
//! MayAlias. A location of unknown size stands for its whole object: it overlaps every
//! location on the same base, even one at a lower offset.
//!
//! A `noalias` parameter is distinct from a pointer of unknown origin (a loaded pointer)
//! only while the function does not capture it: once it is stored or passed to a
//! capturing call, a pointer loaded later may be a copy of it. For the same reason a call
//! writes an uncaptured `noalias` parameter's memory only through its pointer arguments
//! (`malloc` and `free`, which may write "other" memory, never touch `restrict` inputs).
//!
//! Besides the pairwise queries, `clobbers(writer, reader)` answers what licm asks: may
//! this instruction write memory that this load or read-only call reads.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;

use adc_ir::text::FunctionPrinter;
use adc_ir::{
    CastOp, Constant, Diagnostic, FuncAttrs, FuncId, Function, GlobalId, Inst, InstructionData,
    Module, ParamAttrs, Symbol, Value, ValueDef,
};

use crate::effects::{Effects, ModuleEffects};
use crate::manager::{
    AnalysisContext, DependsOn, FunctionAnalysis, FunctionContext, FunctionPass, Pass,
    PreservedAnalyses,
};

/// The object a pointer is derived from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Base {
    Alloca(Inst),
    /// The function's parameter at this index.
    Param(usize),
    Global(GlobalId),
    /// A call to a `noalias_return` (malloc-like) function.
    NoAliasCall(Inst),
    /// Anything else: a loaded pointer, a block parameter, an unknown call's result.
    Unknown(Value),
}

impl Base {
    fn identified(self) -> bool {
        matches!(self, Base::Alloca(_) | Base::Global(_) | Base::NoAliasCall(_))
    }
}

/// Follows `ptradd`s and address casts back to the base object; the offset is known when
/// every `ptradd` on the way has a constant offset.
pub fn decompose(module: &Module, func: &Function, mut ptr: Value) -> (Base, Option<i64>) {
    let mut offset = Some(0i64);
    // Bounded: a malformed cyclic chain must not hang an analysis.
    for _ in 0..64 {
        let Some(data) = func.dfg.values.get(ptr) else { return (Base::Unknown(ptr), None) };
        match data.def {
            ValueDef::Param(block, index) => {
                if Some(block) == func.entry_block() {
                    return (Base::Param(index as usize), offset);
                }
                return (Base::Unknown(ptr), offset);
            }
            ValueDef::Result(inst) => match &func.dfg.insts[inst] {
                InstructionData::PtrAdd { ptr: p, offset: o, .. } => {
                    offset = match (offset, const_i64(func, *o)) {
                        (Some(a), Some(b)) => a.checked_add(b),
                        _ => None,
                    };
                    ptr = *p;
                }
                InstructionData::Cast { op: CastOp::Addrspacecast, arg, .. } => ptr = *arg,
                InstructionData::Alloca { .. } => return (Base::Alloca(inst), offset),
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Global(g), offset: o },
                    ..
                } => return (Base::Global(*g), offset.and_then(|a| a.checked_add(*o))),
                InstructionData::Call { callee, .. }
                    if module
                        .functions
                        .get(*callee)
                        .is_some_and(|f| f.attrs.contains(FuncAttrs::NOALIAS_RETURN)) =>
                {
                    return (Base::NoAliasCall(inst), offset)
                }
                _ => return (Base::Unknown(ptr), offset),
            },
        }
    }
    (Base::Unknown(ptr), None)
}

/// The value of an integer `const`, sign-extended; `None` when it is not a constant or
/// does not fit in an `i64`.
pub fn const_i64(func: &Function, v: Value) -> Option<i64> {
    let ValueDef::Result(inst) = func.dfg.values.get(v)?.def else { return None };
    let bits = func.dfg.value_type(v).int_bits()?;
    match &func.dfg.insts[inst] {
        InstructionData::Const { value: Constant::Int(x), .. } => {
            i64::try_from(adc_ir::constant::sign_extend(*x, bits)).ok()
        }
        InstructionData::Const { value: Constant::Zero, .. } => Some(0),
        _ => None,
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AliasResult {
    NoAlias,
    MayAlias,
    MustAlias,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ModRef {
    NoModRef,
    Ref,
    Mod,
    ModRef,
}

impl ModRef {
    fn from(reads: bool, writes: bool) -> ModRef {
        match (reads, writes) {
            (false, false) => ModRef::NoModRef,
            (true, false) => ModRef::Ref,
            (false, true) => ModRef::Mod,
            (true, true) => ModRef::ModRef,
        }
    }

    pub fn may_read(self) -> bool {
        matches!(self, ModRef::Ref | ModRef::ModRef)
    }

    pub fn may_write(self) -> bool {
        matches!(self, ModRef::Mod | ModRef::ModRef)
    }
}

/// A memory location: bytes `[ptr, ptr + size)`; `size: None` is "anywhere from ptr on,
/// or before it" (the whole object).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MemLoc {
    pub ptr: Value,
    pub size: Option<u64>,
    /// TBAA access type of the instruction the location comes from.
    pub tbaa: Option<Arc<str>>,
}

impl MemLoc {
    pub fn new(ptr: Value, size: Option<u64>) -> MemLoc {
        MemLoc { ptr, size, tbaa: None }
    }

    /// The location a load or store accesses.
    pub fn of_access(func: &Function, inst: Inst) -> Option<MemLoc> {
        let (ptr, ty) = match &func.dfg.insts[inst] {
            InstructionData::Load { ptr, ty, .. } => (*ptr, ty.clone()),
            InstructionData::Store { ptr, value, .. } => {
                (*ptr, func.dfg.value_type(*value).clone())
            }
            _ => return None,
        };
        Some(MemLoc { ptr, size: Some(ty.size()), tbaa: func.dfg.tbaa[inst].clone() })
    }
}

fn tbaa_distinct(a: &str, b: &str) -> bool {
    let vague = |t: &str| {
        t == "omnipotent char"
            || t == "any pointer"
            || t.starts_with("p1 ")
            || t.starts_with("p2 ")
            || t.contains("vtable")
    };
    a != b && !vague(a) && !vague(b)
}

#[derive(Clone, Debug, Default)]
pub struct AliasAnalysis {
    /// Allocas whose address may be seen by code outside this function.
    escaped: HashSet<Inst>,
    /// Parameters (by index) the function captures: stores, or passes to a capturing call.
    captured_params: HashSet<usize>,
    noalias_params: Vec<bool>,
    /// Pointer block parameters that always hold one of these identified objects (a loop
    /// over a `realloc`-grown buffer, a phi of two mallocs): see [`merged_origins`].
    merged: HashMap<Value, Vec<Base>>,
    effects: Rc<ModuleEffects>,
}

impl AliasAnalysis {
    /// The effects of the callees this analysis reads calls with.
    pub fn effects(&self) -> &Rc<ModuleEffects> {
        &self.effects
    }

    pub fn new(module: &Module, func: &Function, effects: Rc<ModuleEffects>) -> AliasAnalysis {
        let mut escaped = HashSet::new();
        let mut captured_params = HashSet::new();
        for (_, inst) in func.layout.insts() {
            let data = &func.dfg.insts[inst];
            let mut escape = |v: Value| match decompose(module, func, v) {
                (Base::Alloca(a), _) => {
                    escaped.insert(a);
                }
                (Base::Param(i), _) => {
                    captured_params.insert(i);
                }
                _ => {}
            };
            match data {
                // Uses that do not let the address out.
                InstructionData::Load { .. }
                | InstructionData::PtrAdd { .. }
                | InstructionData::Icmp { .. }
                | InstructionData::MemSet { .. }
                | InstructionData::MemCopy { .. }
                | InstructionData::Cast { op: CastOp::Addrspacecast, .. } => {}
                InstructionData::Store { value, .. } => escape(*value),
                InstructionData::Call { callee, args, .. } => {
                    let attrs = module.functions.get(*callee).map(|f| f.param_attrs.as_slice());
                    for (i, &arg) in args.iter().enumerate() {
                        let nocapture = attrs
                            .and_then(|a| a.get(i))
                            .is_some_and(|a| a.contains(ParamAttrs::NOCAPTURE));
                        if !nocapture {
                            escape(arg);
                        }
                    }
                }
                other => other.for_each_arg(|v| {
                    if func.dfg.value_type(v).is_ptr() {
                        escape(v)
                    }
                }),
            }
        }
        let noalias_params =
            func.param_attrs.iter().map(|a| a.contains(ParamAttrs::NOALIAS)).collect();
        let merged = merged_origins(module, func);
        AliasAnalysis { escaped, captured_params, noalias_params, merged, effects }
    }

    pub fn is_escaped(&self, alloca: Inst) -> bool {
        self.escaped.contains(&alloca)
    }

    /// Whether `loc` lies in an alloca of this function whose address never escapes: no
    /// callee can reach it except through a pointer argument it is given.
    pub fn is_private(&self, module: &Module, func: &Function, loc: &MemLoc) -> bool {
        self.unescaped_alloca(decompose(module, func, loc.ptr).0)
    }

    fn unescaped_alloca(&self, base: Base) -> bool {
        matches!(base, Base::Alloca(a) if !self.escaped.contains(&a))
    }

    fn noalias_param(&self, base: Base) -> bool {
        matches!(base, Base::Param(i) if self.noalias_params.get(i).copied().unwrap_or(false))
    }

    fn uncaptured_noalias_param(&self, base: Base) -> bool {
        matches!(base, Base::Param(i) if self.noalias_param(base) && !self.captured_params.contains(&i))
    }

    /// A `noalias` parameter against another base: always distinct from identified
    /// objects and other parameters; distinct from a pointer of unknown origin only when
    /// the function never captured the parameter (else it may have reloaded a copy).
    fn noalias_param_excludes(&self, param: Base, other: Base) -> bool {
        let Base::Param(i) = param else { return false };
        self.noalias_param(param)
            && (!matches!(other, Base::Unknown(_)) || !self.captured_params.contains(&i))
    }

    pub fn alias(&self, module: &Module, func: &Function, a: &MemLoc, b: &MemLoc) -> AliasResult {
        if let (Some(ta), Some(tb)) = (&a.tbaa, &b.tbaa) {
            if tbaa_distinct(ta, tb) {
                return AliasResult::NoAlias;
            }
        }
        let (ba, oa) = decompose(module, func, a.ptr);
        let (bb, ob) = decompose(module, func, b.ptr);
        if ba == bb {
            let (Some(oa), Some(ob)) = (oa, ob) else { return AliasResult::MayAlias };
            // An unknown size is the whole object, below the pointer as well as above it.
            if a.size.is_none() || b.size.is_none() {
                return AliasResult::MayAlias;
            }
            if oa == ob && a.size == b.size && a.size.is_some() {
                return AliasResult::MustAlias;
            }
            let disjoint = |lo: i64, size: Option<u64>, other: i64| {
                size.is_some_and(|s| i128::from(lo) + i128::from(s) <= i128::from(other))
            };
            if disjoint(oa, a.size, ob) || disjoint(ob, b.size, oa) {
                return AliasResult::NoAlias;
            }
            return AliasResult::MayAlias;
        }
        let (oa, ob) = (self.origins(&ba), self.origins(&bb));
        if oa.iter().all(|x| ob.iter().all(|y| x != y && self.different_objects(*x, *y))) {
            AliasResult::NoAlias
        } else {
            AliasResult::MayAlias
        }
    }

    /// The objects a base stands for: itself, or what a merged block parameter may hold.
    fn origins<'b>(&'b self, base: &'b Base) -> &'b [Base] {
        match base {
            Base::Unknown(v) => {
                self.merged.get(v).map_or(std::slice::from_ref(base), Vec::as_slice)
            }
            _ => std::slice::from_ref(base),
        }
    }

    /// Whether pointers based on two different bases never reach the same object.
    fn different_objects(&self, ba: Base, bb: Base) -> bool {
        (ba.identified() && bb.identified())
            || self.unescaped_alloca(ba)
            || self.unescaped_alloca(bb)
            // An argument cannot point into an alloca this call has not yet made.
            // An argument cannot point into memory this call allocates afterwards (an
            // alloca, or a fresh malloc: reaching it through a stale pointer is UB).
            || matches!(
                (ba, bb),
                (Base::Alloca(_) | Base::NoAliasCall(_), Base::Param(_))
                    | (Base::Param(_), Base::Alloca(_) | Base::NoAliasCall(_))
            )
            || self.noalias_param_excludes(ba, bb)
            || self.noalias_param_excludes(bb, ba)
    }

    /// What a call may do (see [`call_effects`]).
    pub fn call_effects(&self, module: &Module, data: &InstructionData) -> Effects {
        call_effects(module, &self.effects, data)
    }

    /// Whether `inst` may read or write `loc`.
    pub fn mod_ref(&self, module: &Module, func: &Function, inst: Inst, loc: &MemLoc) -> ModRef {
        use InstructionData as I;
        let data = &func.dfg.insts[inst];
        let may = |l: &MemLoc| self.alias(module, func, l, loc) != AliasResult::NoAlias;
        let whole = |p: Value| MemLoc::new(p, None);
        let sized = |p: Value, len: Value| {
            MemLoc::new(p, const_i64(func, len).and_then(|n| u64::try_from(n).ok()))
        };
        match data {
            I::Load { volatile: false, .. } => {
                let l = MemLoc::of_access(func, inst).unwrap_or_else(|| whole(loc.ptr));
                ModRef::from(may(&l), false)
            }
            I::Store { volatile: false, .. } => {
                let l = MemLoc::of_access(func, inst).unwrap_or_else(|| whole(loc.ptr));
                ModRef::from(false, may(&l))
            }
            I::MemCopy { dst, src, len, volatile: false, .. } => {
                ModRef::from(may(&sized(*src, *len)), may(&sized(*dst, *len)))
            }
            I::MemSet { dst, len, volatile: false, .. } => {
                ModRef::from(false, may(&sized(*dst, *len)))
            }
            I::Call { args, .. } | I::CallIndirect { args, .. } => {
                let e = self.call_effects(module, data);
                let (base, _) = decompose(module, func, loc.ptr);
                let through_args =
                    args.iter().any(|a| func.dfg.value_type(*a).is_ptr() && may(&whole(*a)));
                // Memory the callee can only reach through its arguments.
                let private = self.unescaped_alloca(base);
                // A callee may read a `noalias` parameter's memory through a pointer of
                // its own (reads do not break `noalias`), but writing it through a pointer
                // not based on the parameter is undefined behaviour; while the function
                // has not captured the parameter, the callee holds no such pointer.
                let unwritable = private || self.uncaptured_noalias_param(base);
                let reads = (e.reads_args && through_args) || (e.reads_other && !private);
                let writes = (e.writes_args && through_args) || (e.writes_other && !unwritable);
                ModRef::from(reads, writes)
            }
            I::Load { .. } | I::Store { .. } | I::MemCopy { .. } | I::MemSet { .. } => {
                // Volatile accesses: ordered with everything they may touch.
                let touches =
                    data.args().iter().any(|v| func.dfg.value_type(*v).is_ptr() && may(&whole(*v)));
                ModRef::from(touches, touches)
            }
            I::AtomicRmw { ptr, .. } | I::CmpXchg { ptr, .. } => {
                let m = may(&whole(*ptr));
                ModRef::from(m, m)
            }
            I::Fence { .. } => ModRef::ModRef,
            _ => ModRef::NoModRef,
        }
    }
}

/// The identified objects (allocas, globals, malloc-like results) each pointer block
/// parameter may hold, for the parameters whose every incoming value is one of them, a
/// pointer derived from one by `ptradd`, a null/undef constant (never dereferenced), or
/// another such parameter. The least fixpoint from empty sets: values that only circulate
/// in a cycle of parameters bring no object of their own. Reverse-mode tapes are the
/// case this serves: their buffer is a loop-carried parameter fed by `null` and
/// `realloc`, and without this every tape read may alias every shadow store.
fn merged_origins(module: &Module, func: &Function) -> HashMap<Value, Vec<Base>> {
    let entry = func.entry_block();
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    for block in func.layout.blocks() {
        let Some(term) = func.terminator(*block) else { continue };
        for call in func.dfg.insts[term].branch_targets() {
            let params = func.dfg.block_params(call.block);
            for (param, arg) in params.iter().zip(&call.args) {
                if Some(call.block) != entry && func.dfg.value_type(*param).is_ptr() {
                    incoming.entry(*param).or_default().push(*arg);
                }
            }
        }
    }
    let is_null_like = |v: Value| {
        let ValueDef::Result(inst) = func.dfg.value_def(v) else { return false };
        matches!(
            &func.dfg.insts[inst],
            InstructionData::Const {
                value: Constant::Int(0) | Constant::Zero | Constant::Undef | Constant::Poison,
                ..
            }
        )
    };
    // None: some incoming value is of unknown origin.
    let mut origins: HashMap<Value, Option<Vec<Base>>> =
        incoming.keys().map(|p| (*p, Some(Vec::new()))).collect();
    let mut params: Vec<Value> = incoming.keys().copied().collect();
    params.sort();
    let mut changed = true;
    while changed {
        changed = false;
        for param in &params {
            let Some(current) = origins[param].clone() else { continue };
            let mut next = Some(current.clone());
            for arg in &incoming[param] {
                if is_null_like(*arg) {
                    continue;
                }
                let found = match decompose(module, func, *arg).0 {
                    base if base.identified() => Some(vec![base]),
                    Base::Unknown(v) if origins.contains_key(&v) => origins[&v].clone(),
                    _ => None,
                };
                next = match (next, found) {
                    (Some(mut set), Some(more)) => {
                        for base in more {
                            if !set.contains(&base) {
                                set.push(base);
                            }
                        }
                        Some(set)
                    }
                    _ => None,
                };
                if next.is_none() {
                    break;
                }
            }
            if next.as_ref() != Some(&current) {
                origins.insert(*param, next);
                changed = true;
            }
        }
    }
    origins
        .into_iter()
        .filter_map(|(p, set)| set.filter(|s| !s.is_empty()).map(|s| (p, s)))
        .collect()
}

/// What a call may do: the call site's attributes, the callee's declared attributes and
/// its known or inferred effects are each a promise, so a "may" fact holds only when all
/// of them allow it. Not a call: no effects.
pub fn call_effects(module: &Module, effects: &ModuleEffects, data: &InstructionData) -> Effects {
    let meet = |a: Effects, b: Effects| Effects {
        reads_args: a.reads_args && b.reads_args,
        writes_args: a.writes_args && b.writes_args,
        reads_other: a.reads_other && b.reads_other,
        writes_other: a.writes_other && b.writes_other,
        may_free: a.may_free && b.may_free,
        may_not_return: a.may_not_return && b.may_not_return,
    };
    match data {
        InstructionData::Call { callee, attrs, .. } => {
            let declared = module
                .functions
                .get(*callee)
                .map_or(Effects::WORST, |f| Effects::from_attrs(f.attrs));
            meet(meet(Effects::from_attrs(*attrs), declared), effects.get(*callee))
        }
        InstructionData::CallIndirect { attrs, .. } => Effects::from_attrs(*attrs),
        _ => Effects::default(),
    }
}

impl AliasAnalysis {
    /// Whether `writer` may write memory that `reader` reads. `reader` is a load (its
    /// bytes), a call (what its effects say it may read: its pointer arguments' objects,
    /// and with `reads_other` everything but this function's private allocas), or any
    /// other instruction (treated as reading the objects of its pointer operands).
    pub fn clobbers(&self, module: &Module, func: &Function, writer: Inst, reader: Inst) -> bool {
        use InstructionData as I;
        let reader_data = &func.dfg.insts[reader];
        let ptr_args = |data: &InstructionData| -> Vec<Value> {
            data.args().into_iter().filter(|v| func.dfg.value_type(*v).is_ptr()).collect()
        };
        let writes_whole =
            |p: Value| self.mod_ref(module, func, writer, &MemLoc::new(p, None)).may_write();
        match reader_data {
            I::Load { volatile: false, .. } => MemLoc::of_access(func, reader)
                .is_some_and(|loc| self.mod_ref(module, func, writer, &loc).may_write()),
            I::Call { args, .. } | I::CallIndirect { args, .. } => {
                let e = self.call_effects(module, reader_data);
                if !e.reads() {
                    return false;
                }
                let ptrs: Vec<Value> =
                    args.iter().copied().filter(|a| func.dfg.value_type(*a).is_ptr()).collect();
                if e.reads_args && ptrs.iter().any(|p| writes_whole(*p)) {
                    return true;
                }
                if !e.reads_other {
                    return false;
                }
                // Everything but private allocas: a write the writer makes to a location
                // it names is harmless only when that location is private.
                match &func.dfg.insts[writer] {
                    I::Store { volatile: false, .. } => MemLoc::of_access(func, writer)
                        .is_some_and(|loc| !self.is_private(module, func, &loc)),
                    I::MemSet { dst, volatile: false, .. }
                    | I::MemCopy { dst, volatile: false, .. } => {
                        !self.is_private(module, func, &MemLoc::new(*dst, None))
                    }
                    I::Load { volatile: false, .. } => false,
                    I::Call { .. } | I::CallIndirect { .. } => {
                        self.call_effects(module, &func.dfg.insts[writer]).writes()
                    }
                    // Volatile accesses and atomics are ordered with every read.
                    I::Load { .. }
                    | I::Store { .. }
                    | I::MemSet { .. }
                    | I::MemCopy { .. }
                    | I::AtomicRmw { .. }
                    | I::CmpXchg { .. }
                    | I::Fence { .. } => true,
                    _ => false,
                }
            }
            other => ptr_args(other).into_iter().any(writes_whole),
        }
    }
}

impl FunctionAnalysis for AliasAnalysis {
    const NAME: &'static str = "alias";
    const DEPENDS_ON: DependsOn = DependsOn::Instructions;

    fn compute(func: &Function, cx: &mut AnalysisContext<'_>) -> Self {
        let effects = cx.module_analysis::<ModuleEffects>();
        AliasAnalysis::new(cx.module, func, effects)
    }
}

/// `print-alias`: every pair of locations that loads and stores access
/// (`NoAlias: %p, %q`), then every call against every location (`Ref: @g -> %p`).
pub struct PrintAlias;

impl Pass for PrintAlias {
    fn name(&self) -> &'static str {
        "print-alias"
    }
}

impl FunctionPass for PrintAlias {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let aa = cx.analysis::<AliasAnalysis>(func);
        let p = FunctionPrinter::new(cx.module, func);
        let mut locs: Vec<MemLoc> = Vec::new();
        let mut calls: Vec<Inst> = Vec::new();
        for (_, inst) in func.layout.insts() {
            if let Some(loc) = MemLoc::of_access(func, inst) {
                if !locs.iter().any(|l| l.ptr == loc.ptr && l.size == loc.size) {
                    locs.push(loc);
                }
            }
            if matches!(
                func.dfg.insts[inst],
                InstructionData::Call { .. } | InstructionData::CallIndirect { .. }
            ) {
                calls.push(inst);
            }
        }
        let _ = writeln!(cx.out, "alias @{}", func.name);
        for (i, a) in locs.iter().enumerate() {
            for b in &locs[i + 1..] {
                let r = aa.alias(cx.module, func, a, b);
                let _ = writeln!(cx.out, "  {r:?}: {}, {}", p.value(a.ptr), p.value(b.ptr));
            }
        }
        for &call in &calls {
            let name = match &func.dfg.insts[call] {
                InstructionData::Call { callee, .. } => callee_name(cx.module, *callee),
                _ => "indirect".to_string(),
            };
            for loc in &locs {
                let r = aa.mod_ref(cx.module, func, call, loc);
                let _ = writeln!(cx.out, "  {r:?}: {name} -> {}", p.value(loc.ptr));
            }
        }
        Ok(PreservedAnalyses::All)
    }
}

fn callee_name(module: &Module, callee: FuncId) -> String {
    module.functions.get(callee).map_or("@?".to_string(), |f| format!("@{}", f.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use adc_ir::builder::FunctionBuilder;
    use adc_ir::{Signature, Type};

    #[test]
    fn tbaa_separates_double_from_int_through_one_pointer_base() {
        let mut func = Function::new("f", Signature::new(vec![Type::PTR, Type::PTR], None));
        let none = |_| None;
        let mut b = FunctionBuilder::new(&mut func, &none);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let (p, q) = (b.func.params()[0], b.func.params()[1]);
        let x = b.load(Type::F64, p, 8);
        let st = b.store(x, q, 8);
        b.ret(None);
        let ld = func.layout.block_insts(entry)[0];
        let module = Module::new();
        let aa = AliasAnalysis::new(&module, &func, Rc::default());
        let mut a = MemLoc::of_access(&func, ld).unwrap();
        let mut c = MemLoc::of_access(&func, st).unwrap();
        assert_eq!(aa.alias(&module, &func, &a, &c), AliasResult::MayAlias);
        a.tbaa = Some("double".into());
        c.tbaa = Some("int".into());
        assert_eq!(aa.alias(&module, &func, &a, &c), AliasResult::NoAlias);
        c.tbaa = Some("omnipotent char".into());
        assert_eq!(aa.alias(&module, &func, &a, &c), AliasResult::MayAlias);
    }
}
