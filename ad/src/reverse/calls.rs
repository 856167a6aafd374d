//! Calls in the reverse pass.
//!
//! - Allocators and `free`: memory bookkeeping (see `memory`); shadows of heap blocks are
//!   freed where their allocation is undone.
//! - libm functions (declarations the rules table knows): the rule's contributions.
//! - Inactive calls stay primal-only: no operand carries a derivative (no active float
//!   argument, no pointer argument with a shadow) — whatever the callee computes from
//!   inactive inputs is a constant for the derivative. Known output-only library
//!   functions (`printf`, `puts`, ...) are inactive whatever their arguments.
//! - Any other call with active operands is an error, never a silently wrong derivative:
//!   an unknown external is `UnknownExternal`; a defined function or an indirect call is
//!   `Unsupported` until calls are differentiated (augmented forward / reverse pairs).

use adc_ir::{Inst, InstructionData, Value};

use super::memory::ALLOCATORS;
use super::Synth;
use crate::error::AdError;
use crate::rules::{self, Differentiable};

/// Library functions that only print or inspect and never carry derivatives.
const INACTIVE_LIBRARY: &[&str] =
    &["printf", "fprintf", "puts", "putchar", "fputs", "fflush", "abort", "exit", "free"];

impl<'a> Synth<'a> {
    fn operand_is_active(&self, value: Value) -> bool {
        self.is_active(value) || self.shadows.contains_key(&value)
    }

    pub(super) fn reverse_call(&mut self, inst: Inst) -> Result<(), AdError> {
        let data = self.primal.dfg.insts[inst].clone();
        let result = self.primal.dfg.inst_result(inst);
        let result_active = result.is_some_and(|r| self.is_active(r));
        let (callee, args) = match &data {
            InstructionData::Call { callee, args, .. } => (*callee, args.clone()),
            InstructionData::CallIndirect { args, .. } => {
                if args.iter().any(|a| self.operand_is_active(*a)) {
                    return Err(self.unsupported(
                        inst,
                        "an indirect call with active arguments (calls are differentiated in issue 7)",
                    ));
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let function = &self.module.functions[callee];
        let name = function.name.clone();
        if ALLOCATORS.contains(&name.as_str()) {
            return self.reverse_memory(inst);
        }
        if INACTIVE_LIBRARY.contains(&name.as_str()) {
            return Ok(());
        }
        let active_args = args.iter().any(|a| self.operand_is_active(*a));
        if !active_args {
            return Ok(());
        }
        if function.is_declaration() {
            if let Err(e) = rules::rule_for(Differentiable::Call(&name)) {
                return Err(self.error(inst, e.into()));
            }
            if !result_active {
                return Ok(());
            }
            let result = result.expect("active results exist");
            let d = self.take_adjoint(result);
            return self.apply_rule(inst, Differentiable::Call(&name), &args, result, d);
        }
        Err(self.unsupported(
            inst,
            format!(
                "call to @{name}, which carries derivatives (calls are differentiated in issue 7)"
            ),
        ))
    }
}
