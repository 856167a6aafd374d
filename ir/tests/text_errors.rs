//! Parse errors: each class of mistake yields a diagnostic with the right message, pointing
//! at the right `file:line:column`.

use adc_ir::text::parse_module;

/// Parses `src`, which must fail, and returns the rendered diagnostics.
fn errors(src: &str) -> String {
    match parse_module(src) {
        Ok(_) => panic!("parsed without error:\n{src}"),
        Err(diags) => {
            assert!(!diags.0.is_empty());
            diags.render("t.adir", src)
        }
    }
}

/// Asserts that one of the diagnostics says `message` and that one points at the first
/// occurrence of `at` in `src` (as `t.adir:LINE:COL`).
#[track_caller]
fn expect(src: &str, at: &str, message: &str) {
    let offset = src.find(at).unwrap_or_else(|| panic!("`{at}` not in the source"));
    expect_offset(src, offset, message);
}

#[track_caller]
fn expect_offset(src: &str, offset: usize, message: &str) {
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let rendered = errors(src);
    let at = format!("t.adir:{line}:{col}");
    assert!(rendered.contains(&at), "expected {at} in:\n{rendered}");
    assert!(rendered.contains(message), "expected `{message}` in:\n{rendered}");
}

/// A function body inside a module that declares `@g(f64) -> f64` and `@v()`, with
/// parameters `%a: i32, %b: i64, %x: f64, %p: ptr, %v: <2 x f64>`.
fn func(body: &str) -> String {
    format!(
        "declare @g(f64) -> f64\n\ndeclare @v()\n\n\
         func @f0(%a: i32, %b: i64, %x: f64, %p: ptr, %v: <2 x f64>) -> f64 {{\n^entry:\n{body}}}\n"
    )
}

#[test]
fn unknown_opcode_suggests_close_names() {
    let src = func("  %y = fmull f64 %x, %x\n  ret %y\n");
    expect(&src, "fmull", "unknown opcode `fmull`");
    let rendered = errors(&src);
    assert!(rendered.contains("did you mean `fmul`"), "{rendered}");
    // The failed line's result is not reported again as undefined where it is used.
    assert!(!rendered.contains("undefined value %y"), "{rendered}");
}

#[test]
fn unexpected_token_says_what_was_expected() {
    expect(&func("  %y = fadd f64 %x %x\n  ret %y\n"), "%x\n", "expected `,`, found `%x`");
    expect(
        &func("  %y = fadd f64, %x, %x\n  ret %y\n"),
        ", %x, %x",
        "expected a %value, found `,`",
    );
    expect(&func("  %y = fadd f63 %x, %x\n  ret %y\n"), "f63", "expected a type, found `f63`");
    expect(
        &func("  %y = = fadd\n  ret %y\n"),
        "= fadd",
        "unexpected `=`, expected an opcode or keyword",
    );
    let src = "func @f() {\n^e:\n  ret )\n}\n";
    expect_offset(src, src.find("ret )").unwrap() + 4, "unexpected `)`");
    expect("global @g: i32, align 4 = 5 6\n", "6", "unexpected `6` after the initializer");
    expect("declare @f(f64) -> f64 bogus\n", "bogus", "unknown function attribute `bogus`");
    expect("wat @f\n", "wat", "unknown keyword `wat`");
    expect("func @f() {\n  ret\n}\n", "ret", "unexpected `ret`, expected a ^block label");
}

#[test]
fn undefined_names() {
    expect(&func("  %y = fadd f64 %x, %z\n  ret %y\n"), "%z", "use of undefined value %z");
    expect(&func("  jump ^nowhere\n"), "^nowhere", "use of undefined block ^nowhere");
    expect(&func("  %y = call @h(%x)\n  ret %y\n"), "@h", "use of undefined symbol @h");
    expect(&func("  %y = call @f1(%x)\n  ret %y\n"), "@f1", "use of undefined symbol @f1");
    expect("global @p: ptr, align 8 = @q\n", "@q", "use of undefined symbol @q");
    let rendered = errors("global @g: i64, align 8 = 0\nglobal @p: ptr, align 8 = @g-8\n");
    assert!(rendered.contains("write `@g - 8` with spaces"), "{rendered}");
    expect(
        "global @g: i64, align 8 = 0\nfunc @f() {\n^e:\n  call @g()\n  ret\n}\n",
        "@g()",
        "@g is a global, not a function",
    );
}

#[test]
fn duplicate_names() {
    let src = func("  %y = fadd f64 %x, %x\n  %y = fadd f64 %x, %x\n  ret %y\n");
    let second = src.rfind("%y = ").unwrap();
    expect_offset(&src, second, "duplicate value name %y");
    expect(&func("  %a = fadd f64 %x, %x\n  ret %a\n"), "%a =", "duplicate value name %a");
    let src = func("  jump ^entry\n^entry:\n  ret %x\n");
    expect_offset(&src, src.rfind("^entry").unwrap(), "duplicate block name ^entry");
    let src = "declare @f()\nglobal @f: i32, align 4\n";
    expect(src, "@f:", "duplicate symbol @f");
    assert!(errors(src).contains("first defined on line 1"));
    expect("target \"a\"\ntarget \"b\"\n", "target \"b\"", "duplicate `target`");
}

