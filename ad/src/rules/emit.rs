//! Emits a rule's partial derivatives as instructions at the end of the builder's current
//! block, and combines them with differentials: adjoints (reverse mode) and tangents
//! (forward mode). Vectors are handled lane-wise: arithmetic applies to whole vectors,
//! libm calls are scalarized lane by lane.

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    BinaryOp, CastOp, Constant, FloatCC, FuncAttrs, InstructionData, IntCC, Type, UnaryOp, Value,
};

use super::{
    float_lane, lookup_call, rule_for, CalleeResolver, Differentiable, Expr, Libm, Param, Partial,
    PrimalSite, RuleError,
};

/// Attributes of the libm calls in derivative code. `readnone` although libm may set
/// `errno`: errno from derivative code is meaningless to the program, and declaring the
/// calls pure lets the post-AD passes (DCE, GVN, LICM) treat them as arithmetic.
pub const DERIVATIVE_CALL_ATTRS: FuncAttrs =
    FuncAttrs(FuncAttrs::READNONE.0 | FuncAttrs::NOUNWIND.0 | FuncAttrs::WILLRETURN.0);

/// One partial derivative as emitted: shortcuts for the constant ones keep the derivative
/// code free of `x * 1.0`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum EmittedPartial {
    /// No derivative flows to this operand (integer operand, or zero derivative).
    None,
    /// `∂f/∂arg = 1`.
    One,
    /// `∂f/∂arg = -1`.
    MinusOne,
    /// `∂f/∂arg` is this value (of the rule's float type).
    Factor(Value),
    /// `∂f/∂arg = 1` across a float conversion: the differential is converted with the
    /// primal cast (`fpext`/`fptrunc`) in forward mode, with the inverse one in reverse.
    Convert(CastOp),
}

/// Emits `∂f/∂arg_i` for every operand of `site`.
pub fn emit_partials(
    b: &mut FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    callees: CalleeResolver<'_>,
) -> Result<Vec<EmittedPartial>, RuleError> {
    emit_wanted_partials(b, site, &vec![true; site.operands.len()], callees)
}

/// Emits `∂f/∂arg_i` for the operands with `wanted[i]`; the others get
/// `EmittedPartial::None` and cost no code (no `log` for `pow`'s constant exponent).
fn emit_wanted_partials(
    b: &mut FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    wanted: &[bool],
    callees: CalleeResolver<'_>,
) -> Result<Vec<EmittedPartial>, RuleError> {
    let rule = rule_for(site.op)?;
    if wanted.len() != site.operands.len() {
        return Err(RuleError::Arity {
            what: format!("the activity mask of {}", site.op),
            expected: site.operands.len(),
            got: wanted.len(),
        });
    }
    if rule.partials.len() != site.operands.len() {
        return Err(RuleError::Arity {
            what: site.op.to_string(),
            expected: rule.partials.len(),
            got: site.operands.len(),
        });
    }
    let result_ty = b.func.dfg.value_type(site.result).clone();
    check_operand_types(b, site, &result_ty)?;
    // Differentials of non-floats do not exist: a rule with a derivative needs a float
    // result (`freeze` of an integer, say, has none).
    if rule.partials.iter().any(|p| matches!(p, Partial::Expr(_))) {
        float_lane(site.op, &result_ty)?;
    }
    let mut emitter = Emitter { b, site, ty: result_ty, callees };
    let mut out = Vec::with_capacity(rule.partials.len());
    for (i, partial) in rule.partials.iter().enumerate() {
        if !wanted[i] {
            out.push(EmittedPartial::None);
            continue;
        }
        out.push(match partial {
            Partial::Inactive | Partial::Zero(_) => EmittedPartial::None,
            Partial::Convert => match site.op {
                Differentiable::Cast(cast @ (CastOp::Fpext | CastOp::Fptrunc)) => {
                    emitter.check_float(site.operands[i])?;
                    EmittedPartial::Convert(cast)
                }
                _ => return Err(RuleError::NoRule { what: site.op.to_string() }),
            },
            Partial::Expr(Expr::Const(c)) if *c == 1.0 => EmittedPartial::One,
            Partial::Expr(Expr::Const(c)) if *c == -1.0 => EmittedPartial::MinusOne,
            Partial::Expr(e) => EmittedPartial::Factor(emitter.expr(e)?),
        });
    }
    Ok(out)
}

