//! Differentiating vectorized functions as scalar code (`scalarize-vectors`,
//! `devectorize-loops`), before the pre-AD pipeline.
//!
//! clang -O2 vectorizes by default, so the functions users differentiate arrive with
//! `<2 x f64>` loads, shuffles and reductions. Reverse mode of vector code keeps vector
//! tapes and the adjoints of every shuffle and lane move. That pays where the vectors come
//! from the loop vectorizer (vector loads, arithmetic and stores, few lane moves), and
//! costs where the SLP vectorizer assembles them lane by lane from scalars. Measured on
//! clang-19 and clang-14 -O2 bitcode of the benchmark programs (gradient time of vector
//! reverse mode over that of the scalarized copy): gmm 0.83 to 0.97, bruss 0.77 to 0.94,
//! lstm 0.99 to 1.03, where lane moves are at most 7% of the float vector instructions of
//! the differentiated function; ba 1.07 to 2.0, euler 1.84, rk4 1.89 to 2.24, where they
//! are 23% to 62%.
//! For those the API call is rewritten to differentiate a copy in which every vector is
//! split into its lanes (`adc_passes::scalarize`), named `<f>.scalar`; the primal keeps
//! its vectors, and the post-AD `vectorize` pass packs simple loops of the derivative again.
//!
//! A function is scalarized only when it computes with float vectors, at least 15% of
//! those instructions are lane moves ([`LANE_MOVE_SHARE`], between the two groups), and
//! every vector in it has a lane-wise form.
//!
//! Loops LLVM's loop vectorizer made are a second matter: whether kept as vectors or
//! split into lanes, the reverse sweep runs the vector loop, its middle block and the
//! scalar remainder, two loop nests where the source had one. For reverse mode the copy
//! takes each such loop's scalar fallback instead (`adc_passes::devectorize`): GMM's
//! gradient from clang-19 -O2 bitcode went from 1.20x (d10 K25) and 1.28x (d20 K50) of
//! its time from scalar bitcode to 0.97x and 1.03x. Forward mode keeps the vector loops
//! (tangents vectorize as the primal does).
//!
//! Without either change the call differentiates the function as it is, vectors and all.
//! Split-mode entry points are left alone (the augmented forward and the reverse call
//! must name the same function), as are functions with a registered custom derivative.

use std::collections::HashMap;

use adc_ir::{FuncId, Linkage, Module};

use super::specialize::point_call_at;
use super::{decode_call, find_api_calls, split_api};
use crate::custom::Registrations;
use crate::request::DiffMode;

/// The toggle of lane splitting (`--passes=-scalarize-vectors` differentiates vector code
/// as it is).
pub const TOGGLE: &str = "scalarize-vectors";

/// The toggle of taking vectorized loops' scalar fallbacks in reverse mode
/// (`--passes=-devectorize-loops` differentiates the vector loops).
pub const DEVECTORIZE_TOGGLE: &str = "devectorize-loops";

/// The share of lane moves among a function's float vector instructions from which its
/// derivative is synthesized from a scalarized copy (see the module documentation).
pub const LANE_MOVE_SHARE: f64 = 0.15;

/// Which rewrites the copies get (each on unless toggled off).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScalarCopyOptions {
    /// Split every vector into lanes where lane moves make vector adjoints costly.
    pub scalarize: bool,
    /// Reverse mode: take the scalar fallback of loops LLVM vectorized.
    pub devectorize_loops: bool,
}

impl Default for ScalarCopyOptions {
    fn default() -> Self {
        ScalarCopyOptions { scalarize: true, devectorize_loops: true }
    }
}

/// Whether `function`'s vectors are built lane by lane enough that its scalarized copy
/// differentiates faster than its vector code.
fn worth_scalarizing(function: &adc_ir::Function) -> bool {
    let census = adc_passes::scalarize::float_vector_census(function);
    census.instructions > 0
        && census.lane_moves as f64 >= LANE_MOVE_SHARE * census.instructions as f64
}

/// What the rewrite did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalarCopyReport {
    /// The copies made, in creation order.
    pub copies: Vec<FuncId>,
    /// API calls that now differentiate a copy.
    pub calls_rewritten: usize,
    /// Vectorized loops whose scalar fallback the copies take.
    pub loops_devectorized: usize,
}

/// Rewrites every `__enzyme_autodiff`/`__enzyme_fwddiff` call of a function that computes
/// with float vectors to differentiate a scalar copy of it.
pub fn scalarize_differentiated_functions(
    module: &mut Module,
    options: ScalarCopyOptions,
) -> ScalarCopyReport {
    let mut report = ScalarCopyReport::default();
    let Ok(registrations) = Registrations::read(module) else { return report };
    // Per function and mode (reverse or not); `None`: the copy would equal the function.
    let mut copies: HashMap<(FuncId, bool), Option<FuncId>> = HashMap::new();
    for (caller, call) in find_api_calls(module) {
        if split_api::entry_of(module, caller, call).is_some() {
            continue;
        }
        let Ok(decoded) = decode_call(module, caller, call) else { continue };
        let function = decoded.function;
        let target = &module.functions[function];
        if target.is_declaration() || registrations.is_registered(function) {
            continue;
        }
        let reverse = decoded.mode == DiffMode::Reverse;
        let copy = *copies.entry((function, reverse)).or_insert_with(|| {
            let devectorize = options.devectorize_loops && reverse;
            scalar_copy(module, function, options.scalarize, devectorize, &mut report)
        });
        let Some(copy) = copy else { continue };
        if !report.copies.contains(&copy) {
            report.copies.push(copy);
        }
        let operand = usize::from(decoded.sret.is_some());
        point_call_at(module, caller, call, operand, copy);
        report.calls_rewritten += 1;
    }
    report
}

