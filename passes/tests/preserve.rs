//! Every transform keeps the semantics of random executable programs: for each transform
//! of the registry alone, and for the `pre-ad`, `post-ad` and `pre-ad`+`post-ad`
//! pipelines, the optimized module verifies (after every pass) and the interpreter gives
//! the same results as on the original, on several inputs per function: the same return
//! value and the same bytes in every buffer passed in, or the same kind of error.
//!
//! A call that traps (`abort`, `exit`) must trap the same way after optimization. A call
//! whose original run reports undefined behaviour (division overflow, out-of-bounds
//! access, uninitialized read) constrains nothing: deleting a dead load that would have
//! faulted is a legal refinement that lets the program run on, to completion or to a
//! later, different fault. The generator keeps such calls rare (checked below), so the
//! property mostly compares complete runs.

#[path = "../../ir/tests/generate/mod.rs"]
mod generate;

use adc_ir::interp::{ErrorKind, Interpreter, UninitReads, Val};
use adc_ir::text::{parse_module, print_module};
use adc_ir::verify::verify_module;
use adc_ir::{Module, Type};
use adc_passes::{lookup, pipelines, run_passes, Options, PassInfo, PassKind, REGISTRY};
use generate::programs::{program_strategy, Program, ProgramFunc, Scalar, BUFFER_BYTES};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::FileFailurePersistence;

/// Configurations excluded from the property because of a known, reported bug, each with
/// its reproducer. Empty when every pass passes.
const KNOWN_BUGS: &[(&str, &str)] = &[];

/// Enough to run every generated function to completion (loops are bounded by 7 and
/// nested at most 3 deep, calls form a DAG).
const FUEL: u64 = 2_000_000;

/// Inputs per function.
const INPUTS: usize = 4;

/// The pass sequences under test, by name.
fn configurations() -> Vec<(String, Vec<&'static PassInfo>)> {
    let mut configs: Vec<(String, Vec<&'static PassInfo>)> = REGISTRY
        .iter()
        .filter(|p| p.kind == PassKind::Transform)
        .map(|p| (p.name.to_string(), vec![p]))
        .collect();
    let pipeline = |name: &str| -> Vec<&'static PassInfo> {
        let p = pipelines::pipeline(name).expect("pipeline exists");
        p.passes.iter().map(|n| lookup(n).expect("registered")).collect()
    };
    configs.push(("pre-ad".into(), pipeline("pre-ad")));
    configs.push(("post-ad".into(), pipeline("post-ad")));
    let mut both = pipeline("pre-ad");
    both.extend(pipeline("post-ad"));
    configs.push(("pre-ad+post-ad".into(), both));
    configs.retain(|(name, _)| !KNOWN_BUGS.iter().any(|(known, _)| known == name));
    configs
}

/// What one call did.
#[derive(Debug)]
enum Outcome {
    /// The return value, and each buffer's bytes (`None`: never written).
    Done {
        ret: Option<Val>,
        buffers: Vec<Vec<Option<Val>>>,
    },
    Failed(ErrorKind),
}

const INTS: [i64; 8] = [0, 1, -1, 5, 7, 100, i64::MIN, 3];
const FLOATS: [f64; 6] = [0.5, -1.25, 2.0, 0.0, 1e10, -0.0];