/// Rejects operands whose types do not fit the rule: float operands of another type than
/// the result (a call of `sin` on an `f32`), integer operands where a float is expected.
fn check_operand_types(
    b: &FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    result_ty: &Type,
) -> Result<(), RuleError> {
    let params: Vec<Param> = match site.op {
        Differentiable::Call(name) => match lookup_call(name) {
            Some(rule) => rule.function.params.to_vec(),
            None => return Ok(()),
        },
        Differentiable::Unary(_) | Differentiable::Binary(_) | Differentiable::Fma => {
            vec![Param::Float; site.operands.len()]
        }
        // Casts change the type by definition; `Convert` checks its operand.
        Differentiable::Cast(_) => return Ok(()),
    };
    for (index, (param, operand)) in params.iter().zip(site.operands).enumerate() {
        let ty = b.func.dfg.value_type(*operand);
        let ok = match param {
            Param::Float => ty == result_ty,
            Param::Int => ty.lane_type().is_int() && ty.lanes() == result_ty.lanes(),
            Param::IntOut => ty.is_ptr() && !result_ty.is_vector(),
        };
        if !ok {
            let expected = match param {
                Param::Float => format!("the result type {result_ty}"),
                Param::Int => "an integer".to_string(),
                Param::IntOut => "a pointer (of a scalar call)".to_string(),
            };
            return Err(RuleError::OperandType {
                what: site.op.to_string(),
                index,
                expected,
                found: ty.to_string(),
            });
        }
    }
    Ok(())
}

/// Reverse mode: emits `d_arg_i = d_result · ∂f/∂arg_i` for every operand; `None` where no
/// derivative flows (integer operands, piecewise-constant operations).
pub fn emit_adjoints(
    b: &mut FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    d_result: Value,
    callees: CalleeResolver<'_>,
) -> Result<Vec<Option<Value>>, RuleError> {
    emit_active_adjoints(b, site, d_result, &vec![true; site.operands.len()], callees)
}

/// As [`emit_adjoints`], for the operands with `active[i]` only (the others get `None`
/// and no code).
pub fn emit_active_adjoints(
    b: &mut FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    d_result: Value,
    active: &[bool],
    callees: CalleeResolver<'_>,
) -> Result<Vec<Option<Value>>, RuleError> {
    let partials = emit_wanted_partials(b, site, active, callees)?;
    let mut out = Vec::with_capacity(partials.len());
    for (partial, operand) in partials.into_iter().zip(site.operands) {
        out.push(match partial {
            EmittedPartial::None => None,
            EmittedPartial::One => Some(d_result),
            EmittedPartial::MinusOne => Some(b.unary(UnaryOp::Fneg, d_result)),
            EmittedPartial::Factor(p) => Some(b.binary(BinaryOp::Fmul, d_result, p)),
            EmittedPartial::Convert(cast) => {
                let back = if cast == CastOp::Fpext { CastOp::Fptrunc } else { CastOp::Fpext };
                let ty = b.func.dfg.value_type(*operand).clone();
                Some(b.cast(back, d_result, ty))
            }
        });
    }
    Ok(out)
}

