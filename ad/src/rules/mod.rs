//! The derivative-rule table: for every differentiable operation (an instruction opcode or
//! a libm function by name), the partial derivative of the result with respect to each
//! operand, written as data ([`Expr`]) over the primal operands, the primal result and
//! constants. One table serves both modes:
//!
//! - reverse mode: `d_arg_i = d_result * ∂f/∂arg_i` ([`emit_adjoints`]);
//! - forward mode: `d_result = Σ_i ∂f/∂arg_i * d_arg_i` ([`emit_tangent`]).
//!
//! Rules whose partials call other libm functions (`sin' = cos`, `erf' = 2/√π·exp(-x²)`)
//! need those functions declared in the module. The emitter only holds a
//! `FunctionBuilder`, not the module, so synthesis first asks [`externs_needed`] and
//! declares them, then passes a resolver (`name -> FuncId`) when emitting.
//!
//! Every rule is checked against central finite differences of the primal in this
//! module's tests, at several points of its domain, in `f64` and `f32`.
//!
//! # Conventions at points of non-differentiability (Enzyme's choices)
//!
//! - `fabs`: `x < 0 ? -1 : 1`, so the derivative at ±0 is `+1`.
//! - `fminnum`/`fmin`: the adjoint goes to `x` when `x < y`, otherwise to `y` (ties and
//!   NaNs give it to `y`). `fmaxnum`/`fmax`: to `y` when `x < y`, otherwise to `x` (ties
//!   give it to `x`).
//! - `sqrt` at `x == 0`: `0` (the one-sided derivative is infinite; Enzyme picks 0 so that
//!   `sqrt(x*x)` style code does not produce NaN gradients at 0).
//! - `floor ceil ftrunc round roundeven` (and libm `floor ceil trunc round roundeven rint
//!   nearbyint logb`): `0` everywhere, including at integers where they jump.
//! - `copysign(x, y)`: `∂x = copysign(1, x)·copysign(1, y)`, `∂y = 0`.
//! - `frem`/`fmod(x, y)`: `∂x = 1`, `∂y = -trunc(x / y)`; `remainder`: `∂y = -roundeven(x/y)`.
//! - `pow(x, y)`: `∂y = 0` at `x == 0` (instead of `0 · -inf = NaN`).
//! - `powi(x, n)`: `∂x = 0` when `n == 0` (instead of `0 · x^-1`, NaN at `x == 0`).
//! - `fdim(x, y)`: the adjoint goes to `x` and `-y` only when `y < x`.
//!
//! Integer operands (the exponent of `powi`/`ldexp`/`scalbn`) and operations whose result
//! is piecewise constant get no contribution (`None`), never an explicit zero.

mod arith;
mod emit;
mod libm;

#[cfg(test)]
mod tests;

use std::fmt;

use adc_ir::{BinaryOp, CastOp, FuncId, Signature, Type, UnaryOp, Value};

pub use arith::{op_rule, DIFFERENTIABLE_OPS};
pub use emit::{
    emit_active_adjoints, emit_adjoints, emit_partials, emit_tangent, EmittedPartial,
    DERIVATIVE_CALL_ATTRS,
};
pub use libm::{lookup_call, non_differentiable_call, CALL_RULES, NON_DIFFERENTIABLE_CALLS};

use crate::AdErrorKind;

/// What is being differentiated: an instruction opcode or a call to a libm function.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Differentiable<'a> {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `fma a, b, c`.
    Fma,
    Cast(CastOp),
    /// A direct call, by callee name (`sin`, `sinf`, `__adc_powi_f64`, `llvm.sin.f64`...).
    Call(&'a str),
}

impl fmt::Display for Differentiable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Differentiable::Unary(op) => write!(f, "{op}"),
            Differentiable::Binary(op) => write!(f, "{op}"),
            Differentiable::Fma => f.write_str("fma"),
            Differentiable::Cast(op) => write!(f, "{op}"),
            Differentiable::Call(name) => write!(f, "call @{name}"),
        }
    }
}

/// A libm function in its two precisions. Expressions name the callee once and the float
/// type of the rule picks the variant.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Libm {
    pub f64: &'static str,
    pub f32: &'static str,
    pub params: &'static [Param],
}

impl Libm {
    pub fn name_for(&self, lane: &Type) -> Option<&'static str> {
        match lane {
            Type::F64 => Some(self.f64),
            Type::F32 => Some(self.f32),
            _ => None,
        }
    }
}

