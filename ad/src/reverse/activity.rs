//! TEMPORARY conservative activity rule, used until `crate::activity` (branch `types`)
//! is merged: every float-typed value that is not a constant is active, and a pointer
//! needs a shadow when it is derived from a `Dup` argument, an alloca, a heap allocation,
//! or is loaded from memory that has a shadow. Conservative means "more active than
//! needed": the derivative stays correct, it only does useless work.

use std::collections::HashSet;

use adc_ir::{CastOp, Function, InstructionData, Module, Value, ValueDef};

use super::has_float;
use crate::request::DiffRequest;

/// Library allocators whose result gets a zero-filled shadow allocation of the same size.
pub(crate) const ALLOCATORS: &[&str] = &["malloc", "calloc", "_Znwm", "_Znam"];

pub(crate) struct TemporaryActivity {
    shadowed: HashSet<Value>,
}

impl TemporaryActivity {
    pub fn analyze(module: &Module, func: &Function, request: &DiffRequest) -> TemporaryActivity {
        let mut shadowed: HashSet<Value> = func
            .params()
            .iter()
            .zip(&request.args)
            .filter(|(_, a)| a.has_shadow())
            .map(|(p, _)| *p)
            .collect();
        // Forward propagation to a fixpoint: block parameters may be fed by later blocks.
        loop {
            let before = shadowed.len();
            for (_, inst) in func.layout.insts() {
                let result = func.dfg.inst_result(inst);
                let derived = match &func.dfg.insts[inst] {
                    InstructionData::Alloca { .. } => true,
                    InstructionData::PtrAdd { ptr, .. } => shadowed.contains(ptr),
                    InstructionData::Cast { op: CastOp::Addrspacecast, arg, .. } => {
                        shadowed.contains(arg)
                    }
                    InstructionData::Select { args: [_, a, b], .. } => {
                        shadowed.contains(a) || shadowed.contains(b)
                    }
                    InstructionData::Load { ty, ptr, .. } => {
                        ty.is_ptr() && shadowed.contains(ptr)
                    }
                    InstructionData::Call { callee, .. } => {
                        module.functions.get(*callee).is_some_and(|f| ALLOCATORS.contains(&f.name.as_str()))
                    }
                    data => {
                        for target in data.branch_targets() {
                            let params = func.dfg.block_params(target.block);
                            for (arg, param) in target.args.iter().zip(params) {
                                if shadowed.contains(arg) {
                                    shadowed.insert(*param);
                                }
                            }
                        }
                        false
                    }
                };
                if let (true, Some(result)) = (derived, result) {
                    if func.dfg.value_type(result).is_ptr() {
                        shadowed.insert(result);
                    }
                }
            }
            if shadowed.len() == before {
                break;
            }
        }
        TemporaryActivity { shadowed }
    }

    /// Whether a value may carry a derivative.
    pub fn is_active_value(&self, func: &Function, value: Value) -> bool {
        let constant = matches!(func.dfg.value_def(value),
            ValueDef::Result(inst) if matches!(func.dfg.insts[inst], InstructionData::Const { .. }));
        !constant && has_float(func.dfg.value_type(value))
    }

    /// Whether a pointer needs a shadow pointer.
    pub fn needs_shadow(&self, value: Value) -> bool {
        self.shadowed.contains(&value)
    }
}