/// Forward mode: emits `d_result = Σ_i ∂f/∂arg_i · d_arg_i` over the operands that have a
/// tangent (`Some`); `None` when no term is nonzero (the tangent is zero).
pub fn emit_tangent(
    b: &mut FunctionBuilder<'_>,
    site: &PrimalSite<'_>,
    d_operands: &[Option<Value>],
    callees: CalleeResolver<'_>,
) -> Result<Option<Value>, RuleError> {
    if d_operands.len() != site.operands.len() {
        return Err(RuleError::Arity {
            what: format!("the tangents of {}", site.op),
            expected: site.operands.len(),
            got: d_operands.len(),
        });
    }
    let wanted: Vec<bool> = d_operands.iter().map(Option::is_some).collect();
    let partials = emit_wanted_partials(b, site, &wanted, callees)?;
    let mut sum: Option<Value> = None;
    // `-a` terms are kept apart so that a single one becomes `fneg` and the others `fsub`.
    for (partial, d_arg) in partials.into_iter().zip(d_operands) {
        let Some(d_arg) = *d_arg else { continue };
        let (term, negate) = match partial {
            EmittedPartial::None => continue,
            EmittedPartial::One => (d_arg, false),
            EmittedPartial::MinusOne => (d_arg, true),
            EmittedPartial::Factor(p) => (b.binary(BinaryOp::Fmul, p, d_arg), false),
            EmittedPartial::Convert(cast) => {
                let ty = b.func.dfg.value_type(site.result).clone();
                (b.cast(cast, d_arg, ty), false)
            }
        };
        sum = Some(match (sum, negate) {
            (None, false) => term,
            (None, true) => b.unary(UnaryOp::Fneg, term),
            (Some(acc), false) => b.binary(BinaryOp::Fadd, acc, term),
            (Some(acc), true) => b.binary(BinaryOp::Fsub, acc, term),
        });
    }
    Ok(sum)
}

struct Emitter<'e, 'b, 'f, 's> {
    b: &'e mut FunctionBuilder<'f>,
    site: &'s PrimalSite<'b>,
    /// The rule's float type: the primal result's type (scalar or vector).
    ty: Type,
    callees: CalleeResolver<'e>,
}

impl Emitter<'_, '_, '_, '_> {
    fn check_float(&self, value: Value) -> Result<(), RuleError> {
        let ty = self.b.func.dfg.value_type(value);
        float_lane(self.site.op, ty).map(|_| ())
    }

    fn operand(&self, i: usize) -> Result<Value, RuleError> {
        self.site.operands.get(i).copied().ok_or_else(|| RuleError::Arity {
            what: self.site.op.to_string(),
            expected: i + 1,
            got: self.site.operands.len(),
        })
    }

    fn constant(&mut self, c: f64) -> Value {
        let scalar = match self.ty.lane_type() {
            Type::F32 => Constant::f32(c as f32),
            _ => Constant::f64(c),
        };
        let value = if self.ty.is_vector() {
            Constant::Elements(vec![scalar; self.ty.lanes() as usize])
        } else {
            scalar
        };
        self.b.constant(self.ty.clone(), value)
    }

    fn bin(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.b.binary(op, a, b)
    }

