//! The rewrite rules, one line each: `(name, left, right)`. Constants are leaves with
//! their exact value: `i0`, `i1` (any integer width), `f<raw IEEE bits in hex>` (`f0` is
//! +0.0 in both widths, `f3ff0000000000000` is 1.0 as f64, `f3f800000` 1.0 as f32).
//! `!` operations carry `reassoc nsz nnan ninf`; only rules on them may assume fast math.

use egg::Rewrite;

use super::Op;

/// IEEE-exact and integer rules: valid for every instruction.
const EXACT: &[(&str, &str, &str)] = &[
    ("rule add-0", "(add ?x i0)", "?x"),
    ("rule add-comm", "(add ?x ?y)", "(add ?y ?x)"),
    ("rule add-assoc", "(add (add ?x ?y) ?z)", "(add ?x (add ?y ?z))"),
    ("rule mul-comm", "(mul ?x ?y)", "(mul ?y ?x)"),
    ("rule mul-1", "(mul ?x i1)", "?x"),
    ("rule mul-0", "(mul ?x i0)", "i0"),
    ("rule distribute", "(add (mul ?x ?y) (mul ?x ?z))", "(mul ?x (add ?y ?z))"),
    ("rule sub-0", "(sub ?x i0)", "?x"),
    // Integers only: for floats, inf - inf and NaN - NaN are NaN.
    ("rule sub-self", "(sub ?x ?x)", "i0"),
    ("rule add-sub", "(sub (add ?x ?y) ?y)", "?x"),
    ("rule xor-self", "(xor ?x ?x)", "i0"),
    ("rule xor-0", "(xor ?x i0)", "?x"),
    ("rule and-self", "(and ?x ?x)", "?x"),
    ("rule and-0", "(and ?x i0)", "i0"),
    ("rule or-self", "(or ?x ?x)", "?x"),
    ("rule or-0", "(or ?x i0)", "?x"),
    ("rule shl-0", "(shl ?x i0)", "?x"),
    // x * 1.0 and x / 1.0 are x exactly (NaN stays NaN, -0.0 stays -0.0).
    ("rule fmul-1", "(fmul ?x f3ff0000000000000)", "?x"),
    ("rule fmul-1-f32", "(fmul ?x f3f800000)", "?x"),
    ("rule fdiv-1", "(fdiv ?x f3ff0000000000000)", "?x"),
    ("rule fmul-neg1", "(fmul ?x fbff0000000000000)", "(fneg ?x)"),
    // x - 0.0 = x and x + -0.0 = x for every x (but x + 0.0 is +0.0 for x = -0.0).
    ("rule fsub-0", "(fsub ?x f0)", "?x"),
    ("rule fadd-negzero", "(fadd ?x f8000000000000000)", "?x"),
    ("rule fsub-fneg", "(fsub ?x (fneg ?y))", "(fadd ?x ?y)"),
    ("rule fneg-fneg", "(fneg (fneg ?x))", "?x"),
    ("rule fadd-comm", "(fadd ?x ?y)", "(fadd ?y ?x)"),
    ("rule fmul-comm", "(fmul ?x ?y)", "(fmul ?y ?x)"),
];

/// Fast-math rules: they match only `!` operations.
const FAST: &[(&str, &str, &str)] = &[
    ("rule fast-fsub-self", "(fsub! ?x ?x)", "f0"),
    ("rule fast-fadd-0", "(fadd! ?x f0)", "?x"),
    ("rule fast-fmul-0", "(fmul! ?x f0)", "f0"),
    ("rule fast-fadd-comm", "(fadd! ?x ?y)", "(fadd! ?y ?x)"),
    ("rule fast-fmul-comm", "(fmul! ?x ?y)", "(fmul! ?y ?x)"),
    ("rule fast-fadd-assoc", "(fadd! (fadd! ?a ?b) ?c)", "(fadd! ?a (fadd! ?b ?c))"),
    ("rule fast-factor", "(fadd! (fmul! ?a ?w) (fmul! ?b ?w))", "(fmul! (fadd! ?a ?b) ?w)"),
];

/// Every rule, compiled once per process: parsing the patterns for every function was a
/// twentieth of the build of a module of many small functions.
pub(super) fn compiled() -> &'static [Rewrite<Op, ()>] {
    static RULES: std::sync::OnceLock<Vec<Rewrite<Op, ()>>> = std::sync::OnceLock::new();
    RULES.get_or_init(rules)
}

/// Every rule; the tables are static, so a malformed one fails the unit test below.
fn rules() -> Vec<Rewrite<Op, ()>> {
    EXACT
        .iter()
        .chain(FAST)
        .filter_map(|(name, lhs, rhs)| {
            let lhs: egg::Pattern<Op> = lhs.parse().ok()?;
            let rhs: egg::Pattern<Op> = rhs.parse().ok()?;
            Rewrite::new(*name, lhs, rhs).ok()
        })
        .collect()
}

/// The statistics counter of a rule (its name).
pub(super) fn stat_name(rule: &str) -> Option<&'static str> {
    EXACT.iter().chain(FAST).map(|(n, _, _)| *n).find(|n| *n == rule)
}

#[cfg(test)]
mod tests {
    /// `Tree::is_irreducible` skips one operation on two distinct non-constant inputs
    /// (or `fneg` of one): that holds only while every rule matching such a tree
    /// rewrites it to the same operation.
    #[test]
    fn one_operation_on_distinct_variables_is_never_shortened() {
        for (name, lhs, rhs) in super::EXACT.iter().chain(super::FAST) {
            let tokens: Vec<&str> = lhs
                .split(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            let vars: Vec<&&str> = tokens[1..].iter().collect();
            let distinct = vars.iter().all(|v| v.starts_with('?'))
                && vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
            if lhs.matches('(').count() == 1 && distinct {
                let head =
                    |p: &str| p.trim_start_matches('(').split_whitespace().next().map(String::from);
                assert_eq!(head(rhs), head(lhs), "{name}: {lhs} -> {rhs}");
                assert_eq!(rhs.matches('(').count(), 1, "{name}: {lhs} -> {rhs}");
            }
        }
    }

    #[test]
    fn every_rule_parses() {
        assert_eq!(super::rules().len(), super::EXACT.len() + super::FAST.len());
    }
}