#[test]
fn operand_count_and_shape() {
    let src = func("  %y = fadd f64 %x\n  ret %y\n");
    expect_offset(&src, src.find("%x\n").unwrap() + 2, "expected `,`, found end of line");
    expect(
        &func("  %y = fadd f64 %x, %x, %x\n  ret %y\n"),
        ", %x\n",
        "unexpected `,` after the operands of `fadd`",
    );
    let src = func("  %y = load f64, %p\n  ret %y\n");
    expect_offset(&src, src.find("%p\n").unwrap() + 2, "expected `,`");
    expect(
        &func("  %y = extractlane f64 %x, %a\n  ret %y\n"),
        "f64 %x",
        "`extractlane` needs a vector type",
    );
    expect(
        &func("  %s = const {i32, f64} zeroinit\n  %y = extractvalue {i32, f64} %s, 2\n  ret %x\n"),
        "2\n",
        "index 2 is out of range",
    );
    expect(
        &func("  store %x, %p, align 8\n  %y = store %x, %p, align 8\n  ret %x\n"),
        "%y",
        "%y cannot be defined here: `store` produces no value",
    );
    expect(&func("  %y = call @v()\n  ret %x\n"), "%y", "the callee returns nothing");
    expect(&func("  fadd f64 %x, %x\n  ret %x\n"), "fadd", "the f64 result of `fadd` needs a name");
    expect(&func("  %y = icmp lt i32 %a, %a\n  ret %x\n"), "lt", "unknown integer condition `lt`");
    expect(
        &func("  %y = atomicrmw add i32 %p, %a sequential\n  ret %x\n"),
        "sequential",
        "unknown memory ordering `sequential`",
    );
    let src = func("  %y = call @g(%x) !\"f.c\":1\n  ret %y\n");
    expect_offset(&src, src.find(":1\n").unwrap() + 2, "expected `:`, found end of line");
    expect(
        &func("  %y = shuffle <2 x f64> %v, %v, [0, x]\n  ret %x\n"),
        "x]",
        "expected a lane index or `undef`",
    );
    let src = func("  %y = call @g(%x,)\n  ret %y\n");
    expect_offset(&src, src.find(",)").unwrap() + 1, "expected a %value, found `)`");
    expect(&func("  %y = reduce.fadd <2 x f64> %v\n  ret %x\n"), "\n  ret %x", "expected `,`");
    expect(&func("  %y = alloca f64, align 8, 4\n  ret %x\n"), ", 4", "unexpected `,`");
    expect(
        &func("  %y = call_indirect fn(f64, ..., i32) -> f64 %p(%x)\n  ret %y\n"),
        "...",
        "`...` must be the last parameter",
    );
}

#[test]
fn bad_flags() {
    expect(
        &func("  %y = fadd nsw f64 %x, %x\n  ret %y\n"),
        "nsw",
        "flag `nsw` is not allowed on `fadd`",
    );
    expect(
        &func("  %y = xor exact i32 %a, %a\n  ret %x\n"),
        "exact",
        "flag `exact` is not allowed on `xor`",
    );
    expect(
        &func("  %y = add fast i32 %a, %a\n  ret %x\n"),
        "fast",
        "flag `fast` is not allowed on `add`",
    );
    expect(&func("  %y = ctpop nnan i32 %a\n  ret %x\n"), "nnan", "`ctpop` takes no flags");
    expect(&func("  %y = ptradd nuw ptr %p, %b\n  ret %x\n"), "nuw", "`ptradd` takes inbounds");
    expect(
        &func("  %c = icmp eq i32 %a, %a\n  %y = select nnan i32 %c, %a, %a\n  ret %x\n"),
        "nnan",
        "flag `nnan` is not allowed on `select` of i32",
    );
}