    fn expr(&mut self, e: &Expr) -> Result<Value, RuleError> {
        Ok(match e {
            Expr::Arg(i) => self.operand(*i)?,
            Expr::Res => self.site.result,
            Expr::Const(c) => self.constant(*c),
            Expr::Neg(a) => {
                let a = self.expr(a)?;
                self.b.unary(UnaryOp::Fneg, a)
            }
            Expr::Add(a, b) => self.binary(BinaryOp::Fadd, a, b)?,
            Expr::Sub(a, b) => self.binary(BinaryOp::Fsub, a, b)?,
            Expr::Mul(a, b) => self.binary(BinaryOp::Fmul, a, b)?,
            Expr::Div(a, b) => self.binary(BinaryOp::Fdiv, a, b)?,
            Expr::Copysign(a, b) => self.binary(BinaryOp::Copysign, a, b)?,
            Expr::Unary(op, a) => {
                let a = self.expr(a)?;
                self.b.unary(*op, a)
            }
            Expr::IntToFloat(a) => {
                let a = self.expr(a)?;
                if !self.b.func.dfg.value_type(a).lane_type().is_int() {
                    return Err(self.bad_operand("an integer operand", a));
                }
                let ty = self.ty.clone();
                self.b.cast(CastOp::Sitofp, a, ty)
            }
            Expr::IfLess { lhs, rhs, then, otherwise } => {
                let lhs = self.expr(lhs)?;
                let rhs = self.expr(rhs)?;
                let cond = self.b.fcmp(FloatCC::Olt, lhs, rhs);
                let then = self.expr(then)?;
                let otherwise = self.expr(otherwise)?;
                self.b.select(cond, then, otherwise)
            }
            Expr::IfZero { value, then, otherwise } => {
                let value = self.expr(value)?;
                let value_ty = self.b.func.dfg.value_type(value).clone();
                let cond = if value_ty.lane_type().is_int() {
                    let zero = self.b.iconst(value_ty, 0);
                    self.b.icmp(IntCC::Eq, value, zero)
                } else {
                    let zero = self.constant(0.0);
                    self.b.fcmp(FloatCC::Oeq, value, zero)
                };
                let then = self.expr(then)?;
                let otherwise = self.expr(otherwise)?;
                self.b.select(cond, then, otherwise)
            }
            Expr::Call(f, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args.iter() {
                    values.push(self.expr(a)?);
                }
                self.call(*f, &values)?
            }
            Expr::Digamma(a) => {
                let a = self.expr(a)?;
                self.digamma(a)?
            }
        })
    }