/// A partial-derivative expression, evaluated in the float type of the rule (lane-wise on
/// vectors). Built as `static` data so that the table can be read, printed and checked.
#[derive(Debug)]
pub enum Expr {
    /// The primal operand with this index.
    Arg(usize),
    /// The primal result.
    Res,
    /// A constant of the rule's float type.
    Const(f64),
    Neg(&'static Expr),
    Add(&'static Expr, &'static Expr),
    Sub(&'static Expr, &'static Expr),
    Mul(&'static Expr, &'static Expr),
    Div(&'static Expr, &'static Expr),
    /// A float unary instruction (`sqrt`, `ftrunc`, `roundeven`...).
    Unary(UnaryOp, &'static Expr),
    /// `copysign(magnitude, sign)` as an instruction.
    Copysign(&'static Expr, &'static Expr),
    /// A call to a libm function (declared through [`externs_needed`]).
    Call(Libm, &'static [Expr]),
    /// An integer operand converted (`sitofp`) to the float type.
    IntToFloat(&'static Expr),
    /// `lhs < rhs ? then : otherwise` (ordered: false when either side is NaN).
    IfLess {
        lhs: &'static Expr,
        rhs: &'static Expr,
        then: &'static Expr,
        otherwise: &'static Expr,
    },
    /// `value == 0 ? then : otherwise`; `value` may be an integer operand.
    IfZero {
        value: &'static Expr,
        then: &'static Expr,
        otherwise: &'static Expr,
    },
    /// The digamma function ψ = Γ'/Γ, which libm lacks; emitted inline (see `emit.rs`
    /// for the method and its accuracy).
    Digamma(&'static Expr),
}

/// How the result depends on one operand.
#[derive(Debug)]
pub enum Partial {
    /// `∂f/∂arg` is this expression.
    Expr(Expr),
    /// The operand is an integer (an exponent): no derivative flows to it.
    Inactive,
    /// The derivative is zero wherever it exists (piecewise-constant functions); the
    /// string says why.
    Zero(&'static str),
    /// A float conversion (`fpext`, `fptrunc`): the derivative is 1, but the differential
    /// changes type with the value.
    Convert,
}

/// The rule of one operation: one partial per operand, in operand order.
#[derive(Debug)]
pub struct Rule {
    /// The operation as written in the table (`fmul`, `sin`...).
    pub name: &'static str,
    pub partials: &'static [Partial],
}

impl Rule {
    /// Which primal values the partials read (per operand, and the result). Reverse mode
    /// must keep or recompute exactly these for the adjoint.
    pub fn needs(&self) -> PrimalNeeds {
        let mut needs = PrimalNeeds { operands: vec![false; self.partials.len()], result: false };
        for partial in self.partials {
            if let Partial::Expr(e) = partial {
                mark_needs(e, &mut needs);
            }
        }
        needs
    }
}

/// The primal values a rule's partials read.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PrimalNeeds {
    pub operands: Vec<bool>,
    pub result: bool,
}

fn mark_needs(e: &Expr, needs: &mut PrimalNeeds) {
    match e {
        Expr::Arg(i) => {
            if let Some(slot) = needs.operands.get_mut(*i) {
                *slot = true;
            }
        }
        Expr::Res => needs.result = true,
        Expr::Const(_) => {}
        Expr::Neg(a) | Expr::Unary(_, a) | Expr::IntToFloat(a) | Expr::Digamma(a) => {
            mark_needs(a, needs)
        }
        Expr::Add(a, b)
        | Expr::Sub(a, b)
        | Expr::Mul(a, b)
        | Expr::Div(a, b)
        | Expr::Copysign(a, b) => {
            mark_needs(a, needs);
            mark_needs(b, needs);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| mark_needs(a, needs)),
        Expr::IfLess { lhs, rhs, then, otherwise } => {
            [lhs, rhs, then, otherwise].into_iter().for_each(|a| mark_needs(a, needs))
        }
        Expr::IfZero { value, then, otherwise } => {
            [value, then, otherwise].into_iter().for_each(|a| mark_needs(a, needs))
        }
    }
}

/// The rule of a libm function: the same partials for its `f64` and `f32` versions.
#[derive(Debug)]
pub struct CallRule {
    pub function: Libm,
    /// Further names that denote the same function (`__adc_powi_f64`, `__powidf2`).
    pub aliases: &'static [&'static str],
    pub partials: &'static [Partial],
}

impl CallRule {
    pub fn rule(&self) -> Rule {
        Rule { name: self.function.f64, partials: self.partials }
    }
}

/// One parameter of a libm function.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Param {
    /// The function's float type.
    Float,
    /// A C `int` (`i32`).
    Int,
    /// A pointer to a C `int` the function writes (`frexp`'s exponent, `lgamma_r`'s
    /// sign): an integer output, so no derivative flows through it.
    IntOut,
}

impl Param {
    /// The IR type of this parameter in a function of float type `lane`.
    pub fn ir_type(self, lane: &Type) -> Type {
        match self {
            Param::Float => lane.clone(),
            Param::Int => Type::I32,
            Param::IntOut => Type::PTR,
        }
    }
}

/// Why a rule cannot be applied.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum RuleError {
    #[error("no derivative rule for {what}")]
    NoRule { what: String },
    #[error("no derivative rule for the function @{callee}")]
    UnknownFunction { callee: String },
    #[error("{what} is not differentiable: {reason}")]
    NotDifferentiable { what: String, reason: String },
    #[error("{what} expects {expected} operands, got {got}")]
    Arity { what: String, expected: usize, got: usize },
    #[error("{what} on {ty}: the derivative rules cover f32 and f64 (and their vectors)")]
    UnsupportedType { what: String, ty: String },
    #[error("{what}: operand {index} has type {found}, expected {expected}")]
    OperandType { what: String, index: usize, expected: String, found: String },
    #[error("the derivative of {what} calls @{callee}, which is not declared in the module")]
    MissingCallee { what: String, callee: String },
}

impl From<RuleError> for AdErrorKind {
    fn from(err: RuleError) -> AdErrorKind {
        match err {
            RuleError::UnknownFunction { callee } => AdErrorKind::UnknownExternal { callee },
            other => AdErrorKind::NoRule { message: other.to_string() },
        }
    }
}

/// The rule for `op`, or why there is none.
pub fn rule_for(op: Differentiable<'_>) -> Result<Rule, RuleError> {
    match op {
        Differentiable::Call(name) => {
            if let Some(rule) = lookup_call(name) {
                return Ok(rule.rule());
            }
            if let Some(reason) = non_differentiable_call(name) {
                return Err(RuleError::NotDifferentiable {
                    what: format!("call @{name}"),
                    reason: reason.to_string(),
                });
            }
            Err(RuleError::UnknownFunction { callee: name.to_string() })
        }
        other => op_rule(other),
    }
}

/// The libm functions the rule of `op` calls when its float type is `ty` (scalar or
/// vector), with their signatures. Synthesis declares them before emitting.
pub fn externs_needed(
    op: Differentiable<'_>,
    ty: &Type,
) -> Result<Vec<(&'static str, Signature)>, RuleError> {
    let rule = rule_for(op)?;
    let mut out: Vec<(&'static str, Signature)> = Vec::new();
    for partial in rule.partials {
        if let Partial::Expr(e) = partial {
            collect_callees(e, &float_lane(op, ty)?, &mut out);
        }
    }
    Ok(out)
}

fn collect_callees(e: &Expr, lane: &Type, out: &mut Vec<(&'static str, Signature)>) {
    match e {
        Expr::Arg(_) | Expr::Res | Expr::Const(_) => {}
        Expr::Neg(a) | Expr::Unary(_, a) | Expr::IntToFloat(a) => collect_callees(a, lane, out),
        Expr::Digamma(a) => {
            collect_callees(a, lane, out);
            // The reflection formula for x < 1/2 uses tan and the asymptotic series log.
            for f in [libm::TAN, libm::LOG] {
                push_callee(f, lane, out);
            }
        }
        Expr::Add(a, b)
        | Expr::Sub(a, b)
        | Expr::Mul(a, b)
        | Expr::Div(a, b)
        | Expr::Copysign(a, b) => {
            collect_callees(a, lane, out);
            collect_callees(b, lane, out);
        }
        Expr::IfLess { lhs, rhs, then, otherwise } => {
            for x in [lhs, rhs, then, otherwise] {
                collect_callees(x, lane, out);
            }
        }
        Expr::IfZero { value, then, otherwise } => {
            for x in [value, then, otherwise] {
                collect_callees(x, lane, out);
            }
        }
        Expr::Call(f, args) => {
            for a in args.iter() {
                collect_callees(a, lane, out);
            }
            push_callee(*f, lane, out);
        }
    }
}

fn push_callee(f: Libm, lane: &Type, out: &mut Vec<(&'static str, Signature)>) {
    let Some(name) = f.name_for(lane) else { return };
    if out.iter().any(|(n, _)| *n == name) {
        return;
    }
    let params = f.params.iter().map(|p| p.ir_type(lane)).collect();
    out.push((name, Signature::new(params, Some(lane.clone()))));
}

/// The float lane type of an operation whose result (or vector of results) has type `ty`.
pub(crate) fn float_lane(op: Differentiable<'_>, ty: &Type) -> Result<Type, RuleError> {
    match ty.lane_type() {
        lane @ (Type::F32 | Type::F64) => Ok(lane.clone()),
        _ => Err(RuleError::UnsupportedType { what: op.to_string(), ty: ty.to_string() }),
    }
}

/// A compact infix rendering of a partial (`cos(x)`, `-r / y`), for documentation and
/// error messages. Operands are named `x y z` by position, the result `r`.
pub fn describe(partial: &Partial) -> String {
    match partial {
        Partial::Expr(e) => describe_expr(e),
        Partial::Inactive => "— (integer)".to_string(),
        Partial::Zero(_) => "0".to_string(),
        Partial::Convert => "1 (converted)".to_string(),
    }
}

fn describe_expr(e: &Expr) -> String {
    let name = |i: usize| ["x", "y", "z"].get(i).map_or(format!("a{i}"), |s| s.to_string());
    match e {
        Expr::Arg(i) => name(*i),
        Expr::Res => "r".to_string(),
        Expr::Const(c) => format!("{c}"),
        Expr::Neg(a) => format!("-{}", describe_atom(a)),
        Expr::Add(a, b) => format!("{} + {}", describe_expr(a), describe_expr(b)),
        Expr::Sub(a, b) => format!("{} - {}", describe_expr(a), describe_atom(b)),
        Expr::Mul(a, b) => format!("{}·{}", describe_atom(a), describe_atom(b)),
        Expr::Div(a, b) => format!("{} / {}", describe_atom(a), describe_atom(b)),
        Expr::Unary(op, a) => format!("{op}({})", describe_expr(a)),
        Expr::Copysign(a, b) => format!("copysign({}, {})", describe_expr(a), describe_expr(b)),
        Expr::Call(f, args) => {
            let args: Vec<String> = args.iter().map(describe_expr).collect();
            format!("{}({})", f.f64, args.join(", "))
        }
        Expr::IntToFloat(a) => describe_expr(a),
        Expr::IfLess { lhs, rhs, then, otherwise } => format!(
            "({} < {} ? {} : {})",
            describe_expr(lhs),
            describe_expr(rhs),
            describe_expr(then),
            describe_expr(otherwise)
        ),
        Expr::IfZero { value, then, otherwise } => format!(
            "({} == 0 ? {} : {})",
            describe_expr(value),
            describe_expr(then),
            describe_expr(otherwise)
        ),
        Expr::Digamma(a) => format!("digamma({})", describe_expr(a)),
    }
}

fn describe_atom(e: &Expr) -> String {
    match e {
        Expr::Add(..) | Expr::Sub(..) | Expr::Mul(..) | Expr::Div(..) | Expr::Neg(..) => {
            format!("({})", describe_expr(e))
        }
        _ => describe_expr(e),
    }
}

/// Resolves a libm name to the module's declaration when emitting.
pub type CalleeResolver<'a> = &'a dyn Fn(&str) -> Option<FuncId>;

/// The primal side of one differentiated operation, as the emitter needs it.
#[derive(Copy, Clone, Debug)]
pub struct PrimalSite<'a> {
    pub op: Differentiable<'a>,
    /// The primal operands, in order (for calls: the call arguments).
    pub operands: &'a [Value],
    /// The primal result.
    pub result: Value,
}

/// The rule table as Markdown (one row per operation: its names and the partial with
/// respect to each operand), for `docs/src/ad.md`; a test keeps the page in sync.
pub fn markdown_table() -> String {
    let mut out = String::from("| operation | ∂/∂x | ∂/∂y | ∂/∂z |\n|---|---|---|---|\n");
    let mut row = |names: String, partials: &[Partial]| {
        let mut cells: Vec<String> = partials.iter().map(describe).collect();
        cells.resize(3, String::new());
        out.push_str(&format!("| {names} | {} |\n", cells.join(" | ")));
    };
    for op in DIFFERENTIABLE_OPS {
        if let Ok(rule) = op_rule(*op) {
            row(format!("`{op}`"), rule.partials);
        }
    }
    for rule in CALL_RULES {
        let mut names = vec![rule.function.f64, rule.function.f32];
        names.extend(rule.aliases);
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        row(names.join(" "), rule.partials);
    }
    out
}
