//! Type analysis: a [`TypeTree`] for every value of every defined function, solved to a
//! fixpoint over the whole module.
//!
//! Public API (what the synthesis uses):
//!
//! - [`TypeAnalysis::analyze`]`(module)` runs the analysis once per module.
//! - [`TypeAnalysis::tree`]`(func, value)`: everything known about a value;
//!   [`TypeAnalysis::return_tree`] likewise for a function's result.
//! - [`TypeAnalysis::float_kind_at`]`(module, func, ptr, offset, size, at)`: for a load,
//!   store or atomic at `at`, do those bytes behind `ptr` hold floats (and of which kind),
//!   or integers/pointers (`None`)? Unknown or conflicting bytes are an
//!   [`AdErrorKind::UndeducibleType`] naming `at` — never a guess.
//! - [`TypeAnalysis::value_float_kind`]: the same question for an SSA value (an `i64`
//!   that carries a `double`'s bits); [`TypeAnalysis::float_view`] the float type of
//!   those bits (what the reverse pass keeps its adjoint as).
//! - [`TypeAnalysis::copy_layout`]: the scalar facts over a `memcpy`'d range, offset by
//!   offset, for copies that mix integers and floats.
//!
//! How facts arise (each rule is applied in both directions, until nothing changes):
//!
//! - IR types seed what they are sure of: float scalars/lanes are `Float`, pointers are
//!   `Pointer`, `i1` is `Integer`. Other integer types say nothing (an `i64` may be a
//!   `double`). Constants are bit patterns: they keep their seed and take no facts from
//!   their uses (one `const i64 0` may be stored as a double and used as an index), but
//!   for the addresses of globals, whose memory is the global's wherever they are used;
//!   the addresses of one global in a function (`@g`, `@g + 8`) relate as by a
//!   constant-offset `ptradd` (clang -O2 names `&g[1]` as a constant of its own, and a
//!   `memset` of `@g` knew nothing of what `g[1]` holds).
//! - TBAA access names (`"double"`, `"int"`, `"any pointer"`) on loads, stores and
//!   memcpys seed the accessed bytes.
//! - Loads and stores unify the value with the pointee at offset 0; `ptradd` by a
//!   constant shifts the pointee; by a variable `s * i` it maps offsets modulo the stride
//!   `s` (an array of `s`-byte elements), and a homogeneous element becomes `-1` ("every
//!   element"); an unknown stride keeps only `-1` facts. When the importer bounded the
//!   index to a fixed array inside the object (`dfg.index_bounds`: `p->a[i]` with
//!   `double a[4]`), the element's facts are laid out at each element of that array only
//!   (up to 64 elements), so an `int` after the array keeps its own type.
//! - Integer-only operations (`mul`, `div`, `rem`, min/max, int casts, `ctpop`, shift
//!   results, indices, lengths, branch conditions) are `Integer`. `add`/`sub` are
//!   `Integer` when both operands are, `Pointer` when one operand is (pointer
//!   arithmetic through `ptrtoint`; a pointer difference is `Integer`). Backwards, an
//!   `Integer` sum has `Integer` addends, and an `Integer` difference with one `Integer`
//!   side has an `Integer` other side. An `icmp` with a small nonzero constant
//!   (|c| <= [`MAX_OFFSET`]: `n > 1`, `i < 4`) makes the other side `Integer`: null tests
//!   compare with 0, tests of float bits with 0 or with masks far above it. `and`/`or`/`xor`
//!   pass their operand's type through (sign flips of bitcast floats) instead of forcing
//!   `Integer`. Float operations, `sitofp`/`fptosi`, `fcmp` follow the IR types.
//! - `bitcast`, `ptrtoint`, `inttoptr`, `addrspacecast`, `freeze`, aggregates and vector
//!   lanes carry trees unchanged (re-based per field/lane).
//! - Merges (`select`, block parameters) follow Enzyme's phi rule: what the merge's uses
//!   say flows back to every incoming value, but the merge takes from its sources only
//!   the facts they all imply ([`TypeTree::meet`]): `phi [m, a]` of a struct pointer and a
//!   `double *` is no conflict where the struct holds a pointer and the array a double.
//!   Sources are the incoming values from outside the merge's cycle of the flow graph
//!   (constants, bit patterns of any type, do not count); an incoming value derived from
//!   the merge around a loop (`p + 8`) joins in as before.
//! - `ptradd p, s * i + c`: the offset's stride `s` and phase `c mod s` map the element's
//!   offsets to the base's (the second field of an array of records).
//! - `memcpy`/`memmove` make source and destination agree over the copied length;
//!   `memset` only says its operands are pointer and integers.
//! - Calls to defined functions unify arguments with parameters and the result with the
//!   callee's return (a change of a parameter or return tree re-visits the call sites). Known library functions (`malloc`, `calloc`, `realloc`, `free`,
//!   `memcpy`, `memmove`, `memset`, libm, `abs`) have their own rules; other declarations
//!   contribute nothing. Calls to reverse mode's `__adc_tape_push` relate their own tape
//!   header and record instead of the helper's shared return tree (every tape has its own
//!   record layout; a derivative of a derivative reads them).
//! - A constant-offset `ptradd` whose result flows back into its own base around a loop
//!   (`p' = p + 8`, a pointer walk) is read as an array of 8-byte elements, like
//!   `p + 8 * i`: shifting facts by 8 on every trip would add one offset per round up to
//!   the offset cap.
//!
//! Solving and its cost: one module-wide worklist of instructions, all visited once,
//! then re-visited only when a tree they mention grew (the dependency index in
//! `deps.rs`: operands, result, block parameters a branch feeds, and for a parameter or
//! return tree the call sites). Rules only join facts in, and each value's tree lives in
//! a finite-height lattice (paths of at most [`super::MAX_DEPTH`] steps, offsets up to
//! [`MAX_OFFSET`], four base types), so each tree grows at most `height` times and the
//! worklist terminates after O(values × height × users) visits; in practice a tree grows
//! a handful of times (pointer walks no longer walk the offsets up to the cap), so the
//! visits stay a small multiple of the instruction count
//! ([`TypeAnalysis::worklist_visits`] counts them).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::OnceLock;

use adc_ir::{
    BinaryOp, CastOp, FuncId, Function, HeapFunction, Inst, InstructionData, Module, Type, UnaryOp,
    Value, ValueDef,
};

use super::deps::{FunctionDeps, ModuleDeps};
use super::layout::{gcd, modulo, offset_pattern, only_any, rotated, spread, within};
use super::{BaseType, FloatKind, Step, TypeTree, MAX_OFFSET};
use crate::callees::TAPE_PUSH;
use crate::error::{AdError, AdErrorKind, Site};

/// Visits of any one instruction before the solver stops re-queuing it. The lattice is
/// finite (caps), so this only guards against a bug; reaching it keeps the facts found.
const MAX_INST_VISITS: usize = 1 << 14;
/// Visits of one instruction after which constant-offset `ptradd`s widen to walks.
const WIDEN_AFTER_VISITS: usize = 32;

/// The trees of one function's values and of its return value.
#[derive(Clone, Default, Debug)]
struct FunctionTypes {
    values: HashMap<Value, TypeTree>,
    ret: TypeTree,
}

/// The solved type trees of a module (see the module documentation).
#[derive(Clone, Default, Debug)]
pub struct TypeAnalysis {
    functions: HashMap<FuncId, FunctionTypes>,
    /// Instruction visits the worklist made (see [`TypeAnalysis::worklist_visits`]).
    visits: usize,
}

/// A tree that grew during one visit: a value's, or a function's return tree.
#[derive(Copy, Clone, Debug)]
enum Grown {
    Value(FuncId, Value),
    Return(FuncId),
}

fn empty_tree() -> &'static TypeTree {
    static EMPTY: OnceLock<TypeTree> = OnceLock::new();
    EMPTY.get_or_init(TypeTree::new)
}

