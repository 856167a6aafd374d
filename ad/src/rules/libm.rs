//! Rules of the libm functions, by name: each entry covers the `f64` function and its
//! `f`-suffixed `f32` twin (and aliases such as adc's `__adc_powi_f64` helper for
//! `llvm.powi`). Calls to `llvm.<fn>.f64`/`.f32` declarations resolve to the same entries.
//! Functions that a C program may call but that have no rule are listed, with the reason,
//! in [`NON_DIFFERENTIABLE_CALLS`].

use adc_ir::UnaryOp;

use super::{CallRule, Expr, Libm, Param, Partial};

const F: Param = Param::Float;
const I: Param = Param::Int;
const INT_OUT: Param = Param::IntOut;

const fn libm(f64: &'static str, f32: &'static str, params: &'static [Param]) -> Libm {
    Libm { f64, f32, params }
}

pub(crate) const SIN: Libm = libm("sin", "sinf", &[F]);
pub(crate) const COS: Libm = libm("cos", "cosf", &[F]);
pub(crate) const TAN: Libm = libm("tan", "tanf", &[F]);
pub(crate) const EXP: Libm = libm("exp", "expf", &[F]);
pub(crate) const LOG: Libm = libm("log", "logf", &[F]);
pub(crate) const SINH: Libm = libm("sinh", "sinhf", &[F]);
pub(crate) const COSH: Libm = libm("cosh", "coshf", &[F]);
pub(crate) const POW: Libm = libm("pow", "powf", &[F, F]);
pub(crate) const HYPOT: Libm = libm("hypot", "hypotf", &[F, F]);
pub(crate) const LDEXP: Libm = libm("ldexp", "ldexpf", &[F, I]);
pub(crate) const SCALBN: Libm = libm("scalbn", "scalbnf", &[F, I]);

const X: Expr = Expr::Arg(0);
const Y: Expr = Expr::Arg(1);
const R: Expr = Expr::Res;
const ONE: Expr = Expr::Const(1.0);
const ZERO: Expr = Expr::Const(0.0);
const MINUS_ONE: Expr = Expr::Const(-1.0);
const X2: Expr = Expr::Mul(&X, &X);
const LN_2: f64 = std::f64::consts::LN_2;
const LN_10: f64 = std::f64::consts::LN_10;
/// 2/√π, the factor of erf's derivative.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

const STEP: &str = "piecewise constant (a step function of its operand)";

const fn rule(function: Libm, partials: &'static [Partial]) -> CallRule {
    CallRule { function, aliases: &[], partials }
}

const fn unary(f64: &'static str, f32: &'static str, partial: &'static [Partial]) -> CallRule {
    rule(libm(f64, f32, &[F]), partial)
}

const fn binary(f64: &'static str, f32: &'static str, partials: &'static [Partial]) -> CallRule {
    rule(libm(f64, f32, &[F, F]), partials)
}