#[test]
fn type_mismatches() {
    expect(
        &func("  %y = add i32 %a, %b\n  ret %x\n"),
        "%b\n",
        "type mismatch: `%b` is i64 but the instruction says i32",
    );
    expect(
        &func("  %y = fcmp olt f32 %x, %x\n  ret %x\n"),
        "%x, %x",
        "`%x` is f64 but the instruction says f32",
    );
    expect(&func("  %y = const i8 300\n  ret %x\n"), "300", "integer `300` does not fit in i8");
    expect(&func("  %y = const i8 -129\n  ret %x\n"), "-129", "does not fit in i8");
    expect(
        &func("  %y = const f64 true\n  ret %x\n"),
        "true",
        "`true` is not a constant of type f64",
    );
    expect(&func("  %y = const ptr 2.5\n  ret %x\n"), "2.5", "`2.5` is not a constant of type ptr");
    expect(&func("  %y = const i1 2\n  ret %x\n"), "2\n", "integer `2` does not fit in i1");
    expect(&func("  %y = const i32 1.5\n  ret %x\n"), "1.5", "`1.5` is not a constant of type i32");
    expect(
        &func("  %y = const i32 0x10\n  ret %x\n"),
        "0x10",
        "`0x10` is not a constant of type i32",
    );
    expect(
        &func("  %y = const f32 0x7ff8000000000000\n  ret %x\n"),
        "0x7ff",
        "does not fit in the bits of f32",
    );
    expect(&func("  %y = const f64 1e999\n  ret %x\n"), "1e999", "`1e999` is out of range for f64");
    expect(&func("  %y = const [2 x i8] c\"abc\"\n  ret %x\n"), "c\"abc", "c-string of 3 bytes");
    expect(
        &func("  %y = const {i32, f64} {1}\n  ret %x\n"),
        "{1}",
        "has 2 elements, the constant gives 1",
    );
    expect(&func("  %y = const {i32, f64} [1, 2.0]\n  ret %x\n"), "[1, 2.0]", "written in `{`");
    expect(&func("  %y = const <2 x i64> [1, 2, 3]\n  ret %x\n"), "3]", "too many elements");
    expect(
        &func("  %y = const <2 x {i32}> zeroinit\n  ret %x\n"),
        "{i32}",
        "lanes must be scalars",
    );
    expect("global @g: i8, align 1 = 256\n", "256", "integer `256` does not fit in i8");
    let src = "func @f(%c: i8) {\n^e:\n  switch %c, ^e [300: ^e]\n}\n";
    expect(src, "300", "integer `300` does not fit in i8");
}

#[test]
fn entry_block_params_and_empty_bodies() {
    let src = "func @f(%x: f64) {\n^e(%y: f64):\n  ret\n}\n";
    expect(src, "(%y", "the entry block cannot have written parameters");
    expect("func @f() {\n}\n", "}", "function @f has no blocks");
    let src = "func @f() {\n^e:\n  jump ^b(%x)\n^b(%v: f64, ...):\n  ret\n}\n";
    expect(src, "(%v", "a block cannot take variable arguments");
}

#[test]
fn unterminated_strings_and_bad_characters() {
    expect("target \"x86\n", "\"x86", "unterminated string");
    expect("func @f() {\n^e:\n  ret !\"abc\n}\n", "\"abc", "unterminated string");
    expect("global @\"a\\zz\": i8, align 1\n", "\\zz", "invalid escape");
    expect("func @f() {\n^e:\n  ret # x\n}\n", "#", "unexpected character `#`");
    // A lexical error does not hide syntax errors on other lines.
    let src = "func @f() {\n^e:\n  ret # x\n  %y = = 3\n}\n";
    expect(src, "#", "unexpected character");
    expect(src, "= 3", "unexpected `=`");
}

#[test]
fn truncated_input_points_at_the_end() {
    let src = "func @f(%x: f64) -> f64 {\n^e:\n  ret %x\n";
    let rendered = errors(src);
    // ariadne shows the end of input at the end of the last line.
    assert!(
        rendered.contains("unexpected end of file") && rendered.contains("t.adir:3:9"),
        "{rendered}"
    );
    assert!(
        rendered.contains("expected an opcode or keyword, a %value, a ^block label or `}`"),
        "{rendered}"
    );
    let src = "func @f(%x: f64) -> f64 {\n^e:\n  %y = fadd f64 %x,";
    expect_offset(src, src.len(), "unexpected end of file");
    let src = "global @g: [2 x i8";
    expect_offset(src, src.len(), "unexpected end of file");
    let src = "func @f(%x: f64) -> f64\n^e:\n  ret %x\n}\n";
    expect(src, "\n^e", "unexpected end of line");
    assert!(errors(src).contains("a function header ends with the `{`"));
    let src = "declare @f(";
    expect_offset(src, src.len(), "unexpected end of file");
}

#[test]
fn several_errors_are_reported() {
    let src = func(
        "  %y = fmull f64 %x, %x\n  %z = fadd f64 %x, %nope\n  %w = add i32 %b, %b\n  ret %x\n",
    );
    expect(&src, "fmull", "unknown opcode");
    expect(&src, "%nope", "undefined value %nope");
    expect(&src, "%b, %b", "type mismatch");
    // A broken function header is reported once, not once per line of its body.
    let src = "func @f(%x: f64 {\n^e:\n  ret %x\n}\n\nfunc @g( {\n^e:\n  ret\n}\n";
    let diags = parse_module(src).unwrap_err();
    assert_eq!(diags.0.len(), 2, "{}", diags.render("t.adir", src));
}