impl TypeAnalysis {
    /// Analyzes every defined function of `module` to a common fixpoint.
    pub fn analyze(module: &Module) -> TypeAnalysis {
        TypeAnalysis::analyze_scope(module, None)
    }

    /// Analyzes the defined functions of `scope` (every one when `None`) to a common
    /// fixpoint; calls to the functions outside it are read as calls of declarations. For
    /// a scope closed under direct calls in both directions (`callees::analysis_scope`),
    /// the facts of its functions are those of the whole module's analysis: calls are the
    /// only way facts pass between functions.
    pub fn analyze_scope(module: &Module, scope: Option<&HashSet<FuncId>>) -> TypeAnalysis {
        let mut analysis = TypeAnalysis::default();
        let deps = ModuleDeps::new(module, scope);
        let mut queue: VecDeque<(FuncId, Inst)> = VecDeque::new();
        let mut queued: HashSet<(FuncId, Inst)> = HashSet::new();
        let mut defined: Vec<FuncId> = deps.functions.keys().copied().collect();
        defined.sort();
        for id in defined {
            let func = &module.functions[id];
            analysis.functions.insert(id, seed_function(func));
            for (_, inst) in func.layout.insts() {
                queue.push_back((id, inst));
                queued.insert((id, inst));
            }
        }
        let mut inst_visits: HashMap<(FuncId, Inst), usize> = HashMap::new();
        while let Some((id, inst)) = queue.pop_front() {
            queued.remove(&(id, inst));
            let count = inst_visits.entry((id, inst)).or_default();
            if *count >= MAX_INST_VISITS {
                continue;
            }
            *count += 1;
            let widen = *count > WIDEN_AFTER_VISITS;
            analysis.visits += 1;
            for grown in analysis.visit_inst(module, &deps, id, inst, widen) {
                let mut enqueue = |at: (FuncId, Inst)| {
                    if queued.insert(at) {
                        queue.push_back(at);
                    }
                };
                let (owner, local): (FuncId, &[Inst]) = match grown {
                    Grown::Value(owner, value) => {
                        let mentions = deps.functions[&owner].mentions.get(&value);
                        (owner, mentions.map_or(&[][..], Vec::as_slice))
                    }
                    Grown::Return(owner) => (owner, deps.functions[&owner].returns.as_slice()),
                };
                for at in local {
                    enqueue((owner, *at));
                }
                // Calls unify arguments with parameters and results with returns.
                let interface = match grown {
                    Grown::Value(owner, value) => module.functions[owner].params().contains(&value),
                    Grown::Return(_) => true,
                };
                if interface {
                    for site in deps.call_sites.get(&owner).into_iter().flatten() {
                        enqueue(*site);
                    }
                }
            }
        }
        analysis
    }

    /// How many instruction visits the worklist made. Each visit follows the growth of a
    /// tree the instruction mentions, so this is bounded by the sum, over values, of
    /// (lattice height × number of mentioning instructions): tests use it to check the
    /// analysis stays linear in practice.
    pub fn worklist_visits(&self) -> usize {
        self.visits
    }

    /// Everything known about `value` of `func` (empty when nothing is).
    pub fn tree(&self, func: FuncId, value: Value) -> &TypeTree {
        self.functions.get(&func).and_then(|t| t.values.get(&value)).unwrap_or(empty_tree())
    }

    /// Everything known about the value `func` returns.
    pub fn return_tree(&self, func: FuncId) -> &TypeTree {
        self.functions.get(&func).map_or(empty_tree(), |t| &t.ret)
    }

    /// The facts about the `size` bytes at `offset` behind `ptr`, rebased to offset 0,
    /// one level deep (the scalars stored there, not what they point to).
    pub fn pointee_range(&self, func: FuncId, ptr: Value, offset: u64, size: u64) -> TypeTree {
        self.tree(func, ptr).child(Step::Any).lookup(offset, size).top_level()
    }

    /// Whether the `size` bytes at `offset` behind `ptr` hold floats, for the memory
    /// access `at`: `Some(kind)` when all known facts there are floats of one kind,
    /// `None` when they are integers or pointers, an error when nothing is known, the
    /// facts conflict, or floats mix with other data (use [`Self::copy_layout`]).
    pub fn float_kind_at(
        &self,
        module: &Module,
        func: FuncId,
        ptr: Value,
        offset: u64,
        size: u64,
        at: Inst,
    ) -> Result<Option<FloatKind>, AdError> {
        let facts = self.tree(func, ptr).child(Step::Any).lookup(offset, size);
        let what = || {
            let function = &module.functions[func];
            let name = adc_ir::text::FunctionPrinter::new(module, function).value(ptr);
            format!("the {size} bytes at offset {offset} of {name} ({facts})")
        };
        kind_of_facts(&facts, what).map_err(|kind| error_at(module, func, at, kind))
    }

    /// Whether the SSA `value` holds float bits (an `i64` loaded from a `double`), for
    /// the instruction `at` that needs to know.
    pub fn value_float_kind(
        &self,
        module: &Module,
        func: FuncId,
        value: Value,
        at: Inst,
    ) -> Result<Option<FloatKind>, AdError> {
        let function = &module.functions[func];
        let ty = function.dfg.value_type(value);
        let facts = memory_of_value(self.tree(func, value), ty);
        let what = || {
            let name = adc_ir::text::FunctionPrinter::new(module, function).value(value);
            format!("{name} ({})", self.tree(func, value))
        };
        kind_of_facts(&facts, what).map_err(|kind| error_at(module, func, at, kind))
    }

    /// The float type whose bits the integer SSA `value` carries, for the reverse pass,
    /// which keeps such a value's adjoint as that float: `f64` for an `i64` copy of a
    /// `double` (clang's `memcpy` and struct copies), `<2 x f32>` for an `i64` holding
    /// two floats, `<2 x f64>` for a `<2 x i64>` holding two doubles. `None` when the
    /// bits are integers or pointers. Unknown or conflicting facts, or a width the float
    /// does not divide, are an error naming `at`.
    pub fn float_view(
        &self,
        module: &Module,
        func: FuncId,
        value: Value,
        at: Inst,
    ) -> Result<Option<Type>, AdError> {
        let Some(kind) = self.value_float_kind(module, func, value, at)? else {
            return Ok(None);
        };
        let ty = module.functions[func].dfg.value_type(value);
        let float = kind.ir_type();
        let lane_bits = ty.lane_type().int_bits().unwrap_or(0);
        let kind_bits = 8 * kind.size() as u32;
        let view = match ty {
            Type::Vector(_, lanes) if lane_bits == kind_bits => Some(Type::vector(float, *lanes)),
            _ if ty.is_int() && lane_bits == kind_bits => Some(float),
            _ if ty.is_int() && lane_bits > kind_bits && lane_bits.is_multiple_of(kind_bits) => {
                Some(Type::vector(float, lane_bits / kind_bits))
            }
            _ => None,
        };
        match view {
            Some(view) => Ok(Some(view)),
            None => {
                let function = &module.functions[func];
                let name = adc_ir::text::FunctionPrinter::new(module, function).value(value);
                Err(error_at(
                    module,
                    func,
                    at,
                    AdErrorKind::UndeducibleType {
                        what: format!("{name}, a {ty} that holds {} bits", kind.c_name()),
                    },
                ))
            }
        }
    }

