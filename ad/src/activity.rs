//! Activity analysis: which values and instructions of the differentiated function take
//! part in the derivative, and which pointers need a shadow.
//!
//! API: [`Activity::analyze`]`(module, request, types, facts)` for `request.function`, then
//! [`Activity::is_active_value`], [`Activity::is_active_inst`], [`Activity::needs_shadow`];
//! [`print_activity`] renders it for tests and `adc analyze --print activity`.
//!
//! Rules (Enzyme's up/down split, solved together to a fixpoint):
//!
//! - **Memory classes.** Pointers derived from one another (`ptradd`, address casts,
//!   `ptrtoint`/`inttoptr`, `select`, block parameters, `realloc`) form one class: a
//!   store through any of them is visible through all. A class is *shadowed* (holds
//!   differentials) when it contains a `Dup`/`DupNoNeed` pointer argument, receives a
//!   store of a value that carries a differential or of a shadowed pointer, is the
//!   destination of a copy from a shadowed class, holds pointers loaded from shadowed
//!   memory, or is passed to a call that may write its arguments together with something
//!   active. A class containing an `enzyme_const` (`Const`) pointer argument is never
//!   shadowed: what the caller declared constant stays constant, as in Enzyme, and so
//!   does memory reached through pointers loaded from it.
//! - **Pointers that calls return** (other than allocators') may point into the memory of
//!   the call's pointer arguments (`&v[i]`, `b->data + i`), whatever the callee's memory
//!   effects: the result's class and the arguments' classes share being shadowed and
//!   being useful, without being merged (so a `Const` and a `Dup` argument of one call
//!   stay apart). A pointer stored into shadowed memory is shadowed: the shadow memory
//!   holds the shadows of the pointers the primal memory holds.
//! - **Indirect calls** follow the rules of direct calls with the joined effects of every
//!   function they may reach (the module's address-taken functions of their type, the
//!   candidates the synthesis dispatches among); with no candidate, every pointer
//!   argument of a call with an active operand is shadowed and useful.
//! - **Up (carries a differential).** Active arguments (and `Dup` float scalars in
//!   forward mode); loads of float data from shadowed classes; results of operations,
//!   block parameters and calls with a carrying operand (calls that may read memory also
//!   carry when they get a shadowed pointer). Only values that may hold float bits carry:
//!   their IR type has floats, or the type analysis does not prove them integers or
//!   pointers. Comparisons, conversions between integers and floats and integer-only
//!   values never carry; integers that `zext`, `trunc`, shifts and bit operations make
//!   from carrying bits do (floats packed into an `i64`), whatever the type analysis
//!   calls them, so a derivative they carry is refused rather than dropped.
//! - **Down (reaches the output).** The returned value when the return is active; values
//!   stored into a *useful* class, which is a shadowed class that the caller sees (one
//!   holding an argument, a global, a pointer stored into useful memory, or a pointer
//!   loaded from useful memory: a struct's pointer field, a `double **`, row pointers)
//!   or that a useful load reads; operands of a useful operation (not branch conditions or
//!   `select` conditions); the arguments of a useful call, or of a call that may write
//!   useful memory.
//! - **Active** values carry and reach; a pointer is active when its class is shadowed and
//!   useful ([`Activity::needs_shadow`]). An instruction is active when its result is,
//!   when it writes shadowed memory (a store of float data or of a shadowed pointer — even
//!   an inactive value, whose shadow must be zeroed — a copy, a memset, an atomic), when
//!   it is a call with an active argument, or a call whose callee may write a global
//!   shadowed from the start (reverse mode: a helper updating `static double g[4]` in
//!   place, with no argument for it). A `readnone` call whose arguments are inactive is
//!   inactive.
//!
//! **Globals.** Constant globals (and mutable ones nothing writes) are inactive: what
//! they hold is a constant of the program. In reverse mode a mutable global (defined in
//! the module, default address space) whose type holds floats, or a `char` array, and
//! that some function of the module writes (a store, copy or set through its address, or
//! its address passed to a call, stored away or returned) may carry derivatives between
//! functions, so its class is shadowed from the start in every function of the module,
//! whichever function writes it ([`shadowed_globals`]: one module-wide answer, so a split
//! callee and its caller agree about a global both touch); the differentiator gives it a
//! zero-initialised shadow global `__adc_shadow_<name>` ([`SHADOW_GLOBAL_PREFIX`]), which
//! a derivative called from user code starts by zeroing. Globals holding only integers (a
//! counter, an allocator's offset) never carry and stay inactive: their memory classes
//! are constant unless the function shows float data in them (then adc refuses them a
//! shadow by name), and a value carrying a derivative stored into one is an error. Other
//! globals become shadowed like any other memory, when an active value is stored into
//! them; stores into them are useful, because the caller sees globals. Forward mode keeps
//! the older rule (no seeding) and refuses globals that need a shadow. Calls to other
//! defined functions are treated conservatively through their effects.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use adc_ir::{
    BinaryOp, CastOp, Constant, FuncAttrs, FuncId, Function, GlobalId, HeapFunction, Inst,
    InstructionData, Module, Signature, Symbol, Type, Value, ValueDef,
};
use adc_passes::effects::{Effects, ModuleEffects};
use adc_passes::manager::AnalysisManager;

use crate::error::{AdError, AdErrorKind, Site};

/// A pointer loaded from memory with a shadow merged with pointers into `enzyme_const`
/// memory (see `Solver::check_constant_merges`); the advice is the one every
/// mixed-activity refusal gives (`crate::reverse` has the others).
const MIXED_ACTIVITY_MERGE: &str = "a pointer loaded from memory that has a shadow, merged \
     (by a phi or select) with pointers into inactive memory (such as an `enzyme_const` \
     argument's), where the derivative needs to know which one it holds; passing that \
     argument as `enzyme_dup` avoids it";

use crate::request::{
    has_float, may_carry_float_bits, ArgActivity, DiffMode, DiffRequest, RetActivity,
};
use crate::typetree::{BaseType, TypeAnalysis};
use globals::{globals_reached, holds_integers_only};
pub use globals::{
    shadow_globals_of, shadowed_globals, shadowed_globals_reached, SHADOW_GLOBAL_PREFIX,
};

/// What the activity analysis and the synthesis need to know of the whole module, computed
/// once per module state (one synthesis and the split functions it queues) rather than
/// per call or per fixpoint pass: the effects of every function (shared with alias
/// analysis) and the checked registrations (custom derivatives, `__enzyme_inactivefn`).
pub struct ModuleFacts {
    pub effects: Rc<ModuleEffects>,
    pub registrations: crate::custom::Registrations,
    /// Wall-clock time of the activity analyses run with these facts (see
    /// [`RequestAnalyses::record_activity`]).
    pub activity_time: std::cell::Cell<std::time::Duration>,
}

