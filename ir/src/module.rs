//! A module: functions (defined or declared) and globals, addressed by `FuncId`/`GlobalId`
//! and by unique names.

use std::collections::{HashMap, HashSet};

use cranelift_entity::PrimaryMap;

use crate::constant::Constant;
use crate::entities::{FuncId, GlobalId};
use crate::function::{Function, Linkage, Signature};
use crate::instructions::InstructionData;
use crate::types::{AddrSpace, Type};

#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub ty: Type,
    pub linkage: Linkage,
    /// Never written (`const` in the text form).
    pub constant: bool,
    pub align: u32,
    pub addr_space: AddrSpace,
    /// `None` declares a global defined in another object.
    pub init: Option<Constant>,
}

/// When a [`StartupFunction`] runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StartupKind {
    /// Before `main` (LLVM's `llvm.global_ctors`: C++ globals with constructors,
    /// `__attribute__((constructor))`).
    Constructor,
    /// At exit (`llvm.global_dtors`, `__attribute__((destructor))`).
    Destructor,
}

impl StartupKind {
    /// The keyword of the text form.
    pub fn keyword(self) -> &'static str {
        match self {
            StartupKind::Constructor => "constructor",
            StartupKind::Destructor => "destructor",
        }
    }
}

/// A function the program runs without a call in the module: constructors in order of
/// rising priority before `main`, destructors at exit. Text form: `constructor 65535 @f`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StartupFunction {
    pub kind: StartupKind,
    /// Lower runs first; 65535 is the default of C and C++.
    pub priority: u32,
    /// A function of no parameters returning nothing.
    pub function: FuncId,
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    pub functions: PrimaryMap<FuncId, Function>,
    pub globals: PrimaryMap<GlobalId, Global>,
    /// Constructors and destructors, in the input's order.
    pub startup: Vec<StartupFunction>,
    /// Target triple of the input, when known (`x86_64-pc-linux-gnu`, `nvptx64-nvidia-cuda`).
    pub target: Option<String>,
    /// The first function of each name, kept by `add_function` and `remove_functions`:
    /// the differentiator looks names up for every request, and a scan of the module
    /// per lookup made a module of N requests cost O(N²).
    function_ids: HashMap<String, FuncId>,
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    pub fn add_function(&mut self, function: Function) -> FuncId {
        let name = function.name.clone();
        let id = self.functions.push(function);
        self.function_ids.entry(name).or_insert(id);
        id
    }

    pub fn add_global(&mut self, global: Global) -> GlobalId {
        self.globals.push(global)
    }

    /// Renames a function of the module (what keeps [`Module::function_by_name`] exact;
    /// assigning `name` in place leaves the old name findable by a scan only).
    pub fn rename_function(&mut self, id: FuncId, name: String) {
        self.functions[id].name = name.clone();
        self.function_ids.insert(name, id);
    }

    /// The first function named `name`. Functions are named before they are added or
    /// through [`Module::rename_function`]; one renamed in place is still found under its
    /// new name only in debug builds, whose check catches it.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        let scan = || self.functions.iter().find(|(_, f)| f.name == name).map(|(id, _)| id);
        match self.function_ids.get(name) {
            Some(&id) if self.functions.get(id).is_some_and(|f| f.name == name) => Some(id),
            Some(_) => scan(),
            None => {
                debug_assert_eq!(scan(), None, "@{name} was added without add_function");
                None
            }
        }
    }

    pub fn global_by_name(&self, name: &str) -> Option<GlobalId> {
        self.globals.iter().find(|(_, g)| g.name == name).map(|(id, _)| id)
    }

    pub fn signature(&self, func: FuncId) -> Option<Signature> {
        self.functions.get(func).map(|f| f.signature.clone())
    }

    /// Every function's signature, by id: what a [`crate::builder::FunctionBuilder`]
    /// building a function for this module looks callees up in, while the module itself
    /// is borrowed mutably.
    pub fn signatures(&self) -> std::collections::HashMap<FuncId, Signature> {
        self.functions.iter().map(|(id, f)| (id, f.signature.clone())).collect()
    }

    /// Removes the functions in `dead`, renumbering the others in order and rewriting
    /// every reference (calls, function addresses in instructions and global
    /// initializers, startup functions). Nothing that stays may reference a removed
    /// function: the caller proved them unreachable (panics otherwise, a caller's bug).
    pub fn remove_functions(&mut self, dead: &HashSet<FuncId>) {
        if dead.is_empty() {
            return;
        }
        let mut renumbered: HashMap<FuncId, FuncId> = HashMap::new();
        self.function_ids.clear();
        for (old, function) in std::mem::take(&mut self.functions) {
            if !dead.contains(&old) {
                let name = function.name.clone();
                let id = self.functions.push(function);
                self.function_ids.entry(name).or_insert(id);
                renumbered.insert(old, id);
            }
        }
        let new_id = |old: &mut FuncId| {
            *old = *renumbered
                .get(old)
                .unwrap_or_else(|| panic!("a kept function or global references removed {old}"));
        };
        let mentions_dead = |c: &Constant| {
            let mut found = false;
            c.for_each_function_address(&mut |f| found |= dead.contains(&f));
            found
        };
        for function in self.functions.values_mut() {
            for (inst, data) in function.dfg.insts.iter_mut() {
                // Instructions passes took out of the layout stay in the data-flow graph; one
                // naming a removed function becomes a constant, so that no id dangles.
                let removed_from_layout = function.layout.inst_block(inst).is_none();
                let stale = removed_from_layout
                    && match data {
                        InstructionData::Call { callee, .. } => dead.contains(callee),
                        InstructionData::Const { value, .. } => mentions_dead(value),
                        _ => false,
                    };
                if stale {
                    *data = InstructionData::Const { ty: Type::I1, value: Constant::Undef };
                    continue;
                }
                match data {
                    InstructionData::Call { callee, .. } => new_id(callee),
                    InstructionData::Const { value, .. } => {
                        value.for_each_function_address_mut(&mut |f| new_id(f))
                    }
                    _ => {}
                }
            }
        }
        for global in self.globals.values_mut() {
            if let Some(init) = &mut global.init {
                init.for_each_function_address_mut(&mut |f| new_id(f));
            }
        }
        for startup in &mut self.startup {
            new_id(&mut startup.function);
        }
    }

    /// Computes the result type of `data` inside `func` (resolving direct callees here).
    pub fn result_type(
        &self,
        func: &Function,
        data: &crate::instructions::InstructionData,
    ) -> Option<Type> {
        func.dfg.result_type(data, &|callee| self.signature(callee))
    }
}