    /// The scalar facts over the `len` bytes at `offset` behind `ptr`, sorted by offset
    /// (`None` as offset: a fact for every element): what a `memcpy` at `at` moves. An
    /// error when nothing is known or facts conflict.
    pub fn copy_layout(
        &self,
        module: &Module,
        func: FuncId,
        ptr: Value,
        offset: u64,
        len: u64,
        at: Inst,
    ) -> Result<Vec<(Option<u64>, BaseType)>, AdError> {
        let facts = self.tree(func, ptr).child(Step::Any).lookup(offset, len);
        let name = || {
            let function = &module.functions[func];
            adc_ir::text::FunctionPrinter::new(module, function).value(ptr)
        };
        if let Some(conflict) = facts.conflicts().next() {
            let what = format!("the copied bytes of {} (conflicting facts {conflict})", name());
            return Err(error_at(module, func, at, AdErrorKind::UndeducibleType { what }));
        }
        // A conflict whose record fell to the cap on records still left `Anything` behind.
        if facts.top_level().entries().any(|(_, base)| base == BaseType::Anything) {
            let what = format!("the copied bytes of {} (conflicting facts)", name());
            return Err(error_at(module, func, at, AdErrorKind::UndeducibleType { what }));
        }
        let layout: Vec<(Option<u64>, BaseType)> = facts
            .top_level()
            .entries()
            .map(|(path, base)| match path[0] {
                Step::Any => (None, base),
                Step::Offset(o) => (Some(o), base),
            })
            .collect();
        if layout.is_empty() {
            let what = format!("the {len} bytes at offset {offset} of {}", name());
            return Err(error_at(module, func, at, AdErrorKind::UndeducibleType { what }));
        }
        Ok(layout)
    }

    /// Applies the rules of one instruction; returns the trees that grew.
    fn visit_inst(
        &mut self,
        module: &Module,
        deps: &ModuleDeps,
        id: FuncId,
        inst: Inst,
        widen: bool,
    ) -> Vec<Grown> {
        let Some(types) = self.functions.remove(&id) else { return Vec::new() };
        let func = &module.functions[id];
        let mut solver = Solver {
            module,
            func,
            id,
            types,
            deps: &deps.functions[&id],
            widen,
            others: self,
            grown: Vec::new(),
        };
        solver.visit(inst);
        let Solver { types, grown, .. } = solver;
        self.functions.insert(id, types);
        grown
    }
}

fn error_at(module: &Module, func: FuncId, at: Inst, kind: AdErrorKind) -> AdError {
    AdError::new(Site::inst(module, &module.functions[func], at), kind)
}

/// Classifies the scalar facts of a memory-form tree (see `float_kind_at`).
fn kind_of_facts(
    facts: &TypeTree,
    what: impl Fn() -> String,
) -> Result<Option<FloatKind>, AdErrorKind> {
    let undeducible = |detail: String| AdErrorKind::UndeducibleType {
        what: if detail.is_empty() { what() } else { format!("{}: {detail}", what()) },
    };
    if let Some(conflict) = facts.conflicts().find(|c| c.path.len() == 1) {
        return Err(undeducible(format!("conflicting facts {conflict}")));
    }
    let scalars = facts.top_level();
    let mut kinds = BTreeSet::new();
    let mut other = false;
    for (_, base) in scalars.entries() {
        match base {
            BaseType::Float(kind) => {
                kinds.insert(kind);
            }
            BaseType::Integer | BaseType::Pointer => other = true,
            BaseType::Anything => return Err(undeducible("conflicting facts".into())),
        }
    }
    match (kinds.len(), other) {
        (0, false) => Err(undeducible(String::new())),
        (0, true) => Ok(None),
        (1, false) => Ok(kinds.into_iter().next()),
        _ => Err(undeducible("floats mixed with other data".into())),
    }
}

/// The tree every value starts from: its IR type's sure facts.
fn seed_function(func: &Function) -> FunctionTypes {
    let mut types = FunctionTypes::default();
    for (value, data) in func.dfg.values.iter() {
        let is_int_const = match data.def {
            ValueDef::Result(inst) => {
                matches!(func.inst(inst), InstructionData::Const { ty, .. } if ty.lane_type().is_int() && *ty.lane_type() != Type::I1)
            }
            ValueDef::Param(..) => false,
        };
        let seed = if is_int_const { TypeTree::new() } else { type_seed(&data.ty) };
        types.values.insert(value, seed);
    }
    if let Some(ret) = &func.signature.ret {
        types.ret = type_seed(ret);
    }
    types
}

/// The base type an IR scalar type guarantees.
fn scalar_seed(ty: &Type) -> Option<BaseType> {
    match ty {
        Type::F32 => Some(BaseType::Float(FloatKind::F32)),
        Type::F64 => Some(BaseType::Float(FloatKind::F64)),
        Type::Ptr(_) => Some(BaseType::Pointer),
        Type::I1 => Some(BaseType::Integer),
        _ => None,
    }
}

fn type_seed(ty: &Type) -> TypeTree {
    let mut tree = TypeTree::new();
    if ty.is_scalar() {
        if let Some(base) = scalar_seed(ty) {
            tree.insert(vec![Step::Any], base);
        }
        return tree;
    }
    for (offset, leaf) in leaves(ty) {
        if let Some(base) = scalar_seed(&leaf) {
            tree.insert(vec![Step::Offset(offset)], base);
        }
    }
    tree
}

/// `base` at every scalar of `ty` (the whole value for a scalar).
fn uniform(ty: &Type, base: BaseType) -> TypeTree {
    if ty.is_scalar() {
        return TypeTree::scalar(base);
    }
    let mut tree = TypeTree::new();
    for (offset, _) in leaves(ty) {
        tree.insert(vec![Step::Offset(offset)], base);
    }
    tree
}

/// The scalars of a vector or aggregate with their byte offsets (up to the offset cap).
fn leaves(ty: &Type) -> Vec<(u64, Type)> {
    let mut out = Vec::new();
    collect_leaves(ty, 0, &mut out);
    out
}

fn collect_leaves(ty: &Type, base: u64, out: &mut Vec<(u64, Type)>) {
    if base > MAX_OFFSET {
        return;
    }
    match ty {
        Type::Vector(elem, lanes) => {
            let lane_size = if **elem == Type::I1 { 0 } else { elem.size() };
            for lane in 0..u64::from(*lanes) {
                if lane_size == 0 {
                    break;
                }
                collect_leaves(elem, base + lane * lane_size, out);
            }
        }
        Type::Array(elem, n) => {
            for i in 0..*n {
                if base + i * elem.size() > MAX_OFFSET {
                    break;
                }
                collect_leaves(elem, base + i * elem.size(), out);
            }
        }
        Type::Struct(s) => {
            for (field, offset) in s.fields.iter().zip(s.field_offsets()) {
                collect_leaves(field, base + offset, out);
            }
        }
        scalar => out.push((base, scalar.clone())),
    }
}

/// A value's tree as the memory it would occupy at offset 0.
fn memory_of_value(tree: &TypeTree, ty: &Type) -> TypeTree {
    if !ty.is_scalar() {
        return tree.clone();
    }
    // A scalar's facts sit at `-1` ("its bytes"); in memory they start at offset 0.
    tree.map_paths(|path| {
        let mut path = path.to_vec();
        path[0] = Step::Offset(0);
        Some(path)
    })
}

/// The tree of a value of type `ty` read from memory described by `memory` at offset 0.
fn value_of_memory(memory: &TypeTree, ty: &Type) -> TypeTree {
    if ty.is_scalar() {
        return memory.only_scalar_at(0);
    }
    let within = memory.lookup(0, ty.size());
    let mut value = TypeTree::new();
    let leaf_offsets: Vec<u64> = leaves(ty).into_iter().map(|(o, _)| o).collect();
    for (path, base) in within.entries() {
        match path[0] {
            Step::Offset(_) => {
                value.insert(path.to_vec(), base);
            }
            Step::Any => {
                for offset in &leaf_offsets {
                    let mut at = path.to_vec();
                    at[0] = Step::Offset(*offset);
                    value.insert(at, base);
                }
            }
        }
    }
    value
}

