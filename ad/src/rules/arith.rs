//! Rules of the float instructions: unary and binary arithmetic, `fma` and the casts.
//! Operands are `x y z` (`Arg(0..3)`), the primal result is `Res`. Conventions at kinks
//! are listed in the module header of `rules`.

use adc_ir::{BinaryOp, CastOp, UnaryOp};

use super::{Differentiable, Expr, Partial, Rule, RuleError};

const X: Expr = Expr::Arg(0);
const Y: Expr = Expr::Arg(1);
const ONE: Expr = Expr::Const(1.0);
const MINUS_ONE: Expr = Expr::Const(-1.0);
const ZERO: Expr = Expr::Const(0.0);

const ROUNDING: &str = "piecewise constant (a step function of its operand)";

static FNEG: [Partial; 1] = [Partial::Expr(MINUS_ONE)];
static IDENTITY: [Partial; 1] = [Partial::Expr(ONE)];
/// `x < 0 ? -1 : 1`: +1 at ±0, as Enzyme.
static FABS: [Partial; 1] =
    [Partial::Expr(Expr::IfLess { lhs: &X, rhs: &ZERO, then: &MINUS_ONE, otherwise: &ONE })];
/// `1 / (2 sqrt(x))`, written with the result; 0 at x == 0 as Enzyme.
static SQRT: [Partial; 1] = [Partial::Expr(Expr::IfZero {
    value: &X,
    then: &ZERO,
    otherwise: &Expr::Div(&Expr::Const(0.5), &Expr::Res),
})];
static ROUND: [Partial; 1] = [Partial::Zero(ROUNDING)];

static FADD: [Partial; 2] = [Partial::Expr(ONE), Partial::Expr(ONE)];
static FSUB: [Partial; 2] = [Partial::Expr(ONE), Partial::Expr(MINUS_ONE)];
static FMUL: [Partial; 2] = [Partial::Expr(Y), Partial::Expr(X)];
/// `∂x = 1/y`, `∂y = -x/y² = -r/y`.
static FDIV: [Partial; 2] =
    [Partial::Expr(Expr::Div(&ONE, &Y)), Partial::Expr(Expr::Neg(&Expr::Div(&Expr::Res, &Y)))];
/// `frem x, y = x - trunc(x/y)·y`.
static FREM: [Partial; 2] = [
    Partial::Expr(ONE),
    Partial::Expr(Expr::Neg(&Expr::Unary(UnaryOp::Ftrunc, &Expr::Div(&X, &Y)))),
];
/// The adjoint goes to x when x < y, else to y (ties and NaN: y).
static FMIN: [Partial; 2] = [
    Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ONE, otherwise: &ZERO }),
    Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ZERO, otherwise: &ONE }),
];
/// The adjoint goes to y when x < y, else to x (ties: x).
static FMAX: [Partial; 2] = [
    Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ZERO, otherwise: &ONE }),
    Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ONE, otherwise: &ZERO }),
];
/// `copysign(x, y) = ±|x|`: the sign of x times the sign of y; y only picks a sign.
static COPYSIGN: [Partial; 2] = [
    Partial::Expr(Expr::Mul(&Expr::Copysign(&ONE, &X), &Expr::Copysign(&ONE, &Y))),
    Partial::Zero("the sign operand only selects a sign"),
];
static FMA: [Partial; 3] = [Partial::Expr(Y), Partial::Expr(X), Partial::Expr(ONE)];

static CONVERT: [Partial; 1] = [Partial::Convert];
static INT_TO_FLOAT: [Partial; 1] = [Partial::Inactive];
static FLOAT_TO_INT: [Partial; 1] =
    [Partial::Zero("the result is an integer, which carries no derivative")];