impl ModuleFacts {
    /// The effects cover the functions of `scope` (a request's, see
    /// `callees::analysis_scope`; the whole module when `None`). An error when a
    /// registration global is malformed.
    pub fn new(module: &Module, scope: Option<&HashSet<FuncId>>) -> Result<ModuleFacts, AdError> {
        let effects = ModuleEffects::new_in_scope(module, &mut AnalysisManager::new(), scope);
        Ok(ModuleFacts {
            effects: Rc::new(effects),
            registrations: crate::custom::Registrations::read(module)?,
            activity_time: Default::default(),
        })
    }
}

/// The analyses of each request, with what they keep between requests: the module's
/// direct calls (for each request's scope, `callees::analysis_scope`) and the time spent,
/// which `adc build --time-passes` reports.
#[derive(Debug, Default)]
pub struct RequestAnalyses {
    calls: crate::callees::CallIndex,
    /// Wall-clock time of every [`RequestAnalyses::analyze`] so far.
    pub time: std::time::Duration,
    /// Wall-clock time of the activity analyses of the syntheses so far.
    pub activity_time: std::time::Duration,
}

impl RequestAnalyses {
    /// The type trees and module facts a synthesis of `root` reads, computed on the
    /// scope of `root` alone.
    pub fn analyze(
        &mut self,
        module: &Module,
        root: FuncId,
    ) -> Result<(TypeAnalysis, ModuleFacts), AdError> {
        let start = std::time::Instant::now();
        let scope = crate::callees::analysis_scope(module, root, &mut self.calls);
        let types = TypeAnalysis::analyze_scope(module, Some(&scope));
        let facts = ModuleFacts::new(module, Some(&scope));
        self.time += start.elapsed();
        Ok((types, facts?))
    }

    /// Adds the activity analyses run with `facts` (a synthesis is done with them).
    pub fn record_activity(&mut self, facts: &ModuleFacts) {
        self.activity_time += facts.activity_time.take();
    }
}

/// The two facts the solver keeps per memory class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mark {
    Shadowed,
    Useful,
}

/// The activity of one request's function (see the module documentation).
#[derive(Clone, Debug)]
pub struct Activity {
    pub function: FuncId,
    active_values: HashSet<Value>,
    active_insts: HashSet<Inst>,
    shadowed_values: HashSet<Value>,
}

impl Activity {
    /// Analyzes `request.function`; an error when the request does not fit it.
    pub fn analyze(
        module: &Module,
        request: &DiffRequest,
        types: &TypeAnalysis,
        facts: &ModuleFacts,
    ) -> Result<Activity, AdError> {
        let id = request.function;
        let Some(func) = module.functions.get(id) else {
            return Err(AdError::new(
                Site::function(&format!("{id}")),
                AdErrorKind::Unsupported { what: format!("a request for unknown function {id}") },
            ));
        };
        check_request(func, request)?;
        let start = std::time::Instant::now();
        let mut solver = Solver::new(module, func, id, request, types, facts);
        solver.solve();
        solver.check_integer_globals()?;
        solver.check_constant_merges()?;
        let activity = solver.finish();
        facts.activity_time.set(facts.activity_time.get() + start.elapsed());
        Ok(activity)
    }

    /// Whether `value` carries a differential that matters (for a pointer: whether it
    /// needs a shadow).
    pub fn is_active_value(&self, value: Value) -> bool {
        self.active_values.contains(&value)
    }

    /// Whether `inst` must be differentiated (it changes an active value or active
    /// memory).
    pub fn is_active_inst(&self, inst: Inst) -> bool {
        self.active_insts.contains(&inst)
    }

    /// Whether the pointer (or pointer-as-integer) `value` may point to memory holding
    /// differentials, so the derivative needs a shadow pointer for it.
    pub fn needs_shadow(&self, value: Value) -> bool {
        self.shadowed_values.contains(&value)
    }
}

fn check_request(func: &Function, request: &DiffRequest) -> Result<(), AdError> {
    let bad = |what: String| {
        Err(AdError::new(Site::function(&func.name), AdErrorKind::Unsupported { what }))
    };
    if func.is_declaration() {
        return bad(format!("the declaration @{} (no body to analyze)", func.name));
    }
    let params = &func.signature.params;
    if request.args.len() != params.len() {
        return bad(format!(
            "a request with {} argument activities for @{}, which has {} parameters",
            request.args.len(),
            func.name,
            params.len()
        ));
    }
    for (index, (activity, ty)) in request.args.iter().zip(params).enumerate() {
        let fits = match activity {
            ArgActivity::Const => true,
            // An integer in reverse mode: float bits passed as an integer (see
            // `reverse::derivative_signature`).
            ArgActivity::Active => {
                has_float(ty) || (request.mode == DiffMode::Reverse && may_carry_float_bits(ty))
            }
            ArgActivity::Dup | ArgActivity::DupNoNeed => {
                ty.is_ptr()
                    || (request.mode == DiffMode::Forward
                        && (has_float(ty) || may_carry_float_bits(ty)))
            }
        };
        if !fits {
            return bad(format!("argument {index} of type {ty} as {activity:?}"));
        }
    }
    // A callee inside a derivative may return a pointer with its shadow (forward mode,
    // and split functions in reverse mode).
    let shadowed_pointer_return =
        request.ret == RetActivity::Dup && func.signature.ret.as_ref().is_some_and(Type::is_ptr);
    if request.ret != RetActivity::Const
        && !shadowed_pointer_return
        && !func.signature.ret.as_ref().is_some_and(|t| has_float(t) || may_carry_float_bits(t))
    {
        return bad(format!("an active return of @{}, which returns no float", func.name));
    }
    Ok(())
}

struct Solver<'a> {
    module: &'a Module,
    func: &'a Function,
    id: FuncId,
    request: &'a DiffRequest,
    types: &'a TypeAnalysis,
    facts: &'a ModuleFacts,
    /// Union-find over pointer-like values: parent links.
    parent: HashMap<Value, Value>,
    carries: HashSet<Value>,
    reaches: HashSet<Value>,
    /// Integer results of operations that move the bits of a value carrying float bits
    /// (`zext`, `trunc`, shifts, `or`: two floats packed into an `i64` at -O2). The type
    /// analysis calls them integers, but they hold the float's bits, so they take part as
    /// float bits do; dropping them would silently drop the derivative they carry.
    moved_bits: HashSet<Value>,
    /// Class representatives.
    shadowed: HashSet<Value>,
    useful: HashSet<Value>,
    constant: HashSet<Value>,
    /// The constant classes of integer-only globals (see
    /// [`Self::hold_integer_globals_constant`]), with the global.
    integer_globals: HashMap<Value, GlobalId>,
    /// Globals shadowed from the start (reverse mode, see [`shadowed_globals`]).
    seeded_globals: HashSet<GlobalId>,
    /// Whether a function, or one it calls, names one of `seeded_globals` (memoised).
    names_seeded_global: HashMap<FuncId, bool>,
}

