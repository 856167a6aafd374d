//! Minimal memory facts shared by `licm` and `gvn`: which object a pointer is based on,
//! whether two accesses may overlap, and what an instruction may read or write.
//!
//! This is deliberately small and conservative. It stands in until the alias analysis and
//! the function-effects analysis of the `passes` branch land; then `may_alias` and
//! `effect` should defer to them (the callers only use the functions below).
//!
//! Facts used (each sound on its own):
//! - a pointer is `root + constant offset` after walking `ptradd`s with constant offsets;
//! - distinct allocas, distinct globals, an alloca vs a global or a parameter, and a
//!   `noalias` parameter vs any other identified object (another parameter, an alloca, a
//!   global, a `noalias_return` call) do not overlap;
//! - two accesses to the same root with known offsets and sizes overlap only if their
//!   byte ranges do;
//! - calls: `readnone`, `readonly`, `writeonly` and `argmemonly` (from the call site or
//!   the direct callee's declaration). Anything unknown may read and write everything.

use adc_ir::constant::sign_extend;
use adc_ir::{
    Constant, FuncAttrs, Function, GlobalId, Inst, InstructionData, Module, ParamAttrs, Symbol,
    Value, ValueDef,
};

/// The object a pointer is based on.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Object {
    Alloca(Value),
    Global(GlobalId),
    Param {
        value: Value,
        noalias: bool,
    },
    /// The result of a call whose callee returns fresh memory (`noalias_return`).
    NoAliasCall(Value),
    /// Anything else (a loaded pointer, a block parameter, a select...).
    Unknown(Value),
}

/// A memory range: `object + offset .. + size` (`None`: unknown).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Loc {
    pub object: Object,
    pub offset: Option<i64>,
    pub size: Option<u64>,
}

/// What an instruction may touch.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Access {
    Nothing,
    Locs(Vec<Loc>),
    Anything,
}