/// Every instruction opcode with a rule, in documentation order.
pub static DIFFERENTIABLE_OPS: &[Differentiable<'static>] = &[
    Differentiable::Unary(UnaryOp::Fneg),
    Differentiable::Unary(UnaryOp::Fabs),
    Differentiable::Unary(UnaryOp::Sqrt),
    Differentiable::Unary(UnaryOp::Floor),
    Differentiable::Unary(UnaryOp::Ceil),
    Differentiable::Unary(UnaryOp::Ftrunc),
    Differentiable::Unary(UnaryOp::Round),
    Differentiable::Unary(UnaryOp::Roundeven),
    Differentiable::Unary(UnaryOp::Freeze),
    Differentiable::Binary(BinaryOp::Fadd),
    Differentiable::Binary(BinaryOp::Fsub),
    Differentiable::Binary(BinaryOp::Fmul),
    Differentiable::Binary(BinaryOp::Fdiv),
    Differentiable::Binary(BinaryOp::Frem),
    Differentiable::Binary(BinaryOp::Fminnum),
    Differentiable::Binary(BinaryOp::Fmaxnum),
    Differentiable::Binary(BinaryOp::Copysign),
    Differentiable::Fma,
    Differentiable::Cast(CastOp::Fpext),
    Differentiable::Cast(CastOp::Fptrunc),
    Differentiable::Cast(CastOp::Sitofp),
    Differentiable::Cast(CastOp::Uitofp),
    Differentiable::Cast(CastOp::Fptosi),
    Differentiable::Cast(CastOp::Fptoui),
];

/// The rule of an instruction opcode (not of a call: see [`super::rule_for`]).
pub fn op_rule(op: Differentiable<'_>) -> Result<Rule, RuleError> {
    let (name, partials): (&'static str, &'static [Partial]) = match op {
        Differentiable::Unary(u) => (
            u.name(),
            match u {
                UnaryOp::Fneg => &FNEG,
                UnaryOp::Fabs => &FABS,
                UnaryOp::Sqrt => &SQRT,
                UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Ftrunc
                | UnaryOp::Round
                | UnaryOp::Roundeven => &ROUND,
                // On a float, freeze is the identity (adc's undef is already a value).
                UnaryOp::Freeze => &IDENTITY,
                UnaryOp::Ctpop
                | UnaryOp::Ctlz
                | UnaryOp::Cttz
                | UnaryOp::Bswap
                | UnaryOp::Bitreverse
                | UnaryOp::Iabs => return Err(integer_op(op)),
            },
        ),
        Differentiable::Binary(b) => (
            b.name(),
            match b {
                BinaryOp::Fadd => &FADD,
                BinaryOp::Fsub => &FSUB,
                BinaryOp::Fmul => &FMUL,
                BinaryOp::Fdiv => &FDIV,
                BinaryOp::Frem => &FREM,
                BinaryOp::Fminnum => &FMIN,
                BinaryOp::Fmaxnum => &FMAX,
                BinaryOp::Copysign => &COPYSIGN,
                _ => return Err(integer_op(op)),
            },
        ),
        Differentiable::Fma => ("fma", &FMA),
        Differentiable::Cast(c) => (
            c.name(),
            match c {
                CastOp::Fpext | CastOp::Fptrunc => &CONVERT,
                CastOp::Sitofp | CastOp::Uitofp => &INT_TO_FLOAT,
                CastOp::Fptosi | CastOp::Fptoui => &FLOAT_TO_INT,
                CastOp::Bitcast => {
                    return Err(RuleError::NotDifferentiable {
                        what: "a bitcast between an integer and a float".to_string(),
                        reason: "float bits that go through integer operations (sign-bit \
                                 tricks, type punning) carry no derivative adc can follow; \
                                 write them with fabs, copysign or negation"
                            .to_string(),
                    })
                }
                _ => return Err(integer_op(op)),
            },
        ),
        Differentiable::Call(_) => return super::rule_for(op),
    };
    Ok(Rule { name, partials })
}

fn integer_op(op: Differentiable<'_>) -> RuleError {
    RuleError::NotDifferentiable {
        what: format!("`{op}`"),
        reason: "it is an integer operation, and here its operand holds the bits of a float \
                 (sign-bit tricks, type punning through integers); write it with fabs, \
                 copysign or negation"
            .to_string(),
    }
}
