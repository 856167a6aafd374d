//! ABI tests: clang-built callers call adc-built functions with every argument kind (ints of
//! each width, `_Bool`, float, double, many arguments spilling to the stack, pointers,
//! small/mixed/large structs by value, struct returns through registers and `sret`), and
//! adc-built callers call clang-built functions (including variadic `printf` with doubles),
//! and variadic functions defined by adc (ints, doubles, mixed kinds, more arguments than
//! registers, `va_copy`, named parameters on the stack, `byval` and `sret`, `vsnprintf`)
//! are called from clang-built and adc-built code, at -O0 to -O3.
//! Each mixed build must print what the all-clang build prints.

use std::path::{Path, PathBuf};
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Compiles `src` to an object: with clang, or clang -emit-llvm then adc's backend.
fn object(src: &Path, dir: &Path, via_adc: bool, opt: &str) -> PathBuf {
    let stem = src.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
    let tag = if via_adc { "adc" } else { "clang" };
    let obj = dir.join(format!("{stem}.{tag}{opt}.o"));
    if via_adc {
        let bc = dir.join(format!("{stem}{opt}.bc"));
        run(Command::new("clang-19").args([opt, "-c", "-emit-llvm", "-o"]).arg(&bc).arg(src));
        let module = adc_frontend_llvm::import_bitcode_file(&bc).expect("import");
        adc_ir::verify::verify_module(&module).expect("verifies");
        let bytes = adc_backend::compile_object(&module, stem).unwrap_or_else(|d| panic!("{d}"));
        std::fs::write(&obj, bytes).expect("write object");
    } else {
        run(Command::new("clang-19").args([opt, "-c", "-o"]).arg(&obj).arg(src));
    }
    obj
}

fn program(dir: &Path, objs: &[PathBuf], name: &str) -> String {
    let exe = dir.join(name);
    run(Command::new("cc").args(objs).args(["-lm", "-o"]).arg(&exe));
    run(&mut Command::new(&exe))
}

#[test]
fn clang_and_adc_objects_interoperate() {
    if !have("clang-19") {
        eprintln!("notice: clang-19 not found, ABI test skipped");
        return;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/abi");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("abi");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let (callee, caller) = (src.join("callee.c"), src.join("caller.c"));
    for opt in ["-O0", "-O1", "-O2", "-O3"] {
        let reference = program(
            &dir,
            &[object(&caller, &dir, false, opt), object(&callee, &dir, false, opt)],
            "ref",
        );
        assert!(reference.contains("formatv 14 [abc-42-3.14-xy]"), "{reference}");
        let adc_callee = program(
            &dir,
            &[object(&caller, &dir, false, opt), object(&callee, &dir, true, opt)],
            "adc_callee",
        );
        assert_eq!(adc_callee, reference, "clang caller -> adc callee at {opt}");
        let adc_caller = program(
            &dir,
            &[object(&caller, &dir, true, opt), object(&callee, &dir, false, opt)],
            "adc_caller",
        );
        assert_eq!(adc_caller, reference, "adc caller -> clang callee at {opt}");
        let adc_both = program(
            &dir,
            &[object(&caller, &dir, true, opt), object(&callee, &dir, true, opt)],
            "adc_both",
        );
        assert_eq!(adc_both, reference, "adc caller -> adc callee at {opt}");
    }
}
