//! Forward mode for value operations: arithmetic and libm calls through the rule table
//! (`rules::emit_tangent`), casts, selects, vector lanes, shuffles, reductions and
//! aggregates (which move tangents structurally, the same operation on the shadows).

use adc_ir::{CastOp, Constant, Inst, InstructionData, ReduceOp, Value};

use crate::rules::{self, Differentiable, PrimalSite};
use crate::{AdError, AdErrorKind};

use super::Synth;
use crate::request::has_float;

impl Synth<'_> {
    /// Copies a value operation and, when its result is active, emits its tangent.
    pub(crate) fn translate_arith(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let data = self.primal.inst(inst).clone();
        let Some(result) = self.copy_primal(inst) else { return Ok(()) };
        let primal_result = self.primal.dfg.inst_result(inst).expect("copied a result");
        if !self.wants_shadow(primal_result) {
            return Ok(());
        }
        let ty = self.primal_type(primal_result);
        if !has_float(&ty) && !ty.is_ptr() && !matches!(data, I::Cast { .. }) {
            // Integer arithmetic on bits the type analysis could not prove integers.
            return Err(self.error(
                inst,
                AdErrorKind::UndeducibleType {
                    what: format!(
                        "the operands of `{}`: integer operations on bits that may hold a \
                         float",
                        data.opcode_name()
                    ),
                },
            ));
        }
        for lane in self.lanes() {
            self.in_lane(lane, |s| {
                if let Some(tangent) = s.lane_tangent(inst, data.clone(), result)? {
                    s.record_shadow(primal_result, tangent);
                }
                Ok::<(), AdError>(())
            })?;
        }
        Ok(())
    }

    /// The tangent of a value operation in the current lane; `None` when it has none.
    fn lane_tangent(
        &mut self,
        inst: Inst,
        data: InstructionData,
        result: Value,
    ) -> Result<Option<Value>, AdError> {
        use InstructionData as I;
        let tangent = match data {
            I::Unary { op, arg, .. } => {
                self.rule_tangent(inst, Differentiable::Unary(op), &[arg], result)?
            }
            I::Binary { op, args, .. } => {
                self.rule_tangent(inst, Differentiable::Binary(op), &args, result)?
            }
            I::Fma { args, .. } => self.rule_tangent(inst, Differentiable::Fma, &args, result)?,
            I::Cast { op: op @ (CastOp::Fpext | CastOp::Fptrunc), arg, .. } => {
                self.rule_tangent(inst, Differentiable::Cast(op), &[arg], result)?
            }
            I::Cast { op, arg, ty } => {
                // Bitcast and addrspacecast move the shadow's bits the same way.
                let shadow = self.shadow(arg, inst)?;
                self.b.cast(op, shadow, ty)
            }
            I::Select { flags, args: [cond, a, b] } => {
                let (ta, tb) = (self.shadow(a, inst)?, self.shadow(b, inst)?);
                let cond = self.value(cond);
                self.b.ins(I::Select { flags, args: [cond, ta, tb] }).1.expect("select result")
            }
            I::ExtractLane { vector, index } => {
                let (vector, index) = (self.shadow(vector, inst)?, self.value(index));
                self.b.ins(I::ExtractLane { vector, index }).1.expect("lane result")
            }
            I::InsertLane { vector, value, index } => {
                let (vector, value) = (self.shadow(vector, inst)?, self.shadow(value, inst)?);
                let index = self.value(index);
                self.b.ins(I::InsertLane { vector, value, index }).1.expect("lane result")
            }
            I::Shuffle { args: [a, b], mask } => {
                let args = [self.shadow(a, inst)?, self.shadow(b, inst)?];
                self.b.ins(I::Shuffle { args, mask }).1.expect("shuffle result")
            }
            I::ExtractValue { aggregate, indices } => {
                let aggregate = self.shadow(aggregate, inst)?;
                self.b.ins(I::ExtractValue { aggregate, indices }).1.expect("field result")
            }
            I::InsertValue { aggregate, value, indices } => {
                let (aggregate, value) = (self.shadow(aggregate, inst)?, self.shadow(value, inst)?);
                self.b.ins(I::InsertValue { aggregate, value, indices }).1.expect("field result")
            }
            I::Reduce { op: ReduceOp::Fadd, flags, args } => {
                // d(s + Σ v_i) = ds + Σ dv_i: the same reduction over the tangents.
                let mut shadows = Vec::with_capacity(args.len());
                for arg in args {
                    shadows.push(self.shadow(arg, inst)?);
                }
                let data = I::Reduce { op: ReduceOp::Fadd, flags, args: shadows };
                self.b.ins(data).1.expect("reduce result")
            }
            I::Reduce { op, .. } => {
                return Err(self.error(
                    inst,
                    AdErrorKind::Unsupported {
                        what: format!("{op} in forward mode (only reduce.fadd is implemented)"),
                    },
                ))
            }
            _ => return Ok(None),
        };
        Ok(Some(tangent))
    }

    /// The tangent of an operation with a rule: `Σ ∂f/∂x_i · dx_i` over the active operands,
    /// or a zero when no derivative flows (a step function, inactive operands).
    pub(crate) fn rule_tangent(
        &mut self,
        inst: Inst,
        op: Differentiable<'_>,
        primal_operands: &[Value],
        result: Value,
    ) -> Result<Value, AdError> {
        let operands: Vec<Value> = primal_operands.iter().map(|v| self.value(*v)).collect();
        let tangents: Vec<Option<Value>> =
            primal_operands.iter().map(|v| self.active_shadow(*v)).collect();
        let site = PrimalSite { op, operands: &operands, result };
        let module = self.module;
        let resolve = |name: &str| module.function_by_name(name);
        let tangent = rules::emit_tangent(&mut self.b, &site, &tangents, &resolve)
            .map_err(|e| self.error(inst, AdErrorKind::from(e)))?;
        Ok(match tangent {
            Some(t) => t,
            None => {
                let ty = self.b.func.dfg.value_type(result).clone();
                self.b.constant(ty, Constant::Zero)
            }
        })
    }
}
