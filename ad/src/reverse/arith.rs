//! Adjoints of value instructions: arithmetic and casts (formulas from `crate::rules`),
//! `select`, aggregate fields and vector lanes. Integer results carry no adjoint.
//!
//! - `r = select c, a, b`: `da += c ? dr : 0`, `db += c ? 0 : dr` (the condition is
//!   recomputed or cached like any other value).
//! - `extractvalue`/`insertvalue` and `extractlane`/`insertlane`: the adjoint moves
//!   between the field (lane) and the whole; an overwritten field gets no adjoint.
//! - `shuffle`: each result lane's adjoint goes to the source lane it came from.
//! - `reduce.fadd`: every lane and the start value receive `dr`.
//! - `freeze` is the identity.

use adc_ir::builder::FunctionBuilder;
use adc_ir::{BinaryOp, CastOp, Inst, InstructionData, ReduceOp, Type, UnaryOp, Value};

use super::Synth;
use crate::error::AdError;
use crate::request::has_float;
use crate::rules::{self, Differentiable};

impl<'a> Synth<'a> {
    pub(super) fn reverse_arith(&mut self, inst: Inst) -> Result<(), AdError> {
        use InstructionData as I;
        let Some(result) = self.primal.dfg.inst_result(inst) else { return Ok(()) };
        if !self.is_active(result) {
            return Ok(());
        }
        let data = self.primal.dfg.insts[inst].clone();
        match data {
            I::Const { .. } | I::Icmp { .. } | I::Fcmp { .. } => Ok(()),
            I::Unary { op: UnaryOp::Freeze, arg, .. } => {
                let d = self.take_adjoint(result);
                self.add_adjoint(arg, d);
                Ok(())
            }
            I::Unary { op, arg, .. } => {
                let d = self.take_adjoint(result);
                self.apply_rule(inst, Differentiable::Unary(op), &[arg], result, d)
            }
            // Reinterpreting float bits held in an integer (`memcpy(&d, &bits, 8)` at -O2)
            // keeps the value: the adjoint passes through unchanged.
            I::Cast { op: CastOp::Bitcast, arg, .. }
                if self.adjoint_type(arg) == self.adjoint_type(result) =>
            {
                let d = self.take_adjoint(result);
                self.add_adjoint(arg, d);
                Ok(())
            }
            I::Cast { op, arg, .. } => {
                let d = self.take_adjoint(result);
                self.apply_rule(inst, Differentiable::Cast(op), &[arg], result, d)
            }
            I::Binary { op, args, .. } => {
                let d = self.take_adjoint(result);
                self.apply_rule(inst, Differentiable::Binary(op), &args, result, d)
            }
            I::Fma { args, .. } => {
                let d = self.take_adjoint(result);
                self.apply_rule(inst, Differentiable::Fma, &args, result, d)
            }
            I::Select { args: [cond, a, b], .. } => {
                let d = self.take_adjoint(result);
                let cond = self.primal_in_reverse(cond);
                let ty = self.ty(d);
                let zero = self.zero(&ty);
                let da = self.val(I::Select { flags: Default::default(), args: [cond, d, zero] });
                let db = self.val(I::Select { flags: Default::default(), args: [cond, zero, d] });
                self.add_adjoint(a, da);
                self.add_adjoint(b, db);
                Ok(())
            }
            I::ExtractValue { aggregate, indices } => {
                let d = self.take_adjoint(result);
                let ty = self.primal.dfg.value_type(aggregate).clone();
                let zero = self.zero(&ty);
                let whole = self.val(I::InsertValue { aggregate: zero, value: d, indices });
                self.add_adjoint(aggregate, whole);
                Ok(())
            }
            I::InsertValue { aggregate, value, indices } => {
                let d = self.take_adjoint(result);
                if has_float(self.primal.dfg.value_type(value)) {
                    let field =
                        self.val(I::ExtractValue { aggregate: d, indices: indices.clone() });
                    self.add_adjoint(value, field);
                }
                let field_ty = self.primal.dfg.value_type(value).clone();
                let zero = self.zero(&field_ty);
                let rest = self.val(I::InsertValue { aggregate: d, value: zero, indices });
                self.add_adjoint(aggregate, rest);
                Ok(())
            }
            I::ExtractLane { vector, index } => {
                let d = self.take_adjoint(result);
                let index = self.primal_in_reverse(index);
                // An integer vector carrying float bits has a float vector adjoint.
                let ty = self.adjoint_type(vector);
                let d = self.reinterpret(d, ty.lane_type().clone());
                let zero = self.zero(&ty);
                let whole = self.val(I::InsertLane { vector: zero, value: d, index });
                self.add_adjoint(vector, whole);
                Ok(())
            }
            I::InsertLane { vector, value, index } => {
                let d = self.take_adjoint(result);
                let index = self.primal_in_reverse(index);
                let lane = self.val(I::ExtractLane { vector: d, index });
                let lane = self.reinterpret(lane, self.adjoint_type(value));
                self.add_adjoint(value, lane);
                let lane_ty = self.ty(d).lane_type().clone();
                let zero = self.zero(&lane_ty);
                let rest = self.val(I::InsertLane { vector: d, value: zero, index });
                self.add_adjoint(vector, rest);
                Ok(())
            }
            I::Shuffle { args: [a, b], mask } => {
                let d = self.take_adjoint(result);
                let a_ty = self.adjoint_type(a);
                let width = u32::from(a_ty.lanes() as u16) as usize;
                let mut da = self.zero(&a_ty);
                let mut db = self.zero(&a_ty);
                for (lane, source) in mask.iter().enumerate() {
                    let Some(source) = *source else { continue };
                    let source = source as usize;
                    let out_index = self.iconst(Type::I64, lane as i128);
                    let contribution = self.val(I::ExtractLane { vector: d, index: out_index });
                    let contribution = self.reinterpret(contribution, a_ty.lane_type().clone());
                    let (target, lane_in) =
                        if source < width { (&mut da, source) } else { (&mut db, source - width) };
                    let in_index = self.iconst(Type::I64, lane_in as i128);
                    let old = self.val(I::ExtractLane { vector: *target, index: in_index });
                    let sum = self.binary(BinaryOp::Fadd, old, contribution);
                    *target =
                        self.val(I::InsertLane { vector: *target, value: sum, index: in_index });
                }
                self.add_adjoint(a, da);
                self.add_adjoint(b, db);
                Ok(())
            }
            I::Reduce { op: ReduceOp::Fadd, args, .. } => {
                let d = self.take_adjoint(result);
                if let Some(start) = args.get(1) {
                    self.add_adjoint(*start, d);
                }
                let vector_ty = self.primal.dfg.value_type(args[0]).clone();
                let mut splat = self.zero(&vector_ty);
                for lane in 0..vector_ty.lanes() {
                    let index = self.iconst(Type::I64, i128::from(lane));
                    splat = self.val(I::InsertLane { vector: splat, value: d, index });
                }
                self.add_adjoint(args[0], splat);
                Ok(())
            }
            other => Err(self
                .unsupported(inst, format!("`{}` on floating-point values", other.opcode_name()))),
        }
    }