/// What a TBAA access-type name says about the accessed scalar.
fn tbaa_base(name: &str) -> Option<BaseType> {
    match name {
        "double" => Some(BaseType::Float(FloatKind::F64)),
        "float" => Some(BaseType::Float(FloatKind::F32)),
        "any pointer" | "vtable pointer" => Some(BaseType::Pointer),
        "int" | "long" | "long long" | "short" | "bool" | "_Bool" | "unsigned int"
        | "unsigned long" | "unsigned long long" | "unsigned short" | "__int128" => {
            Some(BaseType::Integer)
        }
        // clang names typed pointers `p1 double`, `p2 int`, ...
        other if other.starts_with('p') && other[1..].starts_with(|c: char| c.is_ascii_digit()) => {
            Some(BaseType::Pointer)
        }
        _ => None,
    }
}

/// The floating-point library functions adc knows (all arguments and results float).
fn is_libm(name: &str) -> bool {
    const F64: &[&str] = &[
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
        "acosh", "atanh", "exp", "exp2", "expm1", "log", "log10", "log2", "log1p", "sqrt", "cbrt",
        "pow", "hypot", "fmod", "fabs", "floor", "ceil", "trunc", "round", "erf", "erfc", "tgamma",
        "lgamma", "fmin", "fmax", "copysign", "fma",
    ];
    F64.contains(&name) || name.strip_suffix('f').is_some_and(|n| F64.contains(&n))
}

/// Solves one function; other functions' trees are reachable through `others`.
struct Solver<'a> {
    module: &'a Module,
    func: &'a Function,
    id: FuncId,
    types: FunctionTypes,
    /// This function's flow graph: pointer walks, merges and their sources.
    deps: &'a FunctionDeps,
    /// The instruction was visited often: a constant-offset `ptradd` is read as a walk
    /// too (a walk through memory, `p = load slot; store p + 8, slot`, escapes the SSA
    /// cycle detection and would otherwise shift its facts one stride per visit).
    widen: bool,
    others: &'a mut TypeAnalysis,
    /// The trees that grew during this visit, for the worklist.
    grown: Vec<Grown>,
}