    fn binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr) -> Result<Value, RuleError> {
        let a = self.expr(a)?;
        let b = self.expr(b)?;
        Ok(self.bin(op, a, b))
    }

    fn bad_operand(&self, expected: &str, value: Value) -> RuleError {
        RuleError::UnsupportedType {
            what: format!("{} (expected {expected})", self.site.op),
            ty: self.b.func.dfg.value_type(value).to_string(),
        }
    }

    /// Calls `f` in the rule's float type; on vectors, once per lane.
    fn call(&mut self, f: Libm, args: &[Value]) -> Result<Value, RuleError> {
        let lane = self.ty.lane_type().clone();
        let what = self.site.op.to_string();
        let name = f.name_for(&lane).ok_or_else(|| RuleError::UnsupportedType {
            what: what.clone(),
            ty: lane.to_string(),
        })?;
        let callee = (self.callees)(name)
            .ok_or_else(|| RuleError::MissingCallee { what, callee: name.to_string() })?;
        if args.len() != f.params.len() {
            return Err(RuleError::Arity {
                what: format!("@{name}"),
                expected: f.params.len(),
                got: args.len(),
            });
        }
        for (param, arg) in f.params.iter().zip(args) {
            let arg_lane = self.b.func.dfg.value_type(*arg).lane_type().clone();
            let ok = arg_lane == param.ir_type(&lane);
            if !ok {
                let expected = match param {
                    Param::Float => format!("a {lane} operand of @{name}"),
                    Param::Int => format!("an i32 operand of @{name}"),
                    Param::IntOut => format!("a pointer operand of @{name}"),
                };
                return Err(self.bad_operand(&expected, *arg));
            }
        }
        let call_value = |b: &mut FunctionBuilder<'_>, args: Vec<Value>| {
            let (_, v) =
                b.ins(InstructionData::Call { callee, args, attrs: DERIVATIVE_CALL_ATTRS });
            v.ok_or_else(|| RuleError::MissingCallee {
                what: format!("{} (the declaration returns nothing)", name),
                callee: name.to_string(),
            })
        };
        if !self.ty.is_vector() {
            return call_value(self.b, args.to_vec());
        }
        let mut acc = self.b.constant(self.ty.clone(), Constant::Undef);
        for k in 0..self.ty.lanes() {
            let index = self.b.iconst(Type::I32, i128::from(k));
            let mut lane_args = Vec::with_capacity(args.len());
            for a in args {
                lane_args.push(if self.b.func.dfg.value_type(*a).is_vector() {
                    self.lane_of(*a, index)
                } else {
                    *a
                });
            }
            let r = call_value(self.b, lane_args)?;
            let (_, v) = self.b.ins(InstructionData::InsertLane { vector: acc, value: r, index });
            acc = v.expect("insertlane has a result");
        }
        Ok(acc)
    }

    fn lane_of(&mut self, vector: Value, index: Value) -> Value {
        let (_, v) = self.b.ins(InstructionData::ExtractLane { vector, index });
        v.expect("extractlane has a result")
    }

    /// ψ(x) = Γ'(x)/Γ(x), straight-line code (no loops, so it fits where the builder is):
    ///
    /// 1. reflection for x < 1/2: ψ(x) = ψ(1 - x) - π / tan(πx), so t ≥ 1/2;
    /// 2. recurrence ψ(t) = ψ(t + N) - Σ_{k<N} 1/(t + k) with N = 10, so z = t + N ≥ 10.5;
    /// 3. the asymptotic series ψ(z) = ln z - 1/(2z) - Σ_{k=1..7} B_2k / (2k z^2k), whose
    ///    first omitted term is below 2e-17 for z ≥ 10.5.
    ///
    /// Accuracy: a few ulp of the largest of ln z and the recurrence sum in f64 (absolute
    /// error ≲ 1e-15 for moderate x); near the poles at non-positive integers, π/tan(πx)
    /// inherits the rounding error of πx. f32 evaluates the same formula in f32.
    fn digamma(&mut self, x: Value) -> Result<Value, RuleError> {
        const SHIFT: u32 = 10;
        // -B_2k / (2k) for k = 1..=7, innermost (k = 7) last.
        const SERIES: [f64; 7] = [
            -1.0 / 12.0,
            1.0 / 120.0,
            -1.0 / 252.0,
            1.0 / 240.0,
            -1.0 / 132.0,
            691.0 / 32760.0,
            -1.0 / 12.0,
        ];
        let half = self.constant(0.5);
        let one = self.constant(1.0);
        let reflect = self.b.fcmp(FloatCC::Olt, x, half);
        let one_minus_x = self.bin(BinaryOp::Fsub, one, x);
        let t = self.b.select(reflect, one_minus_x, x);

        let mut z = t;
        let mut sum: Option<Value> = None;
        for _ in 0..SHIFT {
            let recip = self.bin(BinaryOp::Fdiv, one, z);
            sum = Some(match sum {
                None => recip,
                Some(s) => self.bin(BinaryOp::Fadd, s, recip),
            });
            z = self.bin(BinaryOp::Fadd, z, one);
        }
        let zz = self.bin(BinaryOp::Fmul, z, z);
        let w = self.bin(BinaryOp::Fdiv, one, zz);
        let mut poly = self.constant(SERIES[6]);
        for c in SERIES[..6].iter().rev() {
            let times = self.bin(BinaryOp::Fmul, poly, w);
            let c = self.constant(*c);
            poly = self.bin(BinaryOp::Fadd, c, times);
        }
        let series = self.bin(BinaryOp::Fmul, poly, w);
        let ln_z = self.call(super::libm::LOG, &[z])?;
        let half_over_z = self.bin(BinaryOp::Fdiv, half, z);
        let asymptotic = self.bin(BinaryOp::Fsub, ln_z, half_over_z);
        let asymptotic = self.bin(BinaryOp::Fadd, asymptotic, series);
        let sum = sum.expect("SHIFT > 0");
        let psi_t = self.bin(BinaryOp::Fsub, asymptotic, sum);

        let pi = self.constant(std::f64::consts::PI);
        let pi_x = self.bin(BinaryOp::Fmul, pi, x);
        let tan = self.call(super::libm::TAN, &[pi_x])?;
        let cot_term = self.bin(BinaryOp::Fdiv, pi, tan);
        let reflected = self.bin(BinaryOp::Fsub, psi_t, cot_term);
        Ok(self.b.select(reflect, reflected, psi_t))
    }
}