/// Calls `func` of `module` with the `k`-th input, never-written memory read as `uninit`
/// says.
fn call(module: &Module, func: &str, params: &[Scalar], k: usize, uninit: UninitReads) -> Outcome {
    let mut interp = match Interpreter::new(module) {
        Ok(i) => i,
        Err(e) => return Outcome::Failed(e.kind().clone()),
    };
    interp.set_fuel(FUEL);
    interp.set_uninit_reads(uninit);
    let id = module.function_by_name(func).expect("generated functions stay in the module");
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (i, ty) in params.iter().enumerate() {
        let int = INTS[(i + 3 * k) % INTS.len()];
        args.push(match ty {
            Scalar::I1 => Val::Int(u128::from(int & 1 == 1)),
            Scalar::I32 => Val::Int(u128::from(int as u32)),
            Scalar::I64 => Val::Int(u128::from(int as u64)),
            Scalar::F64 => Val::F64(FLOATS[(i + k) % FLOATS.len()]),
            Scalar::Ptr => {
                // Mixed contents: some slots hold doubles, some small integers.
                let words: Vec<Val> = (0..BUFFER_BYTES / 8)
                    .map(|w| {
                        let w = w as usize + i + k;
                        if w.is_multiple_of(2) {
                            Val::Int(u128::from(FLOATS[w % FLOATS.len()].to_bits()))
                        } else {
                            Val::Int(u128::from(INTS[w % INTS.len()] as u64))
                        }
                    })
                    .collect();
                let p = interp.alloc(&Type::I64, &words).expect("a small buffer");
                buffers.push(p.clone());
                p
            }
        });
    }
    match interp.call(id, &args) {
        Ok(ret) => {
            // Byte by byte: a buffer may receive uninitialized bytes (memmove from a stack
            // buffer nobody wrote), which a whole-buffer read refuses.
            let buffers = buffers
                .iter()
                .map(|p| {
                    let Val::Ptr(base) = p else { unreachable!("alloc returns a pointer") };
                    (0..BUFFER_BYTES)
                        .map(|i| {
                            let byte = interp.read(&Val::Ptr(base + i), &Type::I8, 1);
                            byte.ok().and_then(|mut v| v.pop())
                        })
                        .collect()
                })
                .collect();
            Outcome::Done { ret, buffers }
        }
        Err(e) => Outcome::Failed(e.kind().clone()),
    }
}

/// Equal, with every NaN equal to every other (passes may change NaN payloads, as LLVM's
/// may).
fn same_value(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::F64(x), Val::F64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Val::F32(x), Val::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Val::Vector(x), Val::Vector(y)) | (Val::Aggregate(x), Val::Aggregate(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        _ => a == b,
    }
}

/// Errors that are the program's own doing (calls to `abort`/`exit`, failed asserts),
/// as opposed to undefined behaviour the interpreter detects.
fn is_trap(kind: &ErrorKind) -> bool {
    matches!(kind, ErrorKind::Abort | ErrorKind::Exit(_) | ErrorKind::AssertionFailed(_))
}

/// `None` when `after` is an acceptable result of optimizing a program that gave
/// `before`; otherwise what differs.
fn difference(before: &Outcome, after: &Outcome) -> Option<String> {
    match (before, after) {
        (Outcome::Failed(ErrorKind::OutOfFuel { .. }), _) => None,
        (Outcome::Done { ret: r1, buffers: b1 }, Outcome::Done { ret: r2, buffers: b2 }) => {
            let same_ret = match (r1, r2) {
                (Some(a), Some(b)) => same_value(a, b),
                (None, None) => true,
                _ => false,
            };
            if !same_ret {
                return Some(format!("returned {r2:?} instead of {r1:?}"));
            }
            for (i, (x, y)) in b1.iter().zip(b2).enumerate() {
                // An uninitialized byte may become anything.
                let refines = |(a, b): (&Option<Val>, &Option<Val>)| a.is_none() || a == b;
                if !x.iter().zip(y).all(refines) {
                    return Some(format!("buffer {i} holds {y:?}\n  instead of {x:?}"));
                }
            }
            None
        }
        // A deliberate trap (abort, exit) is behaviour: it must stay, with its code.
        (Outcome::Failed(a), Outcome::Failed(b)) if is_trap(a) && a == b => None,
        (Outcome::Failed(a), _) if is_trap(a) => {
            Some(format!("gave {after:?} instead of the trap {before:?}"))
        }
        // Undefined behaviour: anything may follow. Deleting a dead load that would have
        // read out of bounds, for instance, lets the program run on (to completion or to
        // a later, different fault).
        (Outcome::Failed(_), _) => None,
        _ => Some(format!("gave {after:?} instead of {before:?}")),
    }
}

