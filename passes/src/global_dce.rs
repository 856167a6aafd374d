//! `global-dce`: removes the functions nothing can reach.
//!
//! Roots are what another object or the program's start can reach: functions of external
//! (and weak, common) linkage, startup functions, and functions whose address a global's
//! initializer holds. A root's direct calls and the function addresses its instructions
//! use are reached in turn. What stays unreached and the module may discard (internal,
//! private and `linkonce_odr` definitions: C's `static` helpers after inlining, C++'s
//! inline functions and template instances, the copies AD made of a function it then
//! differentiated) is removed, so that no later pass optimizes it and the backend does
//! not compile it.
//!
//! Statistics: "functions removed".

use std::collections::HashSet;

use adc_ir::{Diagnostic, FuncId, InstructionData, Linkage, Module};

use crate::manager::{ModuleContext, ModulePass, Pass, PreservedAnalyses};

pub struct GlobalDce;

impl Pass for GlobalDce {
    fn name(&self) -> &'static str {
        "global-dce"
    }
}

impl ModulePass for GlobalDce {
    fn run(
        &self,
        module: &mut Module,
        cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let reached = reachable_functions(module);
        let dead: HashSet<FuncId> = module
            .functions
            .iter()
            .filter(|(id, f)| !reached.contains(id) && discardable(f.linkage))
            .map(|(id, _)| id)
            .collect();
        cx.stats.add("functions removed", dead.len() as u64);
        if dead.is_empty() {
            return Ok(PreservedAnalyses::All);
        }
        module.remove_functions(&dead);
        Ok(PreservedAnalyses::None)
    }
}

/// Linkages of definitions no other object can name: dropping an unused one changes
/// nothing a linker sees (another object using a `linkonce_odr` function has its own copy).
fn discardable(linkage: Linkage) -> bool {
    matches!(linkage, Linkage::Internal | Linkage::Private | Linkage::LinkOnceOdr)
}

fn reachable_functions(module: &Module) -> HashSet<FuncId> {
    let mut reached = HashSet::new();
    let mut work: Vec<FuncId> = Vec::new();
    let mut reach = |f: FuncId, work: &mut Vec<FuncId>| {
        if reached.insert(f) {
            work.push(f);
        }
    };
    for (id, func) in module.functions.iter() {
        if !discardable(func.linkage) {
            reach(id, &mut work);
        }
    }
    for startup in &module.startup {
        reach(startup.function, &mut work);
    }
    for global in module.globals.values() {
        if let Some(init) = &global.init {
            init.for_each_function_address(&mut |f| reach(f, &mut work));
        }
    }
    while let Some(f) = work.pop() {
        let func = &module.functions[f];
        for (_, inst) in func.layout.insts() {
            match &func.dfg.insts[inst] {
                InstructionData::Call { callee, .. } => reach(*callee, &mut work),
                InstructionData::Const { value, .. } => {
                    value.for_each_function_address(&mut |g| reach(g, &mut work));
                }
                _ => {}
            }
        }
    }
    reached
}
