//! TEMPORARY conservative activity for forward mode, to be replaced by the activity
//! analysis of `ad/src/activity.rs` (branch `types`) once it is merged.
//!
//! A value is active when it may carry a derivative from a `Dup` argument, computed as a
//! forward data-flow fixpoint: arguments with a shadow are active; float operations with
//! an active operand are; every alloca is (its shadow memory starts zeroed, so that
//! anything stored there later keeps its tangent); loads through an active pointer are
//! (whatever their type: an integer-typed load may move the bits of a float, and the
//! shadow load moves its tangent along); pointer arithmetic on an active pointer is;
//! selects, lanes, aggregates and block parameters are when a merged value is. Integer
//! arithmetic, comparisons and int<->float conversions never are.
//!
//! Conservative means: it may call a value active that no derivative reaches (its tangent
//! is then a computed zero); it never calls inactive a value that a derivative reaches
//! through the operations it understands. Calls are not followed (synthesis rejects calls
//! with active operands, except libm functions with a rule).

use std::collections::HashSet;

use adc_ir::{CastOp, Function, InstructionData, Module, Value};

use crate::rules;
use crate::DiffRequest;

use super::contains_float;

/// Which values of the primal are active.
#[derive(Clone, Debug, Default)]
pub struct ForwardActivity {
    active: HashSet<Value>,
}

impl ForwardActivity {
    pub fn compute(module: &Module, primal: &Function, request: &DiffRequest) -> ForwardActivity {
        let mut active: HashSet<Value> = HashSet::new();
        for (param, activity) in primal.params().iter().zip(&request.args) {
            if activity.has_shadow() {
                active.insert(*param);
            }
        }
        // Monotone: a value only ever becomes active, so the loop ends.
        loop {
            let mut changed = false;
            for (_, inst) in primal.layout.insts() {
                let data = primal.inst(inst);
                if let Some(result) = primal.dfg.inst_result(inst) {
                    if !active.contains(&result) && result_is_active(module, primal, data, &active)
                    {
                        active.insert(result);
                        changed = true;
                    }
                }
                for target in data.branch_targets() {
                    let params = primal.dfg.block_params(target.block);
                    for (param, arg) in params.iter().zip(&target.args) {
                        if active.contains(arg) && active.insert(*param) {
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        ForwardActivity { active }
    }

    pub fn is_active(&self, value: Value) -> bool {
        self.active.contains(&value)
    }
}

fn result_is_active(
    module: &Module,
    primal: &Function,
    data: &InstructionData,
    active: &HashSet<Value>,
) -> bool {
    use InstructionData as I;
    let is = |v: &Value| active.contains(v);
    let float_result = || {
        primal
            .dfg
            .result_type(data, &|callee| module.signature(callee))
            .is_some_and(|t| contains_float(&t))
    };
    match data {
        I::Unary { arg, .. } => float_result() && is(arg),
        I::Binary { args, .. } => float_result() && args.iter().any(is),
        I::Fma { args, .. } => float_result() && args.iter().any(is),
        I::Select { args: [_, a, b], .. } => is(a) || is(b),
        I::Cast { op, arg, .. } => match op {
            CastOp::Fpext | CastOp::Fptrunc | CastOp::Bitcast | CastOp::Addrspacecast => is(arg),
            _ => false,
        },
        I::Alloca { .. } => true,
        I::Load { ptr, .. } => is(ptr),
        I::PtrAdd { ptr, .. } => is(ptr),
        I::Call { callee, args, .. } => {
            let has_rule = module
                .functions
                .get(*callee)
                .is_some_and(|f| rules::lookup_call(&f.name).is_some());
            has_rule && float_result() && args.iter().any(is)
        }
        I::ExtractLane { vector, .. } => is(vector),
        I::InsertLane { vector, value, .. } => is(vector) || is(value),
        I::Shuffle { args, .. } => args.iter().any(is),
        I::Reduce { args, .. } => float_result() && args.iter().any(is),
        I::ExtractValue { aggregate, .. } => is(aggregate),
        I::InsertValue { aggregate, value, .. } => is(aggregate) || is(value),
        I::Const { .. }
        | I::Icmp { .. }
        | I::Fcmp { .. }
        | I::Store { .. }
        | I::MemCopy { .. }
        | I::MemSet { .. }
        | I::CallIndirect { .. }
        | I::AtomicRmw { .. }
        | I::CmpXchg { .. }
        | I::Fence { .. }
        | I::Jump { .. }
        | I::Brif { .. }
        | I::Switch { .. }
        | I::Return { .. }
        | I::Unreachable => false,
    }
}