impl Access {
    /// Whether this access may overlap `loc`.
    pub fn may_touch(&self, loc: &Loc) -> bool {
        match self {
            Access::Nothing => false,
            Access::Locs(locs) => locs.iter().any(|l| may_alias(l, loc)),
            Access::Anything => true,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MemEffect {
    pub reads: Access,
    pub writes: Access,
}

impl MemEffect {
    const NONE: MemEffect = MemEffect { reads: Access::Nothing, writes: Access::Nothing };
    const ALL: MemEffect = MemEffect { reads: Access::Anything, writes: Access::Anything };
}

/// The value of an integer `const` instruction, sign-extended from its width.
pub fn const_int(func: &Function, value: Value) -> Option<i128> {
    let ValueDef::Result(inst) = func.dfg.value_def(value) else {
        return None;
    };
    match &func.dfg.insts[inst] {
        InstructionData::Const { ty, value: Constant::Int(bits) } => {
            Some(sign_extend(*bits, ty.int_bits()?))
        }
        InstructionData::Const { ty, value: Constant::Zero } if ty.is_int() => Some(0),
        _ => None,
    }
}

/// Walks `ptradd`s with constant offsets back to the object `ptr` is based on.
pub fn locate(module: &Module, func: &Function, ptr: Value, size: Option<u64>) -> Loc {
    let mut current = ptr;
    let mut offset: Option<i64> = Some(0);
    // Bounded: a verified function has no cyclic definitions, but stay safe anyway.
    for _ in 0..64 {
        match func.dfg.value_def(current) {
            ValueDef::Param(block, index) => {
                let object = if Some(block) == func.entry_block() {
                    let noalias = func
                        .param_attrs
                        .get(index as usize)
                        .is_some_and(|a| a.contains(ParamAttrs::NOALIAS));
                    Object::Param { value: current, noalias }
                } else {
                    Object::Unknown(current)
                };
                return Loc { object, offset, size };
            }
            ValueDef::Result(inst) => match &func.dfg.insts[inst] {
                InstructionData::PtrAdd { ptr, offset: off, .. } => {
                    offset = match (offset, const_int(func, *off)) {
                        (Some(a), Some(b)) => i64::try_from(b).ok().and_then(|b| a.checked_add(b)),
                        _ => None,
                    };
                    current = *ptr;
                }
                InstructionData::Alloca { .. } => {
                    return Loc { object: Object::Alloca(current), offset, size }
                }
                InstructionData::Const {
                    value: Constant::Address { symbol: Symbol::Global(g), offset: o },
                    ..
                } => {
                    let offset = offset.and_then(|a| a.checked_add(*o));
                    return Loc { object: Object::Global(*g), offset, size };
                }
                data @ InstructionData::Call { .. }
                    if call_attrs(module, data).contains(FuncAttrs::NOALIAS_RETURN) =>
                {
                    return Loc { object: Object::NoAliasCall(current), offset, size };
                }
                _ => return Loc { object: Object::Unknown(current), offset, size },
            },
        }
    }
    Loc { object: Object::Unknown(current), offset: None, size }
}

/// Whether two ranges may overlap.
pub fn may_alias(a: &Loc, b: &Loc) -> bool {
    use Object::*;
    let same = match (a.object, b.object) {
        (Unknown(_), _) | (_, Unknown(_)) => return true,
        (Alloca(x), Alloca(y)) | (NoAliasCall(x), NoAliasCall(y)) => x == y,
        (Global(x), Global(y)) => x == y,
        (Param { value: x, noalias: nx }, Param { value: y, noalias: ny }) => {
            if x != y {
                // Two plain parameters may point into one object; a noalias one does not.
                return !(nx || ny);
            }
            true
        }
        // A plain parameter and a global may be the same memory.
        (Param { noalias: false, .. }, Global(_)) | (Global(_), Param { noalias: false, .. }) => {
            return true
        }
        // Distinct identified objects: fresh stack or heap memory, globals and noalias
        // parameters never overlap one another.
        _ => return false,
    };
    if !same {
        return false;
    }
    match (a.offset, a.size, b.offset, b.size) {
        (Some(oa), Some(sa), Some(ob), Some(sb)) => {
            let (oa, ob) = (i128::from(oa), i128::from(ob));
            oa < ob + i128::from(sb) && ob < oa + i128::from(sa)
        }
        _ => true,
    }
}

/// Call-site attributes joined with the direct callee's.
pub fn call_attrs(module: &Module, data: &InstructionData) -> FuncAttrs {
    match data {
        InstructionData::Call { callee, attrs, .. } => {
            let declared = module.functions.get(*callee).map_or(FuncAttrs::empty(), |f| f.attrs);
            *attrs | declared
        }
        InstructionData::CallIndirect { attrs, .. } => *attrs,
        _ => FuncAttrs::empty(),
    }
}

/// What `inst` may read and write.
pub fn effect(module: &Module, func: &Function, inst: Inst) -> MemEffect {
    let data = &func.dfg.insts[inst];
    let loc = |ptr: Value, size: Option<u64>| Access::Locs(vec![locate(module, func, ptr, size)]);
    let len = |v: Value| const_int(func, v).and_then(|n| u64::try_from(n).ok());
    match data {
        InstructionData::Load { volatile: true, .. }
        | InstructionData::Store { volatile: true, .. }
        | InstructionData::MemCopy { volatile: true, .. }
        | InstructionData::MemSet { volatile: true, .. } => MemEffect::ALL,
        InstructionData::Load { ty, ptr, .. } => {
            MemEffect { reads: loc(*ptr, Some(ty.size())), writes: Access::Nothing }
        }
        InstructionData::Store { value, ptr, .. } => {
            let size = func.dfg.value_type(*value).size();
            MemEffect { reads: Access::Nothing, writes: loc(*ptr, Some(size)) }
        }
        InstructionData::MemCopy { dst, src, len: n, .. } => {
            MemEffect { reads: loc(*src, len(*n)), writes: loc(*dst, len(*n)) }
        }
        InstructionData::MemSet { dst, len: n, .. } => {
            MemEffect { reads: Access::Nothing, writes: loc(*dst, len(*n)) }
        }
        InstructionData::AtomicRmw { .. }
        | InstructionData::CmpXchg { .. }
        | InstructionData::Fence { .. } => MemEffect::ALL,
        InstructionData::Call { args, .. } | InstructionData::CallIndirect { args, .. } => {
            let attrs = call_attrs(module, data);
            if attrs.contains(FuncAttrs::READNONE) {
                return MemEffect::NONE;
            }
            let touched = if attrs.contains(FuncAttrs::ARGMEMONLY) {
                // The callee may use any offset from its pointer arguments.
                let locs = args
                    .iter()
                    .filter(|a| func.dfg.value_type(**a).is_ptr())
                    .map(|a| {
                        let l = locate(module, func, *a, None);
                        Loc { offset: None, ..l }
                    })
                    .collect::<Vec<_>>();
                if locs.is_empty() {
                    Access::Nothing
                } else {
                    Access::Locs(locs)
                }
            } else {
                Access::Anything
            };
            let reads = if attrs.contains(FuncAttrs::WRITEONLY) {
                Access::Nothing
            } else {
                touched.clone()
            };
            let writes =
                if attrs.contains(FuncAttrs::READONLY) { Access::Nothing } else { touched };
            MemEffect { reads, writes }
        }
        _ => MemEffect::NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adc_ir::text::parse_module;

    fn setup(text: &str) -> (Module, Vec<Inst>) {
        let module = parse_module(text).unwrap();
        let func = module.functions.values().find(|f| !f.is_declaration()).unwrap();
        let insts = func.layout.insts().map(|(_, i)| i).collect();
        (module, insts)
    }

    #[test]
    fn noalias_params_and_offsets() {
        let (module, insts) = setup(
            "func @f(%a: ptr noalias, %b: ptr, %c: ptr) {\n^e:\n  %x = const f64 1.0\n  %eight = const i64 8\n  %a8 = ptradd ptr %a, %eight\n  store %x, %a, align 8\n  store %x, %a8, align 8\n  store %x, %b, align 8\n  store %x, %c, align 8\n  ret\n}\n",
        );
        let func = module.functions.values().next().unwrap();
        let loc = |i: usize| match effect(&module, func, insts[i]).writes {
            Access::Locs(l) => l[0],
            other => panic!("{other:?}"),
        };
        let (a, a8, b, c) = (loc(3), loc(4), loc(5), loc(6));
        assert!(!may_alias(&a, &a8), "disjoint offsets");
        assert!(!may_alias(&a, &b), "noalias vs another parameter");
        assert!(may_alias(&b, &c), "two plain parameters");
        assert!(may_alias(&a8, &a8));
    }

    #[test]
    fn call_attributes() {
        let (module, insts) = setup(
            "declare @r(ptr) -> f64 readonly argmemonly\ndeclare @w(ptr)\nfunc @f(%a: ptr) {\n^e:\n  %x = call @r(%a)\n  call @w(%a)\n  ret\n}\n",
        );
        let func = module.functions.values().find(|f| f.name == "f").unwrap();
        let r = effect(&module, func, insts[0]);
        assert_eq!(r.writes, Access::Nothing);
        assert!(matches!(r.reads, Access::Locs(_)));
        assert_eq!(effect(&module, func, insts[1]), MemEffect::ALL);
    }
}