/// How the optimized `module` runs `f` on the `k`-th input differs from `before`, if it
/// does.
///
/// A pass may read memory the original never read on this path (a load hoisted out of a
/// loop guard, a `memmove` of never-written bytes turned into a typed load and store).
/// LLVM gives such a read an undefined value, not undefined behaviour, so when the strict
/// run stops at it the optimized code runs again with never-written memory reading as two
/// different patterns: both runs must give the original's result, showing that the value
/// read never mattered.
fn optimized_difference(
    module: &Module,
    f: &ProgramFunc,
    k: usize,
    before: &Outcome,
) -> Option<String> {
    let strict = call(module, &f.name, &f.params, k, UninitReads::Error);
    if !matches!(strict, Outcome::Failed(ErrorKind::UninitRead { .. })) {
        return difference(before, &strict);
    }
    [0x00, 0xa5].into_iter().find_map(|byte| {
        let filled = call(module, &f.name, &f.params, k, UninitReads::Fill(byte));
        difference(before, &filled)
            .map(|d| format!("{d}\n  (never-written memory reading as {byte:#04x})"))
    })
}

/// Checks one program against every configuration; `Err` describes the first failure.
fn check_program(
    program: &Program,
    configs: &[(String, Vec<&'static PassInfo>)],
) -> Result<(), String> {
    let original = parse_module(&program.text).map_err(|d| format!("does not parse: {d}"))?;
    verify_module(&original).map_err(|d| format!("generated module does not verify: {d}"))?;
    let before: Vec<Vec<Outcome>> = program
        .funcs
        .iter()
        .map(|f| {
            (0..INPUTS)
                .map(|k| call(&original, &f.name, &f.params, k, UninitReads::Error))
                .collect()
        })
        .collect();
    for (name, passes) in configs {
        let mut module = original.clone();
        let options = Options { verify_each: true, ..Default::default() };
        let (_, result) = run_passes(&mut module, passes, &options);
        if let Err(e) = result {
            return Err(format!("[{name}] {e}"));
        }
        for (f, outcomes) in program.funcs.iter().zip(&before) {
            for (k, before) in outcomes.iter().enumerate() {
                if let Some(diff) = optimized_difference(&module, f, k, before) {
                    return Err(format!(
                        "[{name}] @{} on input {k} {diff}\n--- optimized:\n{}",
                        f.name,
                        print_module(&module)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("ADC_PRESERVE_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64)
}

proptest! {
    // The regressions file is named directly: proptest's default (next to the crate's
    // `lib.rs`) does not exist for an integration test, so saved cases were never replayed.
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/preserve.proptest-regressions"
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn passes_preserve_semantics(program in program_strategy()) {
        let configs = configurations();
        if let Err(failure) = check_program(&program, &configs) {
            prop_assert!(false, "{}", failure);
        }
    }
}

/// The generator makes programs worth testing: most calls run to completion, some of
/// them loop, and every configuration is exercised.
#[test]
fn generated_programs_mostly_run() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut done, mut failed, mut loops) = (0, 0, 0);
    for _ in 0..64 {
        let program = program_strategy().new_tree(&mut runner).expect("a program").current();
        let module = parse_module(&program.text).expect("generated text parses");
        verify_module(&module).expect("generated modules verify");
        loops += usize::from(program.text.contains("^head"));
        for f in &program.funcs {
            match call(&module, &f.name, &f.params, 0, UninitReads::Error) {
                Outcome::Done { .. } => done += 1,
                Outcome::Failed(_) => failed += 1,
            }
        }
    }
    assert!(done > 4 * failed, "{done} calls ran, {failed} failed");
    assert!(loops > 16, "only {loops} of 64 programs have a loop");
    assert!(configurations().len() >= 10);
}