    /// Adds the contribution of each operand given by the derivative rule of `op`.
    pub(super) fn apply_rule(
        &mut self,
        inst: Inst,
        op: Differentiable<'_>,
        operands: &[Value],
        result: Value,
        d: Value,
    ) -> Result<(), AdError> {
        let contributions = self.rule_contributions(inst, op, operands, result, d)?;
        for (operand, contribution) in operands.iter().zip(contributions) {
            if let Some(c) = contribution {
                self.add_adjoint(*operand, c);
            }
        }
        Ok(())
    }

    /// Emits `d · ∂result/∂operand` for each active operand at `cur` (formulas from the
    /// rules table); the primal values the rule reads are materialized first.
    fn rule_contributions(
        &mut self,
        inst: Inst,
        op: Differentiable<'_>,
        operands: &[Value],
        result: Value,
        d: Value,
    ) -> Result<Vec<Option<Value>>, AdError> {
        let rule = rules::rule_for(op).map_err(|e| self.error(inst, e.into()))?;
        let needs = rule.needs();
        let active: Vec<bool> = operands.iter().map(|o| self.is_active(*o)).collect();
        // Operands the partials do not read are passed for their types only.
        // A product reads operand j only for the partial of the other operand: with one
        // active operand (`x * c`), the other's partial, and the value it reads, are
        // never emitted, so that value need not be cached.
        let product = matches!(op, Differentiable::Binary(BinaryOp::Fmul));
        let mut site_operands = Vec::with_capacity(operands.len());
        for (index, operand) in operands.iter().enumerate() {
            let read_by_partials = needs.operands.get(index).copied().unwrap_or(true);
            let wanted =
                if product && operands.len() == 2 { active[1 - index] } else { read_by_partials };
            site_operands.push(if wanted {
                self.primal_in_reverse(*operand)
            } else {
                self.fwd(*operand)
            });
        }
        let site_result =
            if needs.result { self.primal_in_reverse(result) } else { self.fwd(result) };
        let site = rules::PrimalSite { op, operands: &site_operands, result: site_result };
        let signatures = self.signatures;
        let module = self.module;
        let lookup = |id: adc_ir::FuncId| signatures.get(&id).cloned();
        let resolve = |name: &str| module.function_by_name(name);
        let mut builder = FunctionBuilder::new(&mut self.f, &lookup);
        builder.switch_to_block(self.cur);
        let emitted = rules::emit_active_adjoints(&mut builder, &site, d, &active, &resolve);
        if let Some(block) = builder.current_block() {
            self.cur = block;
        }
        emitted.map_err(|e| self.error(inst, e.into()))
    }
}