/// An internal copy of `function` with its vectorized loops' scalar fallbacks taken
/// (`devectorize`) and its vectors split where that pays (`scalarize`), or `None` when
/// neither changed anything.
fn scalar_copy(
    module: &mut Module,
    function: FuncId,
    scalarize: bool,
    devectorize: bool,
    report: &mut ScalarCopyReport,
) -> Option<FuncId> {
    let mut copy = module.functions[function].clone();
    let devectorized =
        if devectorize { adc_passes::devectorize::take_scalar_fallbacks(&mut copy) } else { 0 };
    let scalarized =
        scalarize && worth_scalarizing(&copy) && adc_passes::scalarize::scalarize(&mut copy) > 0;
    if devectorized == 0 && !scalarized {
        return None;
    }
    report.loops_devectorized += devectorized;
    let base = format!("{}.scalar", copy.name);
    copy.name = base.clone();
    let mut n = 1;
    while module.function_by_name(&copy.name).is_some() {
        n += 1;
        copy.name = format!("{base}.{n}");
    }
    copy.linkage = Linkage::Internal;
    Some(module.add_function(copy))
}

#[cfg(test)]
mod tests {
    use adc_ir::text::parse_module;

    use super::*;

    /// A module whose `@grad` differentiates `@f` (one `ptr` argument, `Dup`).
    fn requesting(f: &str) -> Module {
        let text = format!(
            "{f}\nfunc @grad(%x: ptr, %dx: ptr) -> f64 {{\n^e:\n  %f = const ptr @f\n  \
             %d = call @__enzyme_autodiff(%f, %x, %dx)\n  ret %d\n}}\n\
             declare @__enzyme_autodiff(ptr, ...) -> f64\n"
        );
        parse_module(&text).expect("parses")
    }

    /// Loop-vectorized code (vector loads and arithmetic, one reduction at the end: a dot
    /// product unrolled by two, as clang -O2 emits it) is differentiated as it is.
    #[test]
    fn loop_vectorized_code_keeps_its_vectors() {
        let mut module = requesting(
            "func @f(%p: ptr) -> f64 {\n^e:\n  %z = const i64 0\n  %zero = const <2 x f64> zeroinit\n  \
             %n = const i64 4\n  jump ^loop(%z, %zero, %zero)\n\
             ^loop(%i: i64, %s: <2 x f64>, %t: <2 x f64>):\n  \
             %step = const i64 32\n  %off = mul i64 %i, %step\n  %a = ptradd ptr %p, %off\n  \
             %sixteen = const i64 16\n  %b = ptradd ptr %a, %sixteen\n  \
             %va = load <2 x f64>, %a, align 8\n  %vb = load <2 x f64>, %b, align 8\n  \
             %far = const i64 128\n  %c = ptradd ptr %a, %far\n  %d = ptradd ptr %b, %far\n  \
             %wa = load <2 x f64>, %c, align 8\n  %wb = load <2 x f64>, %d, align 8\n  \
             %qa = fmul <2 x f64> %va, %wa\n  %qb = fmul <2 x f64> %vb, %wb\n  \
             %s2 = fadd <2 x f64> %s, %qa\n  %t2 = fadd <2 x f64> %t, %qb\n  \
             %one = const i64 1\n  %i2 = add i64 %i, %one\n  %more = icmp ult i64 %i2, %n\n  \
             brif %more, ^loop(%i2, %s2, %t2), ^exit(%s2, %t2)\n\
             ^exit(%rs: <2 x f64>, %rt: <2 x f64>):\n  %r = fadd <2 x f64> %rs, %rt\n  \
             %l0 = const i64 0\n  %l1 = const i64 1\n  \
             %r0 = extractlane <2 x f64> %r, %l0\n  %r1 = extractlane <2 x f64> %r, %l1\n  \
             %sum = fadd f64 %r0, %r1\n  ret %sum\n}",
        );
        let census = adc_passes::scalarize::float_vector_census(
            &module.functions[module.function_by_name("f").unwrap()],
        );
        assert_eq!((census.instructions, census.lane_moves), (14, 2));
        let report = scalarize_differentiated_functions(&mut module, ScalarCopyOptions::default());
        assert_eq!(report.calls_rewritten, 0, "{report:?}");
        assert!(module.function_by_name("f.scalar").is_none());
    }

    /// Straight-line (SLP) code that builds its vectors lane by lane is differentiated
    /// from a scalarized copy.
    #[test]
    fn vectors_built_lane_by_lane_are_scalarized() {
        let mut module = requesting(
            "func @f(%p: ptr) -> f64 {\n^e:\n  %eight = const i64 8\n  %q = ptradd ptr %p, %eight\n  \
             %a = load f64, %p, align 8\n  %b = load f64, %q, align 8\n  \
             %u = const <2 x f64> zeroinit\n  %l0 = const i64 0\n  %l1 = const i64 1\n  \
             %v0 = insertlane <2 x f64> %u, %a, %l0\n  %v = insertlane <2 x f64> %v0, %b, %l1\n  \
             %w = fmul <2 x f64> %v, %v\n  %w0 = extractlane <2 x f64> %w, %l0\n  \
             %w1 = extractlane <2 x f64> %w, %l1\n  %t = fadd f64 %w0, %w1\n  ret %t\n}",
        );
        let report = scalarize_differentiated_functions(&mut module, ScalarCopyOptions::default());
        assert_eq!(report.calls_rewritten, 1, "{report:?}");
        assert!(module.function_by_name("f.scalar").is_some());
    }
}