/// Every libm function with a rule. Order is documentation order (`docs/src/ad.md`).
pub static CALL_RULES: &[CallRule] = &[
    rule(SIN, &[Partial::Expr(Expr::Call(COS, &[X]))]),
    rule(COS, &[Partial::Expr(Expr::Neg(&Expr::Call(SIN, &[X])))]),
    // 1 + tan²(x), from the result.
    rule(TAN, &[Partial::Expr(Expr::Add(&ONE, &Expr::Mul(&R, &R)))]),
    // 1 / √(1 - x²)
    unary(
        "asin",
        "asinf",
        &[Partial::Expr(Expr::Div(&ONE, &Expr::Unary(UnaryOp::Sqrt, &Expr::Sub(&ONE, &X2))))],
    ),
    unary(
        "acos",
        "acosf",
        &[Partial::Expr(Expr::Div(&MINUS_ONE, &Expr::Unary(UnaryOp::Sqrt, &Expr::Sub(&ONE, &X2))))],
    ),
    unary("atan", "atanf", &[Partial::Expr(Expr::Div(&ONE, &Expr::Add(&ONE, &X2)))]),
    // atan2(y, x) with operands (y, x): ∂y = x / (x² + y²), ∂x = -y / (x² + y²).
    binary(
        "atan2",
        "atan2f",
        &[
            Partial::Expr(Expr::Div(&Y, &Expr::Add(&Expr::Mul(&X, &X), &Expr::Mul(&Y, &Y)))),
            Partial::Expr(Expr::Div(
                &Expr::Neg(&X),
                &Expr::Add(&Expr::Mul(&X, &X), &Expr::Mul(&Y, &Y)),
            )),
        ],
    ),
    rule(SINH, &[Partial::Expr(Expr::Call(COSH, &[X]))]),
    rule(COSH, &[Partial::Expr(Expr::Call(SINH, &[X]))]),
    unary("tanh", "tanhf", &[Partial::Expr(Expr::Sub(&ONE, &Expr::Mul(&R, &R)))]),
    // 1 / hypot(x, 1): √(x² + 1) without overflow for large x.
    unary("asinh", "asinhf", &[Partial::Expr(Expr::Div(&ONE, &Expr::Call(HYPOT, &[X, ONE])))]),
    // 1 / (√(x - 1)·√(x + 1)): no cancellation in x² - 1 near 1, no overflow.
    unary(
        "acosh",
        "acoshf",
        &[Partial::Expr(Expr::Div(
            &ONE,
            &Expr::Mul(
                &Expr::Unary(UnaryOp::Sqrt, &Expr::Sub(&X, &ONE)),
                &Expr::Unary(UnaryOp::Sqrt, &Expr::Add(&X, &ONE)),
            ),
        ))],
    ),
    unary("atanh", "atanhf", &[Partial::Expr(Expr::Div(&ONE, &Expr::Sub(&ONE, &X2)))]),
    rule(EXP, &[Partial::Expr(R)]),
    unary("exp2", "exp2f", &[Partial::Expr(Expr::Mul(&Expr::Const(LN_2), &R))]),
    CallRule {
        function: libm("exp10", "exp10f", &[F]),
        aliases: &["__exp10", "__exp10f"],
        partials: &[Partial::Expr(Expr::Mul(&Expr::Const(LN_10), &R))],
    },
    unary("expm1", "expm1f", &[Partial::Expr(Expr::Add(&R, &ONE))]),
    rule(LOG, &[Partial::Expr(Expr::Div(&ONE, &X))]),
    unary("log2", "log2f", &[Partial::Expr(Expr::Div(&ONE, &Expr::Mul(&X, &Expr::Const(LN_2))))]),
    unary(
        "log10",
        "log10f",
        &[Partial::Expr(Expr::Div(&ONE, &Expr::Mul(&X, &Expr::Const(LN_10))))],
    ),
    unary("log1p", "log1pf", &[Partial::Expr(Expr::Div(&ONE, &Expr::Add(&ONE, &X)))]),
    // 1 / (2√x), 0 at x == 0 as the sqrt instruction.
    unary(
        "sqrt",
        "sqrtf",
        &[Partial::Expr(Expr::IfZero {
            value: &X,
            then: &ZERO,
            otherwise: &Expr::Div(&Expr::Const(0.5), &R),
        })],
    ),
    // 1 / (3 cbrt(x)²), from the result.
    unary(
        "cbrt",
        "cbrtf",
        &[Partial::Expr(Expr::Div(&ONE, &Expr::Mul(&Expr::Const(3.0), &Expr::Mul(&R, &R))))],
    ),
    // ∂x = y·x^(y-1); ∂y = r·ln x, 0 at x == 0.
    rule(
        POW,
        &[
            Partial::Expr(Expr::Mul(&Y, &Expr::Call(POW, &[X, Expr::Sub(&Y, &ONE)]))),
            Partial::Expr(Expr::IfZero {
                value: &X,
                then: &ZERO,
                otherwise: &Expr::Mul(&R, &Expr::Call(LOG, &[X])),
            }),
        ],
    ),
    // powi(x, n): n·x^(n-1) through pow with an integral exponent (exact in float for
    // any i32 n, and pow of an integral exponent is defined for negative x); 0 if n == 0.
    CallRule {
        function: libm("__adc_powi_f64", "__adc_powi_f32", &[F, I]),
        aliases: &["__powidf2", "__powisf2"],
        partials: &[
            Partial::Expr(Expr::IfZero {
                value: &Y,
                then: &ZERO,
                otherwise: &Expr::Mul(
                    &Expr::IntToFloat(&Y),
                    &Expr::Call(POW, &[X, Expr::Sub(&Expr::IntToFloat(&Y), &ONE)]),
                ),
            }),
            Partial::Inactive,
        ],
    },
    // hypot(x, y): ∂x = x / r, ∂y = y / r.
    rule(HYPOT, &[Partial::Expr(Expr::Div(&X, &R)), Partial::Expr(Expr::Div(&Y, &R))]),
    unary(
        "fabs",
        "fabsf",
        &[Partial::Expr(Expr::IfLess { lhs: &X, rhs: &ZERO, then: &MINUS_ONE, otherwise: &ONE })],
    ),
    binary(
        "fmin",
        "fminf",
        &[
            Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ONE, otherwise: &ZERO }),
            Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ZERO, otherwise: &ONE }),
        ],
    ),
    binary(
        "fmax",
        "fmaxf",
        &[
            Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ZERO, otherwise: &ONE }),
            Partial::Expr(Expr::IfLess { lhs: &X, rhs: &Y, then: &ONE, otherwise: &ZERO }),
        ],
    ),
    // fdim(x, y) = x > y ? x - y : 0.
    binary(
        "fdim",
        "fdimf",
        &[
            Partial::Expr(Expr::IfLess { lhs: &Y, rhs: &X, then: &ONE, otherwise: &ZERO }),
            Partial::Expr(Expr::IfLess { lhs: &Y, rhs: &X, then: &MINUS_ONE, otherwise: &ZERO }),
        ],
    ),
    // fmod(x, y) = x - trunc(x/y)·y.
    binary(
        "fmod",
        "fmodf",
        &[
            Partial::Expr(ONE),
            Partial::Expr(Expr::Neg(&Expr::Unary(UnaryOp::Ftrunc, &Expr::Div(&X, &Y)))),
        ],
    ),
    // remainder(x, y) = x - roundeven(x/y)·y.
    binary(
        "remainder",
        "remainderf",
        &[
            Partial::Expr(ONE),
            Partial::Expr(Expr::Neg(&Expr::Unary(UnaryOp::Roundeven, &Expr::Div(&X, &Y)))),
        ],
    ),
    binary(
        "copysign",
        "copysignf",
        &[
            Partial::Expr(Expr::Mul(&Expr::Copysign(&ONE, &X), &Expr::Copysign(&ONE, &Y))),
            Partial::Zero("the sign operand only selects a sign"),
        ],
    ),
    // nextafter(x, y) moves x by one ulp: the identity in x up to rounding.
    binary(
        "nextafter",
        "nextafterf",
        &[Partial::Expr(ONE), Partial::Zero("the direction operand only selects a neighbour")],
    ),
    rule(
        libm("fma", "fmaf", &[F, F, F]),
        &[Partial::Expr(Y), Partial::Expr(X), Partial::Expr(ONE)],
    ),
    // ldexp(x, n) = x·2^n: ∂x = ldexp(1, n), exact.
    rule(LDEXP, &[Partial::Expr(Expr::Call(LDEXP, &[ONE, Y])), Partial::Inactive]),
    rule(SCALBN, &[Partial::Expr(Expr::Call(SCALBN, &[ONE, Y])), Partial::Inactive]),
    // erf' = 2/√π·exp(-x²); erfc' = -erf'.
    unary(
        "erf",
        "erff",
        &[Partial::Expr(Expr::Mul(
            &Expr::Const(TWO_OVER_SQRT_PI),
            &Expr::Call(EXP, &[Expr::Neg(&X2)]),
        ))],
    ),
    unary(
        "erfc",
        "erfcf",
        &[Partial::Expr(Expr::Mul(
            &Expr::Const(-TWO_OVER_SQRT_PI),
            &Expr::Call(EXP, &[Expr::Neg(&X2)]),
        ))],
    ),
    // lgamma = ln|Γ|: lgamma' = ψ (digamma, emitted inline); tgamma' = Γ·ψ.
    unary("lgamma", "lgammaf", &[Partial::Expr(Expr::Digamma(&X))]),
    unary("tgamma", "tgammaf", &[Partial::Expr(Expr::Mul(&R, &Expr::Digamma(&X)))]),
    // frexp(x, &e) = m with x = m·2^e: ∂x = 2^-e = m / x, exact (a power of two); the
    // exponent written through the pointer is an integer.
    rule(
        libm("frexp", "frexpf", &[F, INT_OUT]),
        &[Partial::Expr(Expr::Div(&R, &X)), Partial::Inactive],
    ),
    // lgamma_r(x, &sign) = ln|Γ(x)|, the sign of Γ(x) written through the pointer.
    rule(
        libm("lgamma_r", "lgammaf_r", &[F, INT_OUT]),
        &[Partial::Expr(Expr::Digamma(&X)), Partial::Inactive],
    ),
    unary("floor", "floorf", &[Partial::Zero(STEP)]),
    unary("ceil", "ceilf", &[Partial::Zero(STEP)]),
    unary("trunc", "truncf", &[Partial::Zero(STEP)]),
    unary("round", "roundf", &[Partial::Zero(STEP)]),
    unary("roundeven", "roundevenf", &[Partial::Zero(STEP)]),
    unary("rint", "rintf", &[Partial::Zero(STEP)]),
    unary("nearbyint", "nearbyintf", &[Partial::Zero(STEP)]),
    unary("logb", "logbf", &[Partial::Zero("the exponent of x: a step function")]),
];

