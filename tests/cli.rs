//! The `adc` binary end to end: exit statuses, rendered diagnostics with line and column
//! for malformed input, and the interp/opt/test subcommands on real files.

use std::path::PathBuf;
use std::process::{Command, Output};

fn adc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the adc binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to a fresh file under the target directory and returns its path.
fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path
}

/// Runs `adc opt` on a malformed file and checks exit 1 plus a rendered
/// `file:line:col` diagnostic containing `message`.
fn assert_rejected(name: &str, text: &str, line_col: &str, message: &str) {
    let path = scratch(name, text);
    let out = adc(&["opt", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{name}: {err}");
    assert!(err.contains(&format!("{name}:{line_col}")), "{name}: no {line_col} in:\n{err}");
    assert!(err.contains(message), "{name}: no `{message}` in:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn truncated_file_is_a_diagnostic() {
    let text = "func @f(%a: i32) -> i32 {\n^entry:\n  %b = add i32 %a,";
    assert_rejected("truncated.adir", text, "3:", "end of file");
}

#[test]
fn unknown_opcode_is_a_diagnostic() {
    let text = "func @f(%a: i32) -> i32 {\n^entry:\n  %b = frobnicate i32 %a, %a\n  ret %b\n}\n";
    assert_rejected("opcode.adir", text, "3:8", "frobnicate");
}

#[test]
fn type_mismatch_is_a_diagnostic() {
    let text = "func @f(%a: i64) -> i32 {\n^entry:\n  %b = add i32 %a, %a\n  ret %b\n}\n";
    assert_rejected("mismatch.adir", text, "3:", "i64");
}

#[test]
fn use_before_def_is_a_diagnostic() {
    let text = "func @f(%a: i32) -> i32 {\n^entry:\n  %c = add i32 %b, %a\n  %b = add i32 %a, %a\n  ret %c\n}\n";
    assert_rejected("usedef.adir", text, "3:", "%b");
}

#[test]
fn wrong_block_argument_count_is_a_diagnostic() {
    let text =
        "func @f(%a: i32) -> i32 {\n^entry:\n  jump ^next(%a, %a)\n^next(%x: i32):\n  ret %x\n}\n";
    assert_rejected("blockargs.adir", text, "3:", "argument");
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let out = adc(&["opt", "does/not/exist.adir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot read does/not/exist.adir"), "{}", stderr(&out));
}

#[test]
fn unknown_pass_lists_the_registry() {
    let out = adc(&["opt", "examples/sum.adir", "--passes", "no-such-pass"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no-such-pass") && err.contains("licm"), "{err}");
}

#[test]
fn opt_prints_a_fixed_point() {
    let out = adc(&["opt", "examples/sum.adir"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = scratch("printed.adir", &stdout(&out));
    let again = adc(&["opt", printed.to_str().unwrap()]);
    assert_eq!(stdout(&out), stdout(&again));
}

#[test]
fn interp_runs_a_loop_and_shows_buffers() {
    let out =
        adc(&["interp", "examples/sum.adir", "--fn", "sum_of_squares", "[f64 1.0, 2.0, 3.0]", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "14.0");
    let out =
        adc(&["interp", "examples/sum.adir", "--fn", "scale", "$v = [f64 1.0, -2.0]", "3.0", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "$v = [f64 3.0, -6.0]");
}

#[test]
fn interp_reports_out_of_bounds() {
    let out = adc(&["interp", "examples/sum.adir", "--fn", "sum_of_squares", "[f64 1.0]", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("out of bounds"), "{}", stderr(&out));
}

#[test]
fn interp_rejects_bad_arguments() {
    let out = adc(&["interp", "examples/sum.adir", "--fn", "norm", "1.5", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let out = adc(&["interp", "examples/sum.adir", "--fn", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no function @nope"), "{}", stderr(&out));
}

#[test]
fn test_subcommand_counts() {
    let good = scratch(
        "good.adir",
        "; test interpret\n; run: @id(7) == 7\nfunc @id(%a: i32) -> i32 {\n^entry:\n  ret %a\n}\n",
    );
    let bad = scratch(
        "bad.adir",
        "; test interpret\n; run: @id(7) == 8\nfunc @id(%a: i32) -> i32 {\n^entry:\n  ret %a\n}\n",
    );
    let out = adc(&["test", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("1 passed, 1 failed"), "{}", stdout(&out));
    assert!(stdout(&out).contains("expected 8, got 7"), "{}", stdout(&out));
}

#[test]
fn help_documents_every_subcommand() {
    let out = adc(&["--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    for sub in ["import", "opt", "interp", "test"] {
        assert!(help.contains(sub), "{help}");
        let sub_help = adc(&[sub, "--help"]);
        assert!(stdout(&sub_help).contains("Example"), "{sub}: {}", stdout(&sub_help));
    }
    let out = adc(&["bogus"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn import_prints_bitcode_as_adir_and_rejects_garbage() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let c = scratch("sq.c", "double sq(double x) { return x * x; }\n");
    let bc = dir.join("sq.bc");
    let clang =
        Command::new("clang-19").args(["-O2", "-c", "-emit-llvm", "-o"]).arg(&bc).arg(&c).status();
    if !clang.is_ok_and(|s| s.success()) {
        eprintln!("clang-19 unavailable: skipping the bitcode half of this test");
    } else {
        let out = adc(&["import", bc.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("func @sq(") && text.contains("fmul f64"), "{text}");
        let adir = scratch("sq.adir", &text);
        let out = adc(&["interp", adir.to_str().unwrap(), "--fn", "sq", "1.5"]);
        assert_eq!(stdout(&out).trim(), "2.25", "{}", stderr(&out));
    }
    let junk = scratch("junk.bc", "this is not bitcode");
    let out = adc(&["import", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn analyze_runs_a_pipeline_first_when_asked() {
    let plan = ["--print", "cache-plan", "--fn", "sum_of_squares", "--args", "dup,const"];
    let mut args = vec!["analyze", "examples/sum.adir", "--pipeline", "pre-ad"];
    args.extend(plan);
    let out = adc(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("cache plan of @sum_of_squares"), "{}", stdout(&out));
    args[3] = "no-such-pipeline";
    let out = adc(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no-such-pipeline") && err.contains("pre-ad"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--denormals=flush`: inside the derivative a denormal adjoint (1e-200 * 1e-120) is
/// flushed to zero; after it returns, the caller computes the same product with IEEE
/// denormals again (MXCSR restored). The default build keeps the denormal everywhere.
#[test]
fn denormals_flush_applies_to_the_derivative_only() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let c = scratch(
        "denormal.c",
        r#"#include <stdio.h>
extern int enzyme_const;
extern double __enzyme_autodiff(void *, ...);
static double f(double x, double a, double b) { return x * a * b; }
int main(void) {
  volatile double a = 1e-200, b = 1e-120;
  double dx = __enzyme_autodiff((void *)f, 2.0, enzyme_const, (double)a, enzyme_const, (double)b);
  double after = a * b;
  printf("%d %d\n", dx != 0.0, after != 0.0);
  return 0;
}
"#,
    );
    let bc = dir.join("denormal.bc");
    let clang =
        Command::new("clang-19").args(["-O2", "-c", "-emit-llvm", "-o"]).arg(&bc).arg(&c).status();
    if !clang.is_ok_and(|s| s.success()) {
        eprintln!("clang-19 unavailable: skipping");
        return;
    }
    for (mode, expected) in [("ieee", "1 1"), ("flush", "0 1")] {
        let obj = dir.join(format!("denormal_{mode}.o"));
        let exe = dir.join(format!("denormal_{mode}"));
        let flag = format!("--denormals={mode}");
        let out = adc(&["build", &flag, bc.to_str().unwrap(), "-o", obj.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let linked = Command::new("cc").arg(&obj).arg("-o").arg(&exe).status();
        assert!(linked.is_ok_and(|s| s.success()), "link {mode}");
        let run = Command::new(&exe).output().expect("runs");
        assert_eq!(stdout(&run).trim(), expected, "{mode}");
    }
    let out = adc(&[
        "build",
        "--denormals=flush",
        "--emit",
        "ptx",
        bc.to_str().unwrap(),
        "-o",
        "/dev/null",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--denormals=flush applies to CPU code"), "{}", stderr(&out));
}

/// Compiles C source to bitcode under the scratch directory; `None` without clang-19.
fn bitcode(name: &str, source: &str) -> Option<PathBuf> {
    let c = scratch(&format!("{name}.c"), source);
    let bc = c.with_extension("bc");
    let clang =
        Command::new("clang-19").args(["-O2", "-c", "-emit-llvm", "-o"]).arg(&bc).arg(&c).status();
    clang.is_ok_and(|s| s.success()).then_some(bc)
}

/// Several bitcode inputs are linked (as for LTO): the unit with the `__enzyme_autodiff`
/// call differentiates a function another unit defines, each keeping its own internal
/// `scale`; two strong definitions of one symbol, and an .adir among several inputs, are
/// errors.
#[test]
fn build_links_several_bitcode_inputs() {
    let model = bitcode(
        "link_model",
        "static double scale(double v) { return 3.0 * v; }\n\
         double model(const double *w) { return scale(w[0] * w[1]); }\n",
    );
    let main = bitcode(
        "link_main",
        r#"#include <stdio.h>
extern int enzyme_dup;
extern double __enzyme_autodiff(void *, ...);
double model(const double *w);
static double scale(double v) { return v + 100.0; }
int main(void) {
  double w[2] = {2.0, 5.0}, dw[2] = {0, 0};
  __enzyme_autodiff((void *)model, enzyme_dup, w, dw);
  printf("%g %g %g\n", dw[0], dw[1], scale(1.0));
  return 0;
}
"#,
    );
    let clash = bitcode("link_clash", "double model(const double *w) { return w[0]; }\n");
    let (Some(model), Some(main), Some(clash)) = (model, main, clash) else {
        eprintln!("clang-19 unavailable: skipping");
        return;
    };
    let dir = model.parent().expect("scratch dir").to_path_buf();
    let (obj, exe) = (dir.join("linked.o"), dir.join("linked"));
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let out = adc(&["build", &path(&main), &path(&model), "-o", &path(&obj)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(Command::new("cc").arg(&obj).arg("-o").arg(&exe).status().is_ok_and(|s| s.success()));
    let run = Command::new(&exe).output().expect("runs");
    assert_eq!(stdout(&run).trim(), "15 6 101", "d(3 w0 w1) = (3 w1, 3 w0)");

    let alone = adc(&["build", &path(&main), "-o", &path(&obj)]);
    assert_eq!(alone.status.code(), Some(1));
    assert!(stderr(&alone).contains("pass the bitcode file that defines it"), "{}", stderr(&alone));

    let out = adc(&["build", &path(&main), &path(&model), &path(&clash), "-o", &path(&obj)]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("cannot link the inputs") && err.contains("model"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let out = adc(&["build", &path(&main), "examples/sum.adir", "-o", &path(&obj)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("must all be bitcode"), "{}", stderr(&out));
}

/// A printf-style function defined in C with varargs (`tests/c/import/57_variadic_printf.c`)
/// prints what the native program prints in the interpreter, in the JIT and as an adc
/// object, at -O0 and -O2 (the import corpus runs the interpreter and object stages at
/// every level; this adds the JIT).
#[test]
fn variadic_definitions_run_in_the_interpreter_the_jit_and_objects() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/import/57_variadic_printf.c");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let run = |cmd: &mut Command| {
        let out = cmd.output().expect("the command runs");
        assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
        stdout(&out)
    };
    for level in ["-O0", "-O2"] {
        let (bc, adir) = (dir.join(format!("va{level}.bc")), dir.join(format!("va{level}.adir")));
        let clang = Command::new("clang-19")
            .args([level, "-c", "-emit-llvm", "-o"])
            .arg(&bc)
            .arg(&src)
            .status();
        if !clang.is_ok_and(|s| s.success()) {
            eprintln!("notice: clang-19 unavailable, variadic definitions test skipped");
            return;
        }
        let native = dir.join(format!("va{level}.native"));
        run(Command::new("clang-19").arg(&bc).arg("-o").arg(&native));
        let expected = run(&mut Command::new(&native));
        assert!(expected.contains("logged 86"), "{expected}");
        let (bc_s, adir_s) = (bc.to_str().unwrap(), adir.to_str().unwrap());
        let imported = adc(&["import", bc_s, "-o", adir_s]);
        assert!(imported.status.success(), "{}", stderr(&imported));
        for extra in [&[][..], &["--jit"][..]] {
            let mut args = vec!["interp", adir_s, "--fn", "main"];
            args.extend_from_slice(extra);
            args.extend(["1", "null"]);
            let out = adc(&args);
            assert!(out.status.success(), "{level} {extra:?}: {}", stderr(&out));
            // The interpreter prints main's return value after the program's output.
            assert_eq!(stdout(&out), format!("{expected}0\n"), "{level} {extra:?}");
        }
        let obj = dir.join(format!("va{level}.o"));
        let built = adc(&["build", bc_s, "-o", obj.to_str().unwrap()]);
        assert!(built.status.success(), "{}", stderr(&built));
        let exe = dir.join(format!("va{level}.adc"));
        run(Command::new("cc").arg(&obj).arg("-lm").arg("-o").arg(&exe));
        assert_eq!(run(&mut Command::new(&exe)), expected, "{level}: the adc object");
    }
}

/// A loop running to `__enzyme_iter(n, step)` has a trip count known on entry (the call
/// is pure): its tape is one presized allocation, not grown with `realloc` through
/// `__adc_tape_push`, which a derivative of the derivative would have to differentiate.
#[test]
fn enzyme_iter_loops_get_presized_tapes() {
    let Some(bc) = bitcode(
        "enzyme_iter_tape",
        "unsigned long long __enzyme_iter(unsigned long long, unsigned long long);\n\
         double __enzyme_autodiff(void *, ...);\n\
         double horner(double x) {\n  double r = 1;\n  \
           unsigned long long n = __enzyme_iter(8, 1);\n  \
           for (unsigned long long i = 0; i < n; i++) r = r * x + 1.0 / (i + 1);\n  \
           return r;\n}\n\
         double dh(double x) { return __enzyme_autodiff((void *)horner, x); }\n",
    ) else {
        eprintln!("clang-19 unavailable: skipping");
        return;
    };
    let ir = bc.with_extension("adir");
    // The claim is about the default tape layout: `-cache-records` pushes through
    // `__adc_tape_push` even onto presized tapes, so `ADC_CACHE` must not change it.
    let out = Command::new(env!("CARGO_BIN_EXE_adc"))
        .args(["build", bc.to_str().unwrap(), "--emit", "ir", "-o", ir.to_str().unwrap()])
        .env_remove("ADC_CACHE")
        .output()
        .expect("the adc binary runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&ir).expect("the IR was written");
    let start = text.find("func @dh(").expect("the derivative's caller");
    let body = &text[start..text[start..].find("\n}").map_or(text.len(), |end| start + end)];
    assert!(body.contains("call @__adc_tape_take"), "one presized tape buffer:\n{body}");
    assert!(!body.contains("call @realloc") && !body.contains("call @__adc_tape_push"), "{body}");
}