impl Solver<'_> {
    fn tree(&self, value: Value) -> TypeTree {
        self.types.values.get(&value).cloned().unwrap_or_default()
    }

    fn ty(&self, value: Value) -> &Type {
        self.func.dfg.value_type(value)
    }

    /// Joins `facts` into `value`'s tree; constants keep their seed (see module docs),
    /// but for a global's address, whose memory is the global's wherever it is used.
    fn add(&mut self, value: Value, facts: &TypeTree) -> bool {
        if facts.is_empty() || (self.func.dfg.is_const(value) && !self.is_global_address(value)) {
            return false;
        }
        let changed = self.types.values.entry(value).or_default().merge(facts);
        if changed {
            self.grown.push(Grown::Value(self.id, value));
        }
        changed
    }

    fn is_global_address(&self, value: Value) -> bool {
        let ValueDef::Result(inst) = self.func.dfg.value_def(value) else { return false };
        matches!(
            self.func.inst(inst),
            InstructionData::Const {
                value: adc_ir::Constant::Address { symbol: adc_ir::Symbol::Global(_), .. },
                ..
            }
        )
    }

    /// Joins `facts` into this function's return tree.
    fn add_return(&mut self, facts: &TypeTree) -> bool {
        let changed = self.types.ret.merge(facts);
        if changed {
            self.grown.push(Grown::Return(self.id));
        }
        changed
    }

    fn add_base(&mut self, value: Value, base: BaseType) -> bool {
        let facts = uniform(&self.ty(value).clone(), base);
        self.add(value, &facts)
    }

    /// Makes two values of the same type agree on everything.
    fn unify(&mut self, a: Value, b: Value) -> bool {
        let (ta, tb) = (self.tree(a), self.tree(b));
        self.add(a, &tb) | self.add(b, &ta)
    }

    /// `arg` is one of the values `merge` (a block parameter or `select`) can take.
    /// What the merge's uses say holds for every value it takes, so `arg` gets the
    /// merge's facts; the merge gets only what all its sources agree on, as Enzyme does
    /// for phis: `p = cond ? (M *)m : (double *)a` points to a double at offset 16 of
    /// both, and the pointer at offset 8 of `m` and double at offset 8 of `a` are no
    /// conflict. An argument derived from the merge around a loop (`p + 8`) says what
    /// later values of the merge are, and joins in.
    fn flow_into_merge(&mut self, arg: Value, merge: Value) -> bool {
        let merge_facts = self.tree(merge);
        let mut changed = self.add(arg, &merge_facts);
        let sources = self.deps.merge_sources.get(&merge).map(Vec::as_slice).unwrap_or_default();
        let derived =
            self.deps.cycles.get(&arg).is_some_and(|c| self.deps.cycles.get(&merge) == Some(c));
        if derived || sources.is_empty() {
            let facts = self.tree(arg);
            changed |= self.add(merge, &facts);
        } else {
            let mut agreed = self.tree(sources[0]);
            for source in &sources[1..] {
                agreed = agreed.meet(&self.tree(*source));
            }
            changed |= self.add(merge, &agreed);
        }
        changed
    }

    /// Makes two values agree on their own bytes (not on what they point to).
    fn unify_top(&mut self, a: Value, b: Value) -> bool {
        let (ta, tb) = (self.tree(a).top_level(), self.tree(b).top_level());
        self.add(a, &tb) | self.add(b, &ta)
    }

    fn has_top(&self, value: Value, base: BaseType) -> bool {
        self.tree(value).top_level().entries().any(|(_, b)| b == base)
    }

    /// The memory `ptr` points to.
    fn pointee(&self, ptr: Value) -> TypeTree {
        self.tree(ptr).child(Step::Any)
    }

    fn add_pointee(&mut self, ptr: Value, memory: &TypeTree) -> bool {
        let facts = memory.prefixed(Step::Any);
        self.add(ptr, &facts)
    }

    /// A scalar or aggregate `value` is stored at / loaded from offset 0 of `ptr`.
    fn unify_with_memory(&mut self, value: Value, ptr: Value) -> bool {
        let ty = self.ty(value).clone();
        let mut changed = self.add_base(ptr, BaseType::Pointer);
        let from_memory = value_of_memory(&self.pointee(ptr), &ty);
        changed |= self.add(value, &from_memory);
        let to_memory = memory_of_value(&self.tree(value), &ty);
        changed |= self.add_pointee(ptr, &to_memory);
        changed
    }

    /// Seeds the scalar accessed by `inst` from its TBAA name.
    fn tbaa_seed(&mut self, inst: Inst, value: Value, ptr: Value) -> bool {
        let Some(name) = self.func.dfg.tbaa[inst].clone() else { return false };
        let Some(base) = tbaa_base(&name) else { return false };
        if !self.ty(value).is_scalar() {
            return false;
        }
        self.add_base(value, base)
            | self.add_pointee(ptr, &TypeTree::from_entry(vec![Step::Offset(0)], base))
    }

    fn visit(&mut self, inst: Inst) -> bool {
        use InstructionData as I;
        let result = self.func.dfg.inst_result(inst);
        let data = self.func.inst(inst);
        match (data, result) {
            (I::Const { .. }, Some(r)) if self.deps.global_links.contains_key(&r) => {
                self.visit_global_address(r)
            }
            (I::Const { .. } | I::Fence { .. } | I::Unreachable, _) => false,
            (I::Unary { op, arg, .. }, Some(r)) => {
                if *op == UnaryOp::Freeze || op.is_float() {
                    self.unify(*arg, r)
                } else {
                    self.add_base(*arg, BaseType::Integer) | self.add_base(r, BaseType::Integer)
                }
            }
            (I::Binary { op, args, .. }, Some(r)) => self.visit_binary(*op, *args, r),
            (I::Fma { args, .. }, Some(r)) => {
                args.iter().fold(false, |c, a| c | self.unify_top(*a, r))
            }
            (I::Icmp { args, .. }, Some(_)) => {
                let mut changed = self.unify_top(args[0], args[1]);
                // `n > 1`, `i < 4`: a pointer or a float's bits is never compared with a
                // small nonzero count (null tests use 0; sign and class tests of float
                // bits use 0 or exponent masks far above this), so the other side counts.
                for (constant, other) in [(args[0], args[1]), (args[1], args[0])] {
                    let small_count = self
                        .func
                        .dfg
                        .const_int(constant)
                        .is_some_and(|c| c != 0 && c.unsigned_abs() <= u128::from(MAX_OFFSET));
                    if small_count && !self.ty(other).is_vector() {
                        changed |= self.add_base(other, BaseType::Integer);
                    }
                }
                changed
            }
            (I::Fcmp { .. }, _) => false,
            (I::Select { args, .. }, Some(r)) => {
                self.add_base(args[0], BaseType::Integer)
                    | self.flow_into_merge(args[1], r)
                    | self.flow_into_merge(args[2], r)
            }
            (I::Cast { op, arg, .. }, Some(r)) => self.visit_cast(*op, *arg, r),
            (I::Alloca { count, .. }, Some(r)) => {
                let mut changed = self.add_base(r, BaseType::Pointer);
                if let Some(count) = count {
                    changed |= self.add_base(*count, BaseType::Integer);
                }
                changed
            }
            (I::Load { ptr, .. }, Some(r)) => {
                self.tbaa_seed(inst, r, *ptr) | self.unify_with_memory(r, *ptr)
            }
            (I::Store { value, ptr, .. }, _) => {
                self.tbaa_seed(inst, *value, *ptr) | self.unify_with_memory(*value, *ptr)
            }
            (I::PtrAdd { ptr, offset, .. }, Some(r)) => self.visit_ptradd(inst, *ptr, *offset, r),
            (I::MemCopy { dst, src, len, .. }, _) => self.visit_memcpy(inst, *dst, *src, *len),
            (I::MemSet { dst, byte, len, .. }, _) => {
                self.add_base(*dst, BaseType::Pointer)
                    | self.add_base(*byte, BaseType::Integer)
                    | self.add_base(*len, BaseType::Integer)
            }
            (I::Call { callee, args, .. }, result) => self.visit_call(*callee, args, result),
            (I::CallIndirect { callee, .. }, _) => self.add_base(*callee, BaseType::Pointer),
            (I::ExtractLane { vector, index }, Some(r)) => {
                self.add_base(*index, BaseType::Integer) | self.visit_lane(*vector, r, *index)
            }
            (I::InsertLane { vector, value, index }, Some(r)) => {
                self.add_base(*index, BaseType::Integer)
                    | self.unify(*vector, r)
                    | self.visit_lane(r, *value, *index)
            }
            (I::Shuffle { args, mask }, Some(r)) => self.visit_shuffle(*args, mask, r),
            (I::Reduce { op, args, .. }, Some(r)) => {
                if op.is_float() {
                    false
                } else {
                    self.add_base(args[0], BaseType::Integer) | self.add_base(r, BaseType::Integer)
                }
            }
            (I::ExtractValue { aggregate, indices }, Some(r)) => {
                self.visit_field(*aggregate, indices, r)
            }
            (I::InsertValue { aggregate, value, indices }, Some(r)) => {
                self.unify(*aggregate, r) | self.visit_field(r, indices, *value)
            }
            (I::AtomicRmw { ptr, value, .. }, result) => {
                let mut changed = self.unify_with_memory(*value, *ptr);
                if let Some(r) = result {
                    changed |= self.unify(*value, r);
                }
                changed
            }
            (I::CmpXchg { ptr, expected, new, .. }, result) => {
                let mut changed =
                    self.unify_with_memory(*expected, *ptr) | self.unify(*expected, *new);
                if let Some(r) = result {
                    changed |= self.visit_field(r, &[0], *expected);
                }
                changed
            }
            (I::Jump { .. } | I::Brif { .. } | I::Switch { .. }, _) => self.visit_branch(data),
            (I::Return { value: Some(v) }, _) => {
                let tree = self.tree(*v);
                let ret = self.types.ret.clone();
                self.add_return(&tree) | self.add(*v, &ret)
            }
            _ => false,
        }
    }

    fn visit_binary(&mut self, op: BinaryOp, args: [Value; 2], r: Value) -> bool {
        use BinaryOp as B;
        if op.is_float() {
            return self.unify_top(args[0], r) | self.unify_top(args[1], r);
        }
        let int = BaseType::Integer;
        match op {
            B::Add | B::Sub => {
                let ptr = [
                    self.has_top(args[0], BaseType::Pointer),
                    self.has_top(args[1], BaseType::Pointer),
                ];
                // A constant operand is an integer offset when the other one is an integer.
                let ints = [
                    self.has_top(args[0], int) || self.func.dfg.is_const(args[0]),
                    self.has_top(args[1], int) || self.func.dfg.is_const(args[1]),
                ];
                let forward = if op == B::Sub && ptr[0] && ptr[1] {
                    self.add_base(r, int)
                } else if ptr[0] || ptr[1] {
                    self.add_base(r, BaseType::Pointer)
                } else if ints[0] && ints[1] {
                    self.add_base(r, int)
                } else {
                    false
                };
                // Backwards from an integer result (an index, a loop bound): a pointer
                // operand would have made the sum a pointer, so both addends are integers;
                // a difference is also `ptr - ptr`, so only a known integer operand makes
                // the other one an integer (`int - ptr` is no value, `ptr - int` a pointer).
                let backward = if !self.has_top(r, int) || ptr[0] || ptr[1] {
                    false
                } else if op == B::Add {
                    self.add_base(args[0], int) | self.add_base(args[1], int)
                } else if ints[0] != ints[1] {
                    let other = if ints[0] { args[1] } else { args[0] };
                    self.add_base(other, int)
                } else {
                    false
                };
                forward | backward
            }
            B::Shl | B::Lshr | B::Ashr => self.add_base(args[1], int) | self.add_base(r, int),
            B::And | B::Or | B::Xor => {
                // Bit operations on float bits (sign flips, fabs by mask) keep the
                // operand's type; a constant mask says nothing.
                let mut changed = false;
                for arg in args {
                    if !self.func.dfg.is_const(arg) {
                        changed |= self.unify_top(arg, r);
                    }
                }
                changed
            }
            _ => self.add_base(args[0], int) | self.add_base(args[1], int) | self.add_base(r, int),
        }
    }

    fn visit_cast(&mut self, op: CastOp, arg: Value, r: Value) -> bool {
        use CastOp as C;
        match op {
            C::Zext | C::Sext | C::Trunc => {
                self.add_base(arg, BaseType::Integer) | self.add_base(r, BaseType::Integer)
            }
            C::Fptoui | C::Fptosi => self.add_base(r, BaseType::Integer),
            C::Uitofp | C::Sitofp => self.add_base(arg, BaseType::Integer),
            C::Fpext | C::Fptrunc => false,
            C::Bitcast | C::Ptrtoint | C::Inttoptr | C::Addrspacecast => {
                let (from, to) = (self.ty(arg).clone(), self.ty(r).clone());
                let forward = value_of_memory(&memory_of_value(&self.tree(arg), &from), &to);
                let backward = value_of_memory(&memory_of_value(&self.tree(r), &to), &from);
                self.add(r, &forward) | self.add(arg, &backward)
            }
        }
    }

    /// `r = @g + k` and the representative `@g + j` of the same global (see
    /// `FunctionDeps::global_links`): related as by a `ptradd` of `k - j`.
    fn visit_global_address(&mut self, r: Value) -> bool {
        let (representative, delta) = self.deps.global_links[&r];
        let (base_memory, result_memory) = (self.pointee(representative), self.pointee(r));
        self.add_base(r, BaseType::Pointer)
            | self.add_base(representative, BaseType::Pointer)
            | self.add_pointee(r, &base_memory.shifted(delta.saturating_neg()))
            | self.add_pointee(representative, &result_memory.shifted(delta))
    }

    fn visit_ptradd(&mut self, inst: Inst, ptr: Value, offset: Value, r: Value) -> bool {
        let mut changed = self.add_base(ptr, BaseType::Pointer)
            | self.add_base(r, BaseType::Pointer)
            | self.add_base(offset, BaseType::Integer);
        let (base_memory, result_memory) = (self.pointee(ptr), self.pointee(r));
        let walk_stride = self
            .func
            .dfg
            .const_int(offset)
            .filter(|_| self.widen || self.deps.pointer_walks.contains(&inst))
            .and_then(|c| u64::try_from(c.unsigned_abs()).ok())
            .filter(|s| *s > 0);
        if let Some(stride) = walk_stride {
            // `p' = p + c` around a loop visits `p + c`, `p + 2c`, ...: shifting facts
            // would add one offset per round up to the offset cap, so treat the walk as
            // an array of `c`-byte elements, like `p + c * i`.
            changed |= self.add_pointee(r, &modulo(&base_memory, stride, false));
            changed |= self.add_pointee(ptr, &modulo(&result_memory, stride, true));
            return changed;
        }
        if let Some(c) = self.func.dfg.const_int(offset) {
            let Ok(c) = i64::try_from(c) else { return changed };
            changed |= self.add_pointee(r, &base_memory.shifted(c.saturating_neg()));
            changed |= self.add_pointee(ptr, &result_memory.shifted(c));
            return changed;
        }
        let pattern = offset_pattern(self.func, offset, 0).filter(|(s, _)| *s > 1);
        let Some((stride, phase)) = pattern else {
            // Unknown offset: only facts that hold at every offset travel.
            changed |= self.add_pointee(r, &only_any(&base_memory));
            changed |= self.add_pointee(ptr, &result_memory.at_any_offset());
            return changed;
        };
        let bounded = self.func.dfg.index_bounds[inst];
        if phase != 0 && bounded.is_none() {
            // `ptr + stride * i + phase`: the element's residue `r` is the base's
            // `r + phase`.
            let forward = rotated(&modulo(&base_memory, stride, false), -phase, stride);
            let backward = rotated(&modulo(&result_memory, stride, true), phase, stride);
            changed |= self.add_pointee(r, &forward);
            changed |= self.add_pointee(ptr, &backward);
            return changed;
        }
        // A bounded index (`p->a[i]`) lays elements out from the array's start: only
        // the stride common to the elements and the phase counts there.
        let stride = gcd(stride, phase as u64);
        if let Some((start, end)) = bounded {
            // `p->a[i]`: an array of `stride`-byte elements at `[start, end)` of the object;
            // its elements, not every offset of the object, are laid out alike.
            if let Some(backward) = spread(&result_memory, stride, start, end) {
                let forward = modulo(&within(&base_memory, start, end), stride, false);
                changed |= self.add_pointee(r, &forward);
                changed |= self.add_pointee(ptr, &backward);
                return changed;
            }
        }
        // `ptr + stride * i`: an array of `stride`-byte elements, all laid out alike.
        let forward = modulo(&base_memory, stride, false);
        let backward = modulo(&result_memory, stride, true);
        changed |= self.add_pointee(r, &forward);
        changed |= self.add_pointee(ptr, &backward);
        changed
    }

    fn visit_memcpy(&mut self, inst: Inst, dst: Value, src: Value, len: Value) -> bool {
        let mut changed = self.add_base(dst, BaseType::Pointer)
            | self.add_base(src, BaseType::Pointer)
            | self.add_base(len, BaseType::Integer);
        changed |= self.copy_facts(dst, src, len);
        if let Some(base) = self.func.dfg.tbaa[inst].as_deref().and_then(tbaa_base) {
            let mut memory = TypeTree::new();
            match (self.func.dfg.const_int(len), base) {
                (Some(n), BaseType::Float(kind)) if n > 0 => {
                    let n = u64::try_from(n).unwrap_or(0).min(MAX_OFFSET);
                    for offset in (0..n).step_by(kind.size() as usize) {
                        memory.insert(vec![Step::Offset(offset)], base);
                    }
                }
                _ => {
                    memory.insert(vec![Step::Any], base);
                }
            }
            changed |= self.add_pointee(dst, &memory) | self.add_pointee(src, &memory);
        }
        changed
    }

    /// The `len` bytes behind `dst` and `src` hold the same types.
    fn copy_facts(&mut self, dst: Value, src: Value, len: Value) -> bool {
        let (dst_memory, src_memory) = (self.pointee(dst), self.pointee(src));
        let (to_dst, to_src) = match self.func.dfg.const_int(len) {
            Some(n) => {
                let n = u64::try_from(n).unwrap_or(0);
                (src_memory.lookup(0, n), dst_memory.lookup(0, n))
            }
            None => (src_memory, dst_memory),
        };
        self.add_pointee(dst, &to_dst) | self.add_pointee(src, &to_src)
    }

    fn visit_call(&mut self, callee: FuncId, args: &[Value], result: Option<Value>) -> bool {
        let target = &self.module.functions[callee];
        let analyzed = callee == self.id || self.others.functions.contains_key(&callee);
        if target.is_declaration() || !analyzed {
            return self.visit_library_call(&target.name, args, result);
        }
        if target.name == TAPE_PUSH {
            return self.visit_tape_push(args, result);
        }
        let params = target.params().to_vec();
        let mut changed = false;
        for (arg, param) in args.iter().zip(&params) {
            let arg_tree = self.tree(*arg);
            let param_tree = if callee == self.id {
                self.tree(*param)
            } else {
                self.others.tree(callee, *param).clone()
            };
            changed |= self.add(*arg, &param_tree);
            if callee == self.id {
                changed |= self.add(*param, &arg_tree);
            } else if let Some(types) = self.others.functions.get_mut(&callee) {
                if types.values.entry(*param).or_default().merge(&arg_tree) {
                    self.grown.push(Grown::Value(callee, *param));
                }
            }
        }
        if let Some(r) = result {
            let ret = if callee == self.id {
                self.types.ret.clone()
            } else {
                self.others.return_tree(callee).clone()
            };
            changed |= self.add(r, &ret);
            let tree = self.tree(r);
            if callee == self.id {
                changed |= self.add_return(&tree);
            } else if let Some(types) = self.others.functions.get_mut(&callee) {
                if types.ret.merge(&tree) {
                    self.grown.push(Grown::Return(callee));
                }
            }
        }
        changed
    }

    /// `__adc_tape_push(tape, size)` returns the next `size`-byte record of the buffer
    /// that the tape header `{ptr data, i64 top, i64 capacity}` holds. Every tape of a
    /// derivative calls the one helper with records of its own layout (an `i64` branch
    /// index in one, a `double` and an `int` in another): joining them all through the
    /// helper's return tree would make every tape a conflict, so each call relates its
    /// own header and record, as a derivative of the derivative needs (reverse over
    /// reverse).
    fn visit_tape_push(&mut self, args: &[Value], result: Option<Value>) -> bool {
        let int = BaseType::Integer;
        let [header, size] = args else { return false };
        let mut header_memory = TypeTree::from_entry(vec![Step::Offset(0)], BaseType::Pointer);
        header_memory.insert(vec![Step::Offset(8)], int);
        header_memory.insert(vec![Step::Offset(16)], int);
        let mut changed = self.add_base(*size, int)
            | self.add_base(*header, BaseType::Pointer)
            | self.add_pointee(*header, &header_memory);
        let Some(record) = result else { return changed };
        changed |= self.add_base(record, BaseType::Pointer);
        let Some(stride) = self.func.dfg.const_int(*size).and_then(|s| u64::try_from(s).ok())
        else {
            return changed;
        };
        if stride == 0 {
            return changed;
        }
        let buffer = self.pointee(*header).child(Step::Offset(0));
        let records = modulo(&self.pointee(record), stride, false);
        changed |= self.add_pointee(record, &modulo(&buffer, stride, false));
        changed |= self.add_pointee(*header, &records.prefixed(Step::Offset(0)));
        changed
    }

    fn visit_library_call(&mut self, name: &str, args: &[Value], result: Option<Value>) -> bool {
        let int = BaseType::Integer;
        let mut changed = false;
        match (HeapFunction::of(name), args, result) {
            (Some(HeapFunction::Allocate(a)), args, result) => {
                for operand in [Some(a.bytes), a.count, a.align].into_iter().flatten() {
                    if let Some(operand) = args.get(operand) {
                        changed |= self.add_base(*operand, int);
                    }
                }
                let block = match a.out {
                    Some(out) => args.get(out).copied(),
                    None => result,
                };
                if let Some(block) = block {
                    changed |= self.add_base(block, BaseType::Pointer);
                }
                return changed;
            }
            (Some(HeapFunction::Reallocate), [p, n], Some(r)) => {
                return self.add_base(*n, int) | self.unify(*p, r);
            }
            (Some(HeapFunction::Release), [p, ..], _) => {
                return self.add_base(*p, BaseType::Pointer);
            }
            _ => {}
        }
        match (name, args, result) {
            ("memcpy" | "memmove", [dst, src, len], result) => {
                changed |= self.add_base(*dst, BaseType::Pointer)
                    | self.add_base(*src, BaseType::Pointer)
                    | self.add_base(*len, int)
                    | self.copy_facts(*dst, *src, *len);
                if let Some(r) = result {
                    changed |= self.unify(*dst, r);
                }
            }
            ("memset", [dst, byte, len], _) => {
                changed |= self.add_base(*dst, BaseType::Pointer)
                    | self.add_base(*byte, int)
                    | self.add_base(*len, int);
            }
            ("abs" | "labs" | "llabs", [x], Some(r)) => {
                changed |= self.add_base(*x, int) | self.add_base(r, int);
            }
            ("ldexp" | "ldexpf", [_, n], _) => changed |= self.add_base(*n, int),
            ("frexp" | "frexpf", [_, exponent], _) => {
                let memory = TypeTree::from_entry(vec![Step::Offset(0)], int);
                changed |= self.add_pointee(*exponent, &memory);
            }
            (name, args, result) if is_libm(name) => {
                for value in args.iter().copied().chain(result) {
                    if let Some(kind) = FloatKind::of_type(self.ty(value)) {
                        changed |= self.add_base(value, BaseType::Float(kind));
                    }
                }
            }
            _ => {}
        }
        changed
    }

    fn visit_lane(&mut self, vector: Value, scalar: Value, index: Value) -> bool {
        let lane_ty = self.ty(scalar).clone();
        let lane_size = lane_ty.size();
        let lanes = u64::from(self.ty(vector).lanes());
        let vector_tree = self.tree(vector);
        let scalar_memory = memory_of_value(&self.tree(scalar), &lane_ty);
        let positions: Vec<u64> = match self.func.dfg.const_int(index) {
            Some(i) => u64::try_from(i).ok().filter(|i| *i < lanes).into_iter().collect(),
            None => (0..lanes).collect(),
        };
        let mut changed = false;
        for lane in positions {
            let offset = lane * lane_size;
            let lane_tree = value_of_memory(&vector_tree.lookup(offset, lane_size), &lane_ty);
            changed |= self.add(scalar, &lane_tree);
            changed |= self.add(vector, &scalar_memory.shifted(offset as i64));
        }
        changed
    }

    fn visit_shuffle(&mut self, args: [Value; 2], mask: &[Option<u32>], r: Value) -> bool {
        let lane_size = self.ty(r).lane_type().size();
        let lanes = u64::from(self.ty(args[0]).lanes());
        let mut changed = false;
        for (out_lane, source) in mask.iter().enumerate() {
            let Some(source) = source else { continue };
            let source = u64::from(*source);
            let (operand, in_lane) =
                if source < lanes { (args[0], source) } else { (args[1], source - lanes) };
            let (from, to) = (in_lane * lane_size, out_lane as u64 * lane_size);
            let forward = self.tree(operand).lookup(from, lane_size).shifted(to as i64);
            let backward = self.tree(r).lookup(to, lane_size).shifted(from as i64);
            changed |= self.add(r, &forward) | self.add(operand, &backward);
        }
        changed
    }

    /// `field` is the member at `indices` of `aggregate`.
    fn visit_field(&mut self, aggregate: Value, indices: &[u32], field: Value) -> bool {
        let mut ty = self.ty(aggregate).clone();
        let mut offset = 0;
        for index in indices {
            let Some(at) = ty.element_offset(u64::from(*index)) else { return false };
            let Some(inner) = ty.element_type(u64::from(*index)).cloned() else { return false };
            offset += at;
            ty = inner;
        }
        let from_aggregate = value_of_memory(&self.tree(aggregate).lookup(offset, ty.size()), &ty);
        let to_aggregate = memory_of_value(&self.tree(field), &ty).shifted(offset as i64);
        self.add(field, &from_aggregate) | self.add(aggregate, &to_aggregate)
    }

    fn visit_branch(&mut self, data: &InstructionData) -> bool {
        let mut changed = match data {
            InstructionData::Brif { cond, .. } => self.add_base(*cond, BaseType::Integer),
            InstructionData::Switch { value, .. } => self.add_base(*value, BaseType::Integer),
            _ => false,
        };
        for target in data.branch_targets() {
            let params = self.func.dfg.block_params(target.block).to_vec();
            for (arg, param) in target.args.iter().zip(params) {
                changed |= self.flow_into_merge(*arg, param);
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adc_ir::text::parse_module;

    fn analyze(text: &str) -> (Module, TypeAnalysis) {
        let module = parse_module(text).expect("parses");
        let analysis = TypeAnalysis::analyze(&module);
        (module, analysis)
    }

    fn tree_of(module: &Module, analysis: &TypeAnalysis, func: &str, value: &str) -> String {
        let id = module.function_by_name(func).unwrap();
        let f = &module.functions[id];
        let v = f.dfg.values.keys().find(|v| f.dfg.value_name(*v) == Some(value)).unwrap();
        analysis.tree(id, v).to_string()
    }

    #[test]
    fn load_of_double_types_the_pointer() {
        let (m, a) =
            analyze("func @f(%p: ptr) -> f64 {\n^e:\n  %x = load f64, %p, align 8\n  ret %x\n}\n");
        assert_eq!(tree_of(&m, &a, "f", "p"), "{[-1]:Pointer, [-1,0]:Float@double}");
    }

    #[test]
    fn i64_copy_is_typed_by_the_other_side() {
        let (m, a) = analyze(
            "func @f(%p: ptr, %q: ptr) {\n^e:\n  %x = load i64, %p, align 8\n  store %x, %q, align 8\n  %y = load f64, %q, align 8\n  ret\n}\n",
        );
        assert_eq!(tree_of(&m, &a, "f", "x"), "{[-1]:Float@double}");
        assert_eq!(tree_of(&m, &a, "f", "p"), "{[-1]:Pointer, [-1,0]:Float@double}");
    }

    #[test]
    fn interprocedural_facts_reach_the_caller() {
        let (m, a) = analyze(
            "func @g(%p: ptr) -> f64 {\n^e:\n  %x = load f64, %p, align 8\n  ret %x\n}\nfunc @f(%q: ptr) -> f64 {\n^e:\n  %r = call @g(%q)\n  ret %r\n}\n",
        );
        assert_eq!(tree_of(&m, &a, "f", "q"), "{[-1]:Pointer, [-1,0]:Float@double}");
    }

    #[test]
    fn tbaa_names_type_an_i64_access() {
        let mut module = parse_module(
            "func @f(%p: ptr, %q: ptr) {\n^e:\n  %x = load i64, %p, align 8\n  store %x, %q, align 8\n  ret\n}\n",
        )
        .unwrap();
        let id = module.function_by_name("f").unwrap();
        let func = &mut module.functions[id];
        let load = func.layout.insts().next().unwrap().1;
        func.dfg.tbaa[load] = Some("double".into());
        let analysis = TypeAnalysis::analyze(&module);
        assert_eq!(tree_of(&module, &analysis, "f", "q"), "{[-1]:Pointer, [-1,0]:Float@double}");
        let store = module.functions[id].layout.insts().nth(1).unwrap().1;
        let q = module.functions[id].params()[1];
        let kind = analysis.float_kind_at(&module, id, q, 0, 8, store).unwrap();
        assert_eq!(kind, Some(FloatKind::F64));
    }

    #[test]
    fn array_of_structs_keeps_the_element_layout() {
        // struct {int n; double v;} a[]; a[i].n and a[i].v with a 16-byte stride.
        let (m, a) = analyze(
            "func @f(%a: ptr, %i: i64) -> f64 {\n^e:\n  %c16 = const i64 16\n  %off = mul i64 %i, %c16\n  %e = ptradd ptr %a, %off\n  %n = load i32, %e, align 4\n  %c8 = const i64 8\n  %vp = ptradd ptr %e, %c8\n  %v = load f64, %vp, align 8\n  %nf = sitofp %n to f64\n  %r = fmul f64 %v, %nf\n  ret %r\n}\n",
        );
        assert_eq!(
            tree_of(&m, &a, "f", "a"),
            "{[-1]:Pointer, [-1,0]:Integer, [-1,8]:Float@double}"
        );
        let id = m.function_by_name("f").unwrap();
        let base = m.functions[id].params()[0];
        assert!(a.tree(id, base).conflicts().next().is_none());
    }

    /// `struct { double a[4]; int n; } *p`: `p->a[i]` (bounded by the importer to the
    /// array's bytes 0..32) and `p->n`. Without the bound, the doubles spread to every
    /// offset of the struct and conflict with the int at 32.
    #[test]
    fn bounded_index_keeps_the_array_in_its_bytes() {
        let text = "func @f(%p: ptr, %i: i64) -> f64 {\n^e:\n  %c8 = const i64 8\n  %off = mul i64 %i, %c8\n  %e = ptradd ptr %p, %off\n  %v = load f64, %e, align 8\n  %c32 = const i64 32\n  %np = ptradd ptr %p, %c32\n  %n = load i32, %np, align 4\n  %nf = sitofp %n to f64\n  %r = fmul f64 %v, %nf\n  ret %r\n}\n";
        let (unbounded, a) = analyze(text);
        let id = unbounded.function_by_name("f").unwrap();
        let p = unbounded.functions[id].params()[0];
        assert!(a.tree(id, p).conflicts().next().is_some(), "{}", a.tree(id, p));

        let mut module = parse_module(text).unwrap();
        let func = &mut module.functions[id];
        let index = func.layout.insts().nth(2).unwrap().1;
        func.dfg.index_bounds[index] = Some((0, 32));
        let analysis = TypeAnalysis::analyze(&module);
        assert_eq!(
            tree_of(&module, &analysis, "f", "p"),
            "{[-1]:Pointer, [-1,0]:Float@double, [-1,8]:Float@double, [-1,16]:Float@double, \
             [-1,24]:Float@double, [-1,32]:Integer}"
        );
        assert!(analysis.tree(id, p).conflicts().next().is_none());
    }

    #[test]
    fn unknown_offset_keeps_only_facts_for_every_element() {
        let (m, a) = analyze(
            "func @f(%a: ptr, %o: i64) -> f64 {\n^e:\n  %e = ptradd ptr %a, %o\n  %v = load f64, %e, align 8\n  ret %v\n}\n",
        );
        assert_eq!(tree_of(&m, &a, "f", "a"), "{[-1]:Pointer, [-1,-1]:Float@double}");
    }

    #[test]
    fn constants_take_no_facts_from_their_uses() {
        let (m, a) = analyze(
            "func @f(%p: ptr, %q: ptr) {\n^e:\n  %z = const i64 0\n  store %z, %p, align 8\n  %x = load f64, %p, align 8\n  %r = ptradd ptr %q, %z\n  ret\n}\n",
        );
        assert_eq!(tree_of(&m, &a, "f", "z"), "{}");
        assert_eq!(tree_of(&m, &a, "f", "p"), "{[-1]:Pointer, [-1,0]:Float@double}");
    }

    /// `loops` loops in sequence, each walking two pointers by 8 bytes (one read as
    /// doubles, one written with a double's bits as `i64`), indexing `%x` by a variable
    /// offset and counting with an integer.
    fn generated_loops(loops: usize) -> String {
        let mut text = String::from(
            "func @big(%x: ptr, %y: ptr, %n: i64) -> f64 {\n^entry:\n  %zero = const i64 0\n  %acc = const f64 0.0\n  jump ^head0(%zero, %x, %y, %acc)\n",
        );
        for k in 0..loops {
            let exit = if k + 1 == loops {
                format!("  jump ^done(%acc{k})\n")
            } else {
                format!("  jump ^head{}(%zero, %x, %y, %acc{k})\n", k + 1)
            };
            text += &format!(
                "^head{k}(%i{k}: i64, %p{k}: ptr, %q{k}: ptr, %acc{k}: f64):
  %more{k} = icmp slt i64 %i{k}, %n
  brif %more{k}, ^body{k}, ^exit{k}
^body{k}:
  %v{k} = load f64, %p{k}, align 8
  %c{k} = const f64 2.0
  %w{k} = fmul f64 %v{k}, %c{k}
  %bits{k} = bitcast %w{k} to i64
  store %bits{k}, %q{k}, align 8
  %eight{k} = const i64 8
  %off{k} = mul i64 %i{k}, %eight{k}
  %xi{k} = ptradd ptr %x, %off{k}
  %xv{k} = load f64, %xi{k}, align 8
  %sum{k} = fadd f64 %w{k}, %xv{k}
  %accn{k} = fadd f64 %acc{k}, %sum{k}
  %pn{k} = ptradd ptr %p{k}, %eight{k}
  %qn{k} = ptradd ptr %q{k}, %eight{k}
  %one{k} = const i64 1
  %inc{k} = add i64 %i{k}, %one{k}
  jump ^head{k}(%inc{k}, %pn{k}, %qn{k}, %accn{k})
^exit{k}:
{exit}"
            );
        }
        text += "^done(%r: f64):\n  ret %r\n}\n";
        text
    }

    #[test]
    fn pointer_walk_becomes_an_array_in_few_visits() {
        let (m, a) = analyze(&generated_loops(1));
        assert_eq!(tree_of(&m, &a, "big", "p0"), "{[-1]:Pointer, [-1,-1]:Float@double}");
        assert_eq!(tree_of(&m, &a, "big", "q0"), "{[-1]:Pointer, [-1,-1]:Float@double}");
        assert_eq!(tree_of(&m, &a, "big", "bits0"), "{[-1]:Float@double}");
        assert_eq!(tree_of(&m, &a, "big", "i0"), "{[-1]:Integer}");
        assert!(a.worklist_visits() < 200, "{} visits", a.worklist_visits());
    }

    #[test]
    fn worklist_visits_grow_linearly_with_function_size() {
        let loops = 300;
        let (m, a) = analyze(&generated_loops(loops));
        let id = m.function_by_name("big").unwrap();
        let insts = m.functions[id].layout.insts().count();
        assert!(insts > 5000, "{insts} instructions");
        // Every value's tree grows a bounded number of times and each growth re-visits
        // only its few users: a small constant number of visits per instruction.
        let visits = a.worklist_visits();
        assert!(visits <= 8 * insts, "{visits} visits for {insts} instructions");
        let last = format!("q{}", loops - 1);
        assert_eq!(tree_of(&m, &a, "big", &last), "{[-1]:Pointer, [-1,-1]:Float@double}");
    }
}