const INTEGER_RESULT: &str =
    "its result is an integer, which carries no derivative (treat the call as inactive)";
const OUT_POINTER: &str = "it writes a float result through a pointer argument; rules \
     cover value-returning functions (with integer outputs at most), and no memory-aware \
     rule is implemented";

/// libm functions a program may call that have no rule, with the reason. Synthesis
/// reports a call to one of them with an active float operand as unsupported.
pub static NON_DIFFERENTIABLE_CALLS: &[(&str, &str)] = &[
    ("ilogb", INTEGER_RESULT),
    ("ilogbf", INTEGER_RESULT),
    ("lround", INTEGER_RESULT),
    ("lroundf", INTEGER_RESULT),
    ("llround", INTEGER_RESULT),
    ("llroundf", INTEGER_RESULT),
    ("lrint", INTEGER_RESULT),
    ("lrintf", INTEGER_RESULT),
    ("llrint", INTEGER_RESULT),
    ("llrintf", INTEGER_RESULT),
    ("modf", OUT_POINTER),
    ("modff", OUT_POINTER),
    ("sincos", OUT_POINTER),
    ("sincosf", OUT_POINTER),
];

/// `llvm.sin.f64` -> `sin`, `llvm.sin.f32` -> `sinf`, `llvm.minnum.f64` -> `fmin`,
/// `llvm.powi.f64.i32` -> `__adc_powi_f64`; other names unchanged.
fn normalize(name: &str) -> std::borrow::Cow<'_, str> {
    // CUDA's libdevice (`__nv_sin`, `__nv_expf`) has libm's meaning under another name.
    if let Some(libm) = name.strip_prefix("__nv_") {
        return libm.into();
    }
    let Some(rest) = name.strip_prefix("llvm.") else {
        return name.into();
    };
    let mut parts = rest.split('.');
    let (Some(op), Some(ty)) = (parts.next(), parts.next()) else {
        return name.into();
    };
    let op = match op {
        "minnum" => "fmin",
        "maxnum" => "fmax",
        "powi" => "__adc_powi",
        other => other,
    };
    match (op, ty) {
        ("__adc_powi", "f64") => "__adc_powi_f64".into(),
        ("__adc_powi", "f32") => "__adc_powi_f32".into(),
        (_, "f64") => op.to_string().into(),
        (_, "f32") => format!("{op}f").into(),
        _ => name.into(),
    }
}

/// The rule of the libm function `name` (either precision, an alias, or its `llvm.`
/// intrinsic spelling), if it has one.
pub fn lookup_call(name: &str) -> Option<&'static CallRule> {
    let name = normalize(name);
    let name = name.as_ref();
    CALL_RULES
        .iter()
        .find(|r| r.function.f64 == name || r.function.f32 == name || r.aliases.contains(&name))
}

/// Why the libm function `name` has no rule, when it is a known one without.
pub fn non_differentiable_call(name: &str) -> Option<&'static str> {
    let name = normalize(name);
    NON_DIFFERENTIABLE_CALLS.iter().find(|(n, _)| *n == name.as_ref()).map(|(_, why)| *why)
}
