//! The interpreter never panics: every function of every interpret filetest, called with
//! arbitrary arguments (random integers and float bits, null, stray addresses, small
//! buffers of random bytes), returns a value or an error.

use std::path::PathBuf;

use adc_ir::interp::{Interpreter, Val};
use adc_ir::text::parse_module;
use adc_ir::{Module, Type};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn corpus() -> Vec<(String, Module)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/filetests/interpret");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("filetest directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "adir"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable");
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let module = parse_module(&text).unwrap_or_else(|d| panic!("{name}: {d}"));
            (name, module)
        })
        .collect()
}

/// A raw argument; turned into a `Val` of the parameter's type.
#[derive(Clone, Debug)]
enum Raw {
    Bits(u128),
    Null,
    Buffer(Vec<u8>),
}

fn raw() -> impl Strategy<Value = Raw> {
    prop_oneof![
        any::<u128>().prop_map(Raw::Bits),
        prop_oneof![Just(0u128), Just(1), Just(u128::MAX), Just(1 << 63), Just(1 << 31)]
            .prop_map(Raw::Bits),
        Just(Raw::Null),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(Raw::Buffer),
    ]
}

fn value(interp: &mut Interpreter, ty: &Type, raw: &Raw) -> Val {
    match (ty, raw) {
        (Type::F32, Raw::Bits(b)) => Val::F32(f32::from_bits(*b as u32)),
        (Type::F64, Raw::Bits(b)) => Val::F64(f64::from_bits(*b as u64)),
        (Type::F32, _) => Val::F32(0.0),
        (Type::F64, _) => Val::F64(0.0),
        (Type::Ptr(_), Raw::Buffer(bytes)) => {
            let vals: Vec<Val> = bytes.iter().map(|b| Val::Int(u128::from(*b))).collect();
            interp.alloc(&Type::I8, &vals).expect("small buffer")
        }
        (Type::Ptr(_), Raw::Bits(b)) => Val::Ptr(*b as u64),
        (Type::Ptr(_), Raw::Null) => Val::Ptr(0),
        (_, Raw::Bits(b)) => Val::Int(*b),
        _ => Val::Int(0),
    }
}

#[test]
fn arbitrary_arguments_never_panic() {
    let corpus = corpus();
    assert!(corpus.len() >= 60, "only {} filetests", corpus.len());
    let calls = std::cell::Cell::new(0usize);
    let errors = std::cell::Cell::new(0usize);
    for (name, module) in &corpus {
        for (id, func) in module.functions.iter() {
            if func.is_declaration() || func.signature.params.iter().any(|t| !t.is_scalar()) {
                continue;
            }
            let n = func.signature.params.len();
            let strategy = proptest::collection::vec(raw(), n..=n);
            // A runner per function: one runner counts its cases across all its runs.
            TestRunner::new(Config { cases: 24, ..Config::default() })
                .run(&strategy, |raws| {
                    let mut interp = Interpreter::new(module).expect("globals lay out");
                    interp.set_fuel(20_000);
                    let args: Vec<Val> = func
                        .signature
                        .params
                        .iter()
                        .zip(&raws)
                        .map(|(ty, raw)| value(&mut interp, ty, raw))
                        .collect();
                    calls.set(calls.get() + 1);
                    if let Err(e) = interp.call(id, &args) {
                        // Errors are fine; rendering them must not panic either.
                        errors.set(errors.get() + 1);
                        let _ = e.to_diagnostic().to_string();
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{name} @{}: {e}", func.name));
        }
    }
    eprintln!("{} calls, {} errors", calls.get(), errors.get());
    assert!(calls.get() > 1000);
}

#[test]
fn mismatched_api_arguments_are_errors() {
    for (_, module) in corpus() {
        for (id, func) in module.functions.iter() {
            let mut interp = Interpreter::new(&module).expect("globals lay out");
            interp.set_fuel(1_000);
            let wrong: Vec<Val> = func
                .signature
                .params
                .iter()
                .map(|t| if t.is_float() { Val::Int(1) } else { Val::F64(1.0) })
                .collect();
            if !wrong.is_empty() {
                assert!(interp.call(id, &wrong).is_err(), "@{}", func.name);
            }
            let too_many = vec![Val::Int(0); func.signature.params.len() + 1];
            if !func.signature.varargs {
                assert!(interp.call(id, &too_many).is_err(), "@{}", func.name);
            }
            assert!(interp.read(&Val::F64(1.0), &Type::I8, 1).is_err());
            assert!(interp.read(&Val::Ptr(0), &Type::I8, 1).is_err());
            let _ = interp.read(&Val::Ptr(u64::MAX), &Type::I128, usize::MAX);
            assert!(interp.alloc(&Type::array(Type::I64, u64::MAX), &[]).is_err());
        }
    }
}