impl<'a> Solver<'a> {
    fn new(
        module: &'a Module,
        func: &'a Function,
        id: FuncId,
        request: &'a DiffRequest,
        types: &'a TypeAnalysis,
        facts: &'a ModuleFacts,
    ) -> Solver<'a> {
        let mut solver = Solver {
            module,
            func,
            id,
            request,
            types,
            facts,
            parent: HashMap::new(),
            carries: HashSet::new(),
            reaches: HashSet::new(),
            moved_bits: HashSet::new(),
            shadowed: HashSet::new(),
            useful: HashSet::new(),
            constant: HashSet::new(),
            integer_globals: HashMap::new(),
            seeded_globals: match request.mode {
                DiffMode::Reverse => shadowed_globals(module),
                DiffMode::Forward => HashSet::new(),
            },
            names_seeded_global: HashMap::new(),
        };
        solver.build_classes();
        solver
    }

    fn find(&self, mut value: Value) -> Value {
        while let Some(parent) = self.parent.get(&value) {
            if *parent == value {
                break;
            }
            value = *parent;
        }
        value
    }

    /// Joins the classes of `a` and `b`; whether two classes became one. A pointer that
    /// points nowhere joins nothing (see [`Self::points_nowhere`]).
    fn union(&mut self, a: Value, b: Value) -> bool {
        if self.points_nowhere(a) || self.points_nowhere(b) {
            return false;
        }
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.parent.insert(ra, rb);
        true
    }

    /// Null and undefined pointer constants point at no memory, and one such constant may
    /// feed many unrelated block parameters and slots (clang -O0's `undef` phi inputs, a
    /// `void *p = NULL` before an out-parameter call): joining through it would merge the
    /// classes of an `enzyme_const` and a `dup` argument. Their shadows are null and
    /// undefined too, wherever a shadowed value takes them.
    fn points_nowhere(&self, value: Value) -> bool {
        let ValueDef::Result(inst) = self.func.dfg.value_def(value) else { return false };
        matches!(
            self.func.inst(inst),
            InstructionData::Const {
                value: Constant::Undef | Constant::Poison | Constant::Zero | Constant::Int(0),
                ty,
            } if ty.is_ptr()
        )
    }

    fn is_tape_push(&self, callee: FuncId) -> bool {
        self.module.functions.get(callee).is_some_and(|f| f.name == crate::callees::TAPE_PUSH)
    }

    fn is_pointer_like(&self, value: Value) -> bool {
        self.func.dfg.value_type(value).is_ptr()
            || self
                .types
                .tree(self.id, value)
                .entries()
                .any(|(p, b)| p.len() == 1 && b == BaseType::Pointer)
    }

    /// Groups pointers derived from one another, and seeds the argument classes.
    fn build_classes(&mut self) {
        let func = self.func;
        for (_, inst) in func.layout.insts() {
            let result = func.dfg.inst_result(inst);
            match (func.inst(inst), result) {
                (InstructionData::PtrAdd { ptr, offset, .. }, Some(r)) => {
                    // `null + (intptr_t)p` addresses p's memory.
                    if self.points_nowhere(*ptr) && self.is_pointer_like(*offset) {
                        self.union(*offset, r);
                    } else {
                        self.union(*ptr, r);
                    }
                }
                (
                    InstructionData::Cast {
                        op: CastOp::Addrspacecast | CastOp::Ptrtoint | CastOp::Inttoptr,
                        arg,
                        ..
                    },
                    Some(r),
                ) => {
                    self.union(*arg, r);
                }
                (InstructionData::Cast { op: CastOp::Bitcast, arg, .. }, Some(r))
                    if self.is_pointer_like(r) =>
                {
                    self.union(*arg, r);
                }
                (InstructionData::Select { args, .. }, Some(r)) if self.is_pointer_like(r) => {
                    self.union(args[1], r);
                    self.union(args[2], r);
                }
                (InstructionData::Call { callee, args, .. }, Some(r)) => {
                    let name = self.module.functions[*callee].name.as_str();
                    if matches!(name, "realloc" | "memcpy" | "memmove") && !args.is_empty() {
                        self.union(args[0], r);
                    }
                }
                (data, _) => {
                    for target in data.branch_targets() {
                        let params = func.dfg.block_params(target.block);
                        for (arg, param) in target.args.iter().zip(params) {
                            if self.is_pointer_like(*param) {
                                self.union(*arg, *param);
                            }
                        }
                    }
                }
            }
        }
        self.unify_pointer_contents();
        let params = func.params().to_vec();
        for (param, activity) in params.iter().zip(&self.request.args) {
            let class = self.find(*param);
            match activity {
                ArgActivity::Const if func.dfg.value_type(*param).is_ptr() => {
                    self.constant.insert(class);
                }
                ArgActivity::Dup | ArgActivity::DupNoNeed
                    if func.dfg.value_type(*param).is_ptr() =>
                {
                    self.shadowed.insert(class);
                }
                ArgActivity::Active | ArgActivity::Dup | ArgActivity::DupNoNeed => {
                    self.carries.insert(*param);
                }
                ArgActivity::Const => {}
            }
            if func.dfg.value_type(*param).is_ptr() {
                // The caller sees what is stored through its pointers.
                self.useful.insert(class);
            }
        }
        self.hold_integer_globals_constant();
        self.spread_constness();
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Const {
                value: Constant::Address { symbol: Symbol::Global(global), .. },
                ..
            } = *func.inst(inst)
            {
                if let Some(r) = func.dfg.inst_result(inst) {
                    let class = self.find(r);
                    self.useful.insert(class);
                    if self.seeded_globals.contains(&global) {
                        self.shadowed.insert(class);
                    }
                }
            }
        }
    }

    /// A mutable global whose type holds only integers (an allocator's offset, a counter)
    /// carries no derivatives (see [`shadowed_globals`]), so its memory class is
    /// constant: a call that also takes active pointers (`myallocator(arena, n, &offset)`)
    /// does not ask it for a shadow that cannot exist. Unless the function shows float
    /// data in that class (a float stored or loaded through it, a copy or set of it, a
    /// type tree with floats behind it): then the class keeps the general rules, and
    /// adc refuses the global a shadow by name rather than drop its derivative.
    fn hold_integer_globals_constant(&mut self) {
        use InstructionData as I;
        let func = self.func;
        let mut classes = HashMap::new();
        for (_, inst) in func.layout.insts() {
            if let (
                I::Const {
                    value: Constant::Address { symbol: Symbol::Global(global), .. }, ..
                },
                Some(r),
            ) = (func.inst(inst), func.dfg.inst_result(inst))
            {
                let g = &self.module.globals[*global];
                if !g.constant && holds_integers_only(&g.ty) {
                    classes.insert(self.find(r), *global);
                }
            }
        }
        if classes.is_empty() {
            return;
        }
        let mut floats = HashSet::new();
        for (_, inst) in func.layout.insts() {
            match (func.inst(inst), func.dfg.inst_result(inst)) {
                (I::Store { value, ptr, .. }, _) if self.holds_float_bits(*value) => {
                    floats.insert(self.find(*ptr));
                }
                (I::Load { ptr, .. }, Some(r)) if self.holds_float_bits(r) => {
                    floats.insert(self.find(*ptr));
                }
                (I::MemCopy { dst, src, .. }, _) => {
                    floats.extend([self.find(*dst), self.find(*src)]);
                }
                (I::MemSet { dst, .. }, _) => {
                    floats.insert(self.find(*dst));
                }
                _ => {}
            }
        }
        for (value, _) in func.dfg.values.iter() {
            let class = self.find(value);
            if classes.contains_key(&class)
                && self.types.tree(self.id, value).entries().any(|(path, base)| {
                    path.len() > 1 && matches!(base, BaseType::Float(_) | BaseType::Anything)
                })
            {
                floats.insert(class);
            }
        }
        for (class, global) in classes {
            if !floats.contains(&class) && !self.shadowed.contains(&class) {
                self.constant.insert(class);
                self.integer_globals.insert(class, global);
            }
        }
    }

    /// After solving: a pointer loaded from shadowed memory (`*pp`, `pp` an `enzyme_dup`
    /// argument) in a constant class, because clang merged it with a pointer into an
    /// `enzyme_const` argument's memory (a phi of `&rows[0][2]` and `&(*pp)[n - 1]`,
    /// gradient fuzzer seed 150387): the constant class has no shadow, so the loads
    /// through the merge would silently drop their derivatives. Refused, as other merges
    /// of active and inactive memory are (Enzyme needs runtime activity for them).
    fn check_constant_merges(&self) -> Result<(), AdError> {
        for (_, inst) in self.func.layout.insts() {
            let (InstructionData::Load { ptr, .. }, Some(r)) =
                (self.func.inst(inst), self.func.dfg.inst_result(inst))
            else {
                continue;
            };
            let class = self.find(r);
            if self.is_pointer_like(r)
                && self.constant.contains(&class)
                && !self.integer_globals.contains_key(&class)
                && self.is_shadowed(*ptr)
            {
                return Err(AdError::new(
                    Site::inst(self.module, self.func, inst),
                    AdErrorKind::Unsupported { what: MIXED_ACTIVITY_MERGE.into() },
                ));
            }
        }
        Ok(())
    }

    /// After solving: a value carrying a derivative stored into an integer-only global
    /// (float bits packed into an integer, say) would lose it in the constant class, so
    /// it is refused, naming the store.
    fn check_integer_globals(&self) -> Result<(), AdError> {
        for (_, inst) in self.func.layout.insts() {
            let InstructionData::Store { value, ptr, .. } = self.func.inst(inst) else {
                continue;
            };
            let Some(global) = self.integer_globals.get(&self.find(*ptr)) else { continue };
            if self.carries.contains(value) {
                let name = &self.module.globals[*global].name;
                return Err(AdError::new(
                    Site::inst(self.module, self.func, inst),
                    AdErrorKind::Unsupported {
                        what: format!(
                            "a value carrying a derivative stored into @{name}, a global of \
                             integers only, which gets no shadow"
                        ),
                    },
                ));
            }
        }
        Ok(())
    }

    /// Whether `value` holds float bits by its IR type, by the bits it moves, or by its
    /// type tree (unlike [`Self::may_hold_float`], an integer of unknown type does not).
    fn holds_float_bits(&self, value: Value) -> bool {
        has_float(self.func.dfg.value_type(value))
            || self.moved_bits.contains(&value)
            || self.types.tree(self.id, value).entries().any(|(path, base)| {
                path.len() == 1 && matches!(base, BaseType::Float(_) | BaseType::Anything)
            })
    }

    /// Memory reached through a `Const` argument is constant, as in Enzyme: a pointer
    /// loaded from a constant class (the rows of a `Const` `double **`) is in a constant
    /// class too (unless an argument with a shadow is in it), so a callee that writes
    /// other pointer arguments does not ask it for a shadow that cannot exist.
    fn spread_constness(&mut self) {
        let func = self.func;
        loop {
            let mut changed = false;
            for (_, inst) in func.layout.insts() {
                let (InstructionData::Load { ptr, .. }, Some(r)) =
                    (func.inst(inst), func.dfg.inst_result(inst))
                else {
                    continue;
                };
                let class = self.find(r);
                if self.is_pointer_like(r)
                    && self.constant.contains(&self.find(*ptr))
                    && !self.shadowed.contains(&class)
                {
                    changed |= self.constant.insert(class);
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Puts the pointers stored into one memory class and the pointers loaded from it into
    /// one class (unification, as in Steensgaard's points-to analysis), so that a pointer
    /// that goes through memory keeps its class: at clang -O0 every pointer argument is
    /// stored to a stack slot and reloaded before each use, and the reloaded pointer must
    /// keep the argument's shadow. Copies between memory classes unify what they hold.
    /// Unions rename classes, so this repeats until a pass unifies nothing.
    fn unify_pointer_contents(&mut self) {
        let func = self.func;
        loop {
            // Memory class -> one pointer it holds.
            let mut contents: HashMap<Value, Value> = HashMap::new();
            let mut merged = false;
            let mut copies = Vec::new();
            for (_, inst) in func.layout.insts() {
                match func.inst(inst) {
                    InstructionData::Store { value, ptr, .. } if self.is_pointer_like(*value) => {
                        self.unify_content(&mut contents, &mut merged, *ptr, *value)
                    }
                    InstructionData::Load { ptr, .. } => {
                        if let Some(r) = func.dfg.inst_result(inst) {
                            if self.is_pointer_like(r) {
                                self.unify_content(&mut contents, &mut merged, *ptr, r);
                            }
                        }
                    }
                    InstructionData::MemCopy { dst, src, .. } => copies.push((*dst, *src)),
                    // The tape helper returns an address inside the block its header (the
                    // first argument) holds: the header holds what is stored there.
                    InstructionData::Call { callee, args, .. } if self.is_tape_push(*callee) => {
                        if let (Some(r), Some(header)) = (func.dfg.inst_result(inst), args.first())
                        {
                            self.unify_content(&mut contents, &mut merged, *header, r);
                        }
                    }
                    _ => {}
                }
            }
            for (dst, src) in copies {
                let held = [src, dst].iter().find_map(|p| contents.get(&self.find(*p)).copied());
                if let Some(held) = held {
                    self.unify_content(&mut contents, &mut merged, src, held);
                    self.unify_content(&mut contents, &mut merged, dst, held);
                }
            }
            if !merged {
                break;
            }
        }
    }

    /// Records that memory class of `slot` holds `held`, unifying it with what the class
    /// is already known to hold.
    fn unify_content(
        &mut self,
        contents: &mut HashMap<Value, Value>,
        merged: &mut bool,
        slot: Value,
        held: Value,
    ) {
        // Storing a pointer to nowhere says nothing of what the slot holds; counting it
        // as content would re-request a merge that `union` refuses, on every round.
        if self.points_nowhere(held) {
            return;
        }
        let slot = self.find(slot);
        match contents.get(&slot) {
            Some(&other) => *merged |= self.union(other, held),
            None => {
                contents.insert(slot, held);
            }
        }
    }

    /// Whether `value` may hold float bits (see the module documentation).
    fn may_hold_float(&self, value: Value) -> bool {
        let ty = self.func.dfg.value_type(value);
        if has_float(ty) {
            return true;
        }
        if ty.is_ptr() || *ty.lane_type() == Type::I1 {
            return false;
        }
        if self.moved_bits.contains(&value) {
            return true;
        }
        let tree = self.types.tree(self.id, value);
        let own: Vec<BaseType> =
            tree.entries().filter(|(p, _)| p.len() == 1).map(|(_, b)| b).collect();
        own.is_empty() || own.iter().any(|b| matches!(b, BaseType::Float(_) | BaseType::Anything))
    }

    fn is_shadowed(&self, ptr: Value) -> bool {
        self.shadowed.contains(&self.find(ptr))
    }

    fn is_useful(&self, ptr: Value) -> bool {
        self.useful.contains(&self.find(ptr))
    }

    fn shadow(&mut self, ptr: Value) -> bool {
        let class = self.find(ptr);
        !self.constant.contains(&class) && self.shadowed.insert(class)
    }

    fn make_useful(&mut self, ptr: Value) -> bool {
        let class = self.find(ptr);
        self.useful.insert(class)
    }

    /// Whether `value` is a pointer whose class is shadowed and useful (it needs a shadow).
    fn holds_needed_pointer(&self, value: Value) -> bool {
        self.is_pointer_like(value) && self.is_shadowed(value) && self.is_useful(value)
    }

    /// Up propagation through a call whose callee has `effects`; `may_return_argument`:
    /// the returned pointer may point into the arguments' memory (not an allocator's).
    /// `reads_shadowed_global`: the callee may read a global shadowed from the start
    /// (`static double g[4]` read by a helper clang gave no argument for it): its result
    /// may carry what the global holds.
    fn forward_call(
        &mut self,
        effects: Effects,
        args: &[Value],
        result: Option<Value>,
        may_return_argument: bool,
        reads_shadowed_global: bool,
    ) -> bool {
        let mut changed = false;
        let any_carry = args.iter().any(|a| self.carries.contains(a));
        let any_shadowed = args.iter().any(|a| self.is_shadowed(*a)) || reads_shadowed_global;
        if let Some(r) = result {
            if any_carry || (effects.reads() && any_shadowed) {
                changed |= self.carry(r);
                // A returned pointer may point to memory the callee filled with what its
                // arguments carry (`p = malloc(..); *p = x * x; return p;`): its loads
                // must be active, so it needs a shadow even when no argument has one.
                if self.is_pointer_like(r) && (any_shadowed || effects.writes_other) {
                    changed |= self.shadow(r);
                }
            }
        }
        if may_return_argument {
            changed |= self.link_returned_pointer(args, result, Mark::Shadowed);
        }
        // A callee that writes memory it reaches through loaded pointers (-O0 code keeps
        // its pointer arguments in stack slots) may write through any pointer argument:
        // `writes_other` counts as writing the arguments.
        let writes = effects.writes_args || effects.writes_other;
        if writes && (any_carry || any_shadowed) {
            for arg in args {
                if self.is_pointer_like(*arg) {
                    changed |= self.shadow(*arg);
                }
            }
        }
        changed
    }

    /// Whether `function`, or a function it reaches, names a global shadowed from the
    /// start.
    fn reaches_seeded_global(&mut self, function: FuncId) -> bool {
        if self.seeded_globals.is_empty() {
            return false;
        }
        if let Some(known) = self.names_seeded_global.get(&function) {
            return *known;
        }
        let seeded = &self.seeded_globals;
        let found = !globals_reached(self.module, function, |g| seeded.contains(&g)).is_empty();
        self.names_seeded_global.insert(function, found);
        found
    }

    /// Down propagation through a call whose callee has `effects` (see `forward_call`).
    fn backward_call(
        &mut self,
        effects: Effects,
        args: &[Value],
        result: Option<Value>,
        may_return_argument: bool,
    ) -> bool {
        let mut changed = false;
        if may_return_argument {
            changed |= self.link_returned_pointer(args, result, Mark::Useful);
        }
        let result_reaches = result.is_some_and(|r| self.reaches.contains(&r));
        // As in `forward_call`: writes to "other" memory may reach the arguments.
        let may_write_args = effects.writes_args || effects.writes_other;
        let writes_useful = may_write_args && args.iter().any(|a| self.is_useful(*a));
        if result_reaches || writes_useful || effects.writes_other {
            for arg in args {
                changed |= self.reach(*arg);
                if self.is_pointer_like(*arg) && (result_reaches || writes_useful) {
                    changed |= self.make_useful(*arg);
                }
            }
        }
        changed
    }

    /// The effects an indirect call may have: those of every function it may call (the
    /// module's address-taken functions of its type, as the synthesis dispatches), or
    /// `None` when there is none to know them by.
    fn indirect_call_effects(&self, sig: &Signature, attrs: FuncAttrs) -> Option<Effects> {
        let candidates = crate::callees::indirect_call_candidates(self.module, sig);
        self.joined_effects(&candidates, attrs)
    }

    fn joined_effects(&self, candidates: &[FuncId], attrs: FuncAttrs) -> Option<Effects> {
        candidates.iter().map(|f| self.call_effects(*f, attrs)).reduce(Effects::union)
    }

    /// A pointer a call returns may point into the memory of its pointer arguments (a
    /// callee returning `&v[i]`, or `b->data + i` read from the argument's memory, even
    /// when it is `readnone`): what `mark` says of one side holds for the other. The classes stay apart, so an `enzyme_const` argument is
    /// not joined with a `dup` one through a call that takes both (a constant class is
    /// never shadowed).
    fn link_returned_pointer(&mut self, args: &[Value], result: Option<Value>, mark: Mark) -> bool {
        let Some(r) = result.filter(|r| self.is_pointer_like(*r)) else { return false };
        let pointers: Vec<Value> =
            args.iter().copied().filter(|a| self.is_pointer_like(*a)).collect();
        let mut changed = false;
        if pointers.iter().any(|a| self.is_marked(mark, *a)) {
            changed |= self.set_mark(mark, r);
        }
        if self.is_marked(mark, r) {
            for a in pointers {
                changed |= self.set_mark(mark, a);
            }
        }
        changed
    }

    fn is_marked(&self, mark: Mark, ptr: Value) -> bool {
        match mark {
            Mark::Shadowed => self.is_shadowed(ptr),
            Mark::Useful => self.is_useful(ptr),
        }
    }

    fn set_mark(&mut self, mark: Mark, ptr: Value) -> bool {
        match mark {
            Mark::Shadowed => self.shadow(ptr),
            Mark::Useful => self.make_useful(ptr),
        }
    }

    fn carry(&mut self, value: Value) -> bool {
        self.may_hold_float(value) && self.carries.insert(value)
    }

    fn reach(&mut self, value: Value) -> bool {
        self.may_hold_float(value) && self.reaches.insert(value)
    }

    /// Whether an operand makes a call (or store) active: it carries, or it is a shadowed
    /// pointer.
    fn is_live_operand(&self, value: Value) -> bool {
        self.carries.contains(&value) || self.is_shadowed(value)
    }

    /// Calls that never carry derivatives whatever their arguments: output-only library
    /// functions (`printf`...) and functions registered in `__enzyme_inactivefn`.
    fn output_only(&self, callee: FuncId) -> bool {
        let name = self.module.functions[callee].name.as_str();
        crate::callees::is_inactive_library(name) || self.facts.registrations.is_inactive(callee)
    }

    fn call_effects(&self, callee: FuncId, attrs: FuncAttrs) -> Effects {
        let by_site = Effects::from_attrs(attrs);
        // A registered custom derivative may move derivatives between any arguments,
        // whatever the primal's body (if any) does.
        let mut known = self.facts.effects.get(callee);
        if self.facts.registrations.is_registered(callee) {
            known.reads_args = true;
            known.writes_args = true;
        }
        Effects {
            reads_args: by_site.reads_args && known.reads_args,
            writes_args: by_site.writes_args && known.writes_args,
            reads_other: by_site.reads_other && known.reads_other,
            writes_other: by_site.writes_other && known.writes_other,
            may_free: by_site.may_free && known.may_free,
            may_not_return: by_site.may_not_return && known.may_not_return,
        }
    }

    fn solve(&mut self) {
        loop {
            let mut changed = false;
            for (_, inst) in self.func.layout.insts() {
                changed |= self.forward(inst);
            }
            for (_, inst) in self.func.layout.insts().collect::<Vec<_>>().into_iter().rev() {
                changed |= self.backward(inst);
            }
            if !changed {
                break;
            }
        }
    }

    /// Up propagation and memory classes.
    // Conditions stay inside the arms: as match guards, a false one would fall through to
    // the generic arms below, which must not see loads, stores or selects.
    #[allow(clippy::collapsible_match)]
    fn forward(&mut self, inst: Inst) -> bool {
        use InstructionData as I;
        let func = self.func;
        let result = func.dfg.inst_result(inst);
        let data = func.inst(inst);
        let mut changed = false;
        match (data, result) {
            (I::Load { ptr, .. }, Some(r)) => {
                if self.is_shadowed(*ptr) {
                    changed |= self.carry(r);
                    if self.is_pointer_like(r) {
                        changed |= self.shadow(r);
                    }
                }
                // The shadow of a loaded pointer is loaded from the shadow of the memory
                // (which a call such as `posix_memalign` may have filled, with no store
                // instruction in sight): that memory needs a shadow too.
                if func.dfg.value_type(r).is_ptr() && self.is_shadowed(r) {
                    changed |= self.shadow(*ptr);
                }
            }
            (I::Store { value, ptr, .. }, _) => {
                if self.carries.contains(value)
                    || (self.is_pointer_like(*value) && self.is_shadowed(*value))
                {
                    changed |= self.shadow(*ptr);
                }
                // Shadow memory holds the shadows of the pointers the primal memory holds
                // (a callee filling `b->data = malloc(...)` for its caller).
                if self.is_pointer_like(*value) && self.is_shadowed(*ptr) {
                    changed |= self.shadow(*value);
                }
            }
            (I::AtomicRmw { ptr, value, .. }, result) => {
                if self.carries.contains(value) {
                    changed |= self.shadow(*ptr);
                }
                if let Some(r) = result {
                    if self.is_shadowed(*ptr) || self.carries.contains(value) {
                        changed |= self.carry(r);
                    }
                }
            }
            (I::CmpXchg { ptr, expected, new, .. }, result) => {
                if self.carries.contains(new) {
                    changed |= self.shadow(*ptr);
                }
                if let Some(r) = result {
                    if self.is_shadowed(*ptr) || self.carries.contains(expected) {
                        changed |= self.carry(r);
                    }
                }
            }
            (I::MemCopy { dst, src, .. }, _) => {
                if self.is_shadowed(*src) {
                    changed |= self.shadow(*dst);
                }
            }
            (I::Call { callee, args, .. }, Some(r))
                if self.is_tape_push(*callee) && self.is_shadowed(r) =>
            {
                // A tape that holds derivatives (forward over reverse) needs a shadow tape.
                if let Some(header) = args.first() {
                    changed |= self.shadow(*header) | self.make_useful(*header);
                }
            }
            (I::Call { callee, .. }, _) if self.output_only(*callee) => {}
            (I::Call { callee, args, attrs }, result) => {
                let effects = self.call_effects(*callee, *attrs);
                let fresh = HeapFunction::of(&self.module.functions[*callee].name).is_some();
                let global = effects.reads_other && self.reaches_seeded_global(*callee);
                changed |= self.forward_call(effects, args, result, !fresh, global);
            }
            (I::CallIndirect { sig, args, attrs, .. }, result) => {
                let candidates = crate::callees::indirect_call_candidates(self.module, sig);
                match self.joined_effects(&candidates, *attrs) {
                    Some(effects) => {
                        let global = effects.reads_other
                            && candidates.into_iter().any(|f| self.reaches_seeded_global(f));
                        changed |= self.forward_call(effects, args, result, true, global)
                    }
                    // No known target: anything may happen to every pointer argument.
                    None if args.iter().any(|a| self.is_live_operand(*a)) => {
                        if let Some(r) = result {
                            changed |= self.carry(r);
                        }
                        for arg in args {
                            if self.is_pointer_like(*arg) {
                                changed |= self.shadow(*arg);
                            }
                        }
                    }
                    None => {}
                }
            }
            (I::Icmp { .. } | I::Fcmp { .. }, _) => {}
            // Conversions between integers and floats have no derivative.
            (
                I::Cast {
                    op: CastOp::Fptosi | CastOp::Fptoui | CastOp::Sitofp | CastOp::Uitofp,
                    ..
                },
                _,
            ) => {}
            (I::Cast { op: CastOp::Zext | CastOp::Sext | CastOp::Trunc, arg, .. }, Some(r)) => {
                if self.carries.contains(arg) {
                    changed |= self.moved_bits.insert(r) | self.carry(r);
                }
            }
            (I::Binary { op, args, .. }, Some(r)) if moves_bits(*op) => {
                if args.iter().any(|a| self.carries.contains(a)) {
                    changed |= self.moved_bits.insert(r) | self.carry(r);
                }
            }
            (I::Select { args, .. }, Some(r)) => {
                if self.carries.contains(&args[1]) || self.carries.contains(&args[2]) {
                    changed |= self.carry(r);
                }
            }
            (data, Some(r)) if !data.has_side_effects() => {
                if data.args().iter().any(|a| self.carries.contains(a)) {
                    changed |= self.carry(r);
                }
            }
            (data, _) if data.is_terminator() => {
                for target in data.branch_targets() {
                    let params = func.dfg.block_params(target.block).to_vec();
                    for (arg, param) in target.args.iter().zip(params) {
                        if self.carries.contains(arg) {
                            changed |= self.carry(param);
                        }
                    }
                }
            }
            _ => {}
        }
        changed
    }

    /// Down propagation.
    // Conditions stay inside the arms: as match guards, a false one would fall through to
    // the generic arms below, which must not see loads, stores or selects.
    #[allow(clippy::collapsible_match)]
    fn backward(&mut self, inst: Inst) -> bool {
        use InstructionData as I;
        let func = self.func;
        let result = func.dfg.inst_result(inst);
        let data = func.inst(inst);
        let result_reaches = result.is_some_and(|r| self.reaches.contains(&r));
        let mut changed = false;
        match (data, result) {
            (I::Return { value: Some(v) }, _) => {
                if self.request.ret != RetActivity::Const {
                    changed |= self.reach(*v);
                    if func.dfg.value_type(*v).is_ptr() {
                        changed |= self.shadow(*v) | self.make_useful(*v);
                    }
                }
                // The caller sees what is stored through a returned pointer (a split
                // callee returning a block it filled must return its shadow too).
                if func.dfg.value_type(*v).is_ptr() {
                    changed |= self.make_useful(*v);
                }
            }
            (I::Load { ptr, .. }, Some(r)) => {
                if result_reaches || self.holds_needed_pointer(r) {
                    changed |= self.make_useful(*ptr);
                }
                // The caller sees memory reached through pointers held in memory it sees
                // (a struct's pointer field, a `double **`, an array of row pointers):
                // stores through a loaded pointer are outputs too.
                if self.is_pointer_like(r) && self.is_useful(*ptr) {
                    changed |= self.make_useful(r);
                }
            }
            (I::Store { value, ptr, .. }, _) => {
                if self.is_useful(*ptr) {
                    changed |= self.reach(*value);
                    if self.is_pointer_like(*value) {
                        changed |= self.make_useful(*value);
                    }
                }
                // The memory holding a pointer that needs a shadow (a stack slot at -O0)
                // needs a shadow holding the shadow pointer.
                if self.holds_needed_pointer(*value) {
                    changed |= self.make_useful(*ptr);
                }
            }
            (I::AtomicRmw { ptr, value, .. }, _) => {
                if self.is_useful(*ptr) || result_reaches {
                    changed |= self.reach(*value) | self.make_useful(*ptr);
                }
            }
            (I::CmpXchg { ptr, new, .. }, _) => {
                if self.is_useful(*ptr) || result_reaches {
                    changed |= self.reach(*new) | self.make_useful(*ptr);
                }
            }
            (I::MemCopy { dst, src, .. }, _) => {
                if self.is_useful(*dst) {
                    changed |= self.make_useful(*src);
                }
            }
            (I::Call { callee, .. }, _) if self.output_only(*callee) => {}
            (I::Call { callee, args, attrs }, result) => {
                let effects = self.call_effects(*callee, *attrs);
                let fresh = HeapFunction::of(&self.module.functions[*callee].name).is_some();
                changed |= self.backward_call(effects, args, result, !fresh);
            }
            (I::CallIndirect { sig, args, attrs, .. }, result) => {
                match self.indirect_call_effects(sig, *attrs) {
                    Some(effects) => changed |= self.backward_call(effects, args, result, true),
                    None => {
                        for arg in args {
                            changed |= self.reach(*arg);
                            if self.is_pointer_like(*arg) {
                                changed |= self.make_useful(*arg);
                            }
                        }
                    }
                }
            }
            (I::Select { args, .. }, Some(_)) => {
                if result_reaches {
                    changed |= self.reach(args[1]) | self.reach(args[2]);
                }
            }
            (I::Icmp { .. } | I::Fcmp { .. }, _) => {}
            // An integer converted to a float has no derivative (`sitofp` of an exponent
            // read from a float's bits is not a path for one).
            (I::Cast { op: CastOp::Sitofp | CastOp::Uitofp, .. }, _) => {}
            (data, Some(_)) if !data.has_side_effects() => {
                if result_reaches {
                    for arg in data.args() {
                        changed |= self.reach(arg);
                    }
                }
            }
            (data, _) if data.is_terminator() => {
                for target in data.branch_targets() {
                    let params = func.dfg.block_params(target.block).to_vec();
                    for (arg, param) in target.args.iter().zip(params) {
                        if self.reaches.contains(&param) {
                            changed |= self.reach(*arg);
                        }
                    }
                }
            }
            _ => {}
        }
        changed
    }

    /// Whether a call to `callee` may write a global shadowed from the start (a helper
    /// updating `static double g[4]` that clang gave no argument for): the derivative
    /// must run the callee's reverse even when none of its arguments is active, or the
    /// adjoints flowing through the global skip what the callee did to it.
    fn writes_seeded_global(&mut self, callee: FuncId, attrs: FuncAttrs) -> bool {
        !self.output_only(callee)
            && self.call_effects(callee, attrs).writes_other
            && self.reaches_seeded_global(callee)
    }

    fn finish(mut self) -> Activity {
        let func = self.func;
        let mut shadowed_values = HashSet::new();
        for (value, _) in func.dfg.values.iter() {
            if self.is_shadowed(value) && self.is_useful(value) && self.is_pointer_like(value) {
                shadowed_values.insert(value);
            }
        }
        drop_unneeded_integer_shadows(func, &mut shadowed_values);
        let mut active_values: HashSet<Value> =
            self.carries.intersection(&self.reaches).copied().collect();
        active_values.extend(shadowed_values.iter().copied());
        let needs = |v: &Value| shadowed_values.contains(v);
        let mut active_insts = HashSet::new();
        for (_, inst) in func.layout.insts() {
            use InstructionData as I;
            let data = func.inst(inst);
            let result_active =
                func.dfg.inst_result(inst).is_some_and(|r| active_values.contains(&r));
            let active = result_active
                || match data {
                    I::Store { value, ptr, .. } => {
                        needs(ptr) && (self.may_hold_float(*value) || needs(value))
                    }
                    I::AtomicRmw { ptr, .. } | I::CmpXchg { ptr, .. } => needs(ptr),
                    I::MemCopy { dst, src, .. } => needs(dst) || needs(src),
                    I::MemSet { dst, .. } => needs(dst),
                    I::Call { callee, args, attrs } => {
                        args.iter().any(|a| active_values.contains(a))
                            || self.writes_seeded_global(*callee, *attrs)
                    }
                    I::CallIndirect { sig, args, attrs, .. } => {
                        args.iter().any(|a| active_values.contains(a))
                            || crate::callees::indirect_call_candidates(self.module, sig)
                                .into_iter()
                                .any(|f| self.writes_seeded_global(f, *attrs))
                    }
                    I::Return { value: Some(v) } => active_values.contains(v),
                    _ => false,
                };
            if active {
                active_insts.insert(inst);
            }
        }
        Activity { function: self.id, active_values, active_insts, shadowed_values }
    }
}

/// Integer operations that move bits around without computing on them: shifts and bit
/// operations, which pack float bits into wider integers and unpack them.
fn moves_bits(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Shl
            | BinaryOp::Lshr
            | BinaryOp::Ashr
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor
    )
}

/// Removes the shadows of addresses held as integers (`ptrtoint`) whose uses never need
/// one: comparisons (clang's vectorizer alias checks compare addresses), and integer
/// arithmetic or casts whose results need no shadow either. Anything else that uses them
/// (an `inttoptr`, a store, a call, a branch argument) keeps the shadow.
fn drop_unneeded_integer_shadows(func: &Function, shadowed: &mut HashSet<Value>) {
    let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
    for (_, inst) in func.layout.insts() {
        for arg in func.inst(inst).args() {
            users.entry(arg).or_default().push(inst);
        }
    }
    loop {
        let unneeded: Vec<Value> = shadowed
            .iter()
            .copied()
            .filter(|v| !func.dfg.value_type(*v).is_ptr())
            .filter(|v| {
                users.get(v).into_iter().flatten().all(|user| match func.inst(*user) {
                    InstructionData::Icmp { .. } => true,
                    InstructionData::Binary { .. }
                    | InstructionData::Cast {
                        op: CastOp::Trunc | CastOp::Zext | CastOp::Sext,
                        ..
                    } => func.dfg.inst_result(*user).is_some_and(|r| !shadowed.contains(&r)),
                    _ => false,
                })
            })
            .collect();
        if unneeded.is_empty() {
            break;
        }
        for value in unneeded {
            shadowed.remove(&value);
        }
    }
}

/// The activity of every value and instruction of `request.function`, one per line:
/// `%x: active`, `%p: active shadow`, and for instructions whose activity is not their
/// result's, `store %y, %p, align 8: active`; first, for each global the function names,
/// `global @g: active shadow` when it gets a shadow global, `global @g: inactive` otherwise.
pub fn print_activity(module: &Module, request: &DiffRequest) -> Result<String, AdError> {
    let types = TypeAnalysis::analyze(module);
    let activity = Activity::analyze(module, request, &types, &ModuleFacts::new(module, None)?)?;
    let func = &module.functions[request.function];
    let printer = adc_ir::text::FunctionPrinter::new(module, func);
    let word = |active: bool| if active { "active" } else { "inactive" };
    let mut out = String::new();
    let _ = writeln!(out, "@{} {request}:", func.name);
    let mut globals: Vec<(GlobalId, bool)> = Vec::new();
    for (_, inst) in func.layout.insts() {
        let InstructionData::Const {
            value: Constant::Address { symbol: Symbol::Global(global), .. },
            ..
        } = *func.inst(inst)
        else {
            continue;
        };
        let shadowed = func.dfg.inst_result(inst).is_some_and(|r| activity.needs_shadow(r));
        match globals.iter_mut().find(|(g, _)| *g == global) {
            Some((_, any)) => *any |= shadowed,
            None => globals.push((global, shadowed)),
        }
    }
    for (global, shadowed) in globals {
        let state = if shadowed { "active shadow" } else { "inactive" };
        let _ = writeln!(out, "  global @{}: {state}", module.globals[global].name);
    }
    for block in func.layout.blocks() {
        for param in func.dfg.block_params(*block) {
            let _ = writeln!(out, "  {}", value_line(&printer, &activity, *param));
        }
        for inst in func.layout.block_insts(*block) {
            let inst_active = activity.is_active_inst(*inst);
            match func.dfg.inst_result(*inst) {
                Some(r) => {
                    let mut line = value_line(&printer, &activity, r);
                    if inst_active != activity.is_active_value(r) {
                        let _ = write!(line, ", inst {}", word(inst_active));
                    }
                    let _ = writeln!(out, "  {line}");
                }
                None => {
                    let text = printer.inst_to_string(*inst);
                    let _ = writeln!(out, "  {}: {}", text.trim(), word(inst_active));
                }
            }
        }
    }
    Ok(out)
}

fn value_line(
    printer: &adc_ir::text::FunctionPrinter<'_>,
    activity: &Activity,
    value: Value,
) -> String {
    let state = if activity.is_active_value(value) { "active" } else { "inactive" };
    let shadow = if activity.needs_shadow(value) { " shadow" } else { "" };
    format!("{}: {state}{shadow}", printer.value(value))
}

/// The index of the parameter into whose memory `ptr` points: following offsets, address
/// casts, reloads from a stack slot whose stores all store one pointer (clang -O0), and
/// pointers loaded from the memory of an argument (a struct's pointer field, a
/// `double **`): what they point to is reachable from the argument, so it is the
/// caller's memory too. `None` when `ptr` comes from elsewhere.
pub fn argument_behind(func: &Function, ptr: Value) -> Option<usize> {
    let dfg = &func.dfg;
    let mut current = ptr;
    // Each step moves to an earlier definition; the bound guards against cycles through
    // malformed input.
    for _ in 0..64 {
        let inst = match dfg.value_def(current) {
            ValueDef::Param(block, index) => {
                return (block == func.layout.entry_block()?).then_some(index as usize);
            }
            ValueDef::Result(inst) => inst,
        };
        current = match &dfg.insts[inst] {
            InstructionData::PtrAdd { ptr, .. } => *ptr,
            InstructionData::Cast {
                op: CastOp::Addrspacecast | CastOp::Ptrtoint | CastOp::Inttoptr | CastOp::Bitcast,
                arg,
                ..
            } => *arg,
            InstructionData::Load { ptr: slot, .. } if is_alloca(func, *slot) => {
                only_pointer_stored_into(func, *slot)?
            }
            InstructionData::Load { ptr: holder, .. } => *holder,
            _ => return None,
        };
    }
    None
}

fn is_alloca(func: &Function, value: Value) -> bool {
    matches!(func.dfg.value_def(value),
        ValueDef::Result(inst) if matches!(func.dfg.insts[inst], InstructionData::Alloca { .. }))
}

/// When every use of the alloca `slot` is a load from it or a store of one and the same
/// value into it, that value.
fn only_pointer_stored_into(func: &Function, slot: Value) -> Option<Value> {
    let mut stored = None;
    for (_, inst) in func.layout.insts() {
        let data = &func.dfg.insts[inst];
        if !data.args().contains(&slot) {
            continue;
        }
        match data {
            InstructionData::Load { ptr, .. } if *ptr == slot => {}
            InstructionData::Store { value, ptr, .. } if *ptr == slot && *value != slot => {
                if stored.is_some_and(|s| s != *value) {
                    return None;
                }
                stored = Some(*value);
            }
            _ => return None,
        }
    }
    stored
}

/// For a store of an active value through `ptr`, which has no shadow: an error message
/// when `ptr` points into the memory of an argument that has a shadow
/// ([`argument_behind`]), where dropping the store's derivative would make the result
/// silently wrong.
pub fn check_store_into_argument(
    func: &Function,
    request: &DiffRequest,
    ptr: Value,
) -> Result<(), String> {
    let Some(index) = argument_behind(func, ptr) else { return Ok(()) };
    if !request.args.get(index).is_some_and(|a| a.has_shadow()) {
        return Ok(());
    }
    Err(format!(
        "an active store through a pointer into the memory of argument {index}, which has a \
         shadow, was given no shadow by the activity analysis"
    ))
}

mod globals;
#[cfg(test)]
mod tests;
