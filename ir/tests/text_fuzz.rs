//! Property tests: `parse_module` never panics, on arbitrary strings and on mutations
//! (truncations, byte flips, token deletions and duplications) of a valid module; when a
//! mutant still parses, its printed form is a fixed point.

use adc_ir::text::{parse_module, print_module};
use proptest::prelude::*;

const VALID: &str = r#"target "x86_64-pc-linux-gnu"

global internal const @table: [2 x {ptr, i64}], addrspace(4), align 8 = [{@table + 8, 1}, {@sum - 8, -2}]

global @bytes: [3 x i8], align 1 = c"a\00\FF"

declare @sin(f64) -> f64 readnone nounwind

declare @printf(ptr noalias nocapture, ...) -> i32

func @sum(%x: ptr noalias, %n: i64) -> f64 nounwind {
^entry:
  %zero = const i64 0
  %fzero = const f64 -0.0
  %v = const <2 x f32> [nan, 0x7fa00000]
  jump ^header(%zero, %fzero)
^header(%i: i64, %acc: f64):
  %more = icmp slt i64 %i, %n
  brif %more, ^body, ^exit !"sum.c":3:7
^body:
  %eight = const i64 8
  %offset = mul nsw i64 %i, %eight
  %p = ptradd inbounds ptr %x, %offset
  %xi = load volatile f64, %p, align 8
  %s = call @sin(%xi) readnone
  %acc2 = fadd fast f64 %acc, %s
  %one = const i64 1
  %i2 = add i64 %i, %one
  %w = shuffle <2 x f32> %v, %v, [0, undef, 3]
  %pair = cmpxchg weak i64 %p, %i, %i2 seq_cst monotonic
  %old = extractvalue {i64, i1} %pair, 0
  switch %old, ^header(%i2, %acc2) [0: ^exit, -1: ^"odd block"]
^"odd block":
  %r = call_indirect fn(ptr, ...) -> i32 %x(%x, %acc)
  unreachable
^exit:
  ret %acc
}
"#;

/// Token boundaries of `VALID`, approximated by splitting at spaces and punctuation.
fn pieces(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() || "(),[]{}<>:=".contains(c) {
            if start < i {
                out.push((start, i));
            }
            out.push((i, i + c.len_utf8()));
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

fn check(text: &str) {
    if let Ok(module) = parse_module(text) {
        let printed = print_module(&module);
        let again = parse_module(&printed).unwrap_or_else(|d| {
            panic!("printed text does not parse:\n{}", d.render("p", &printed))
        });
        assert_eq!(print_module(&again), printed);
    } else if let Err(diags) = parse_module(text) {
        assert!(!diags.0.is_empty());
        // Rendering must not panic either, whatever the spans.
        let _ = diags.render("t.adir", text);
    }
}

#[test]
fn the_valid_module_is_a_fixed_point() {
    let module = parse_module(VALID).unwrap_or_else(|d| panic!("{}", d.render("v", VALID)));
    assert_eq!(print_module(&module), VALID);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings(text in "\\PC{0,200}") {
        check(&text);
    }

    #[test]
    fn arbitrary_ir_like_strings(text in "([%@^]?[a-z0-9\"]{0,6}[ ,:=(){}<>\\[\\]\n!.+-]{0,2}){0,60}") {
        check(&text);
    }

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn truncations(cut in 0usize..VALID.len()) {
        if let Some(prefix) = VALID.get(..cut) {
            check(prefix);
        }
    }

    #[test]
    fn byte_flips(at in 0usize..VALID.len(), byte in any::<u8>()) {
        let mut bytes = VALID.as_bytes().to_vec();
        bytes[at] = byte;
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_deletions(picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..4)) {
        let pieces = pieces(VALID);
        let mut drop: Vec<(usize, usize)> = picks.iter().map(|p| pieces[p.index(pieces.len())]).collect();
        drop.sort();
        let mut text = String::new();
        let mut at = 0;
        for (start, end) in drop {
            if start >= at {
                text.push_str(&VALID[at..start]);
                at = end;
            }
        }
        text.push_str(&VALID[at..]);
        check(&text);
    }

    #[test]
    fn token_duplications(pick in any::<prop::sample::Index>(), other in any::<prop::sample::Index>()) {
        let pieces = pieces(VALID);
        let (start, end) = pieces[pick.index(pieces.len())];
        let (at, _) = pieces[other.index(pieces.len())];
        let mut text = VALID[..at].to_string();
        text.push_str(&VALID[start..end]);
        text.push_str(&VALID[at..]);
        check(&text);
    }
}

/// Inputs whose size is in the numbers or the nesting, not the text.
#[test]
fn large_numbers_and_deep_nesting() {
    let huge = "global @g: [18446744073709551615 x i8], align 1 = [1]\n";
    let rendered = parse_module(huge).unwrap_err().render("t", huge);
    assert!(rendered.contains("has 18446744073709551615 elements"), "{rendered}");
    let zero = "global @g: [18446744073709551615 x [4294967296 x f64]], align 8 = zeroinit\n";
    assert_eq!(print_module(&parse_module(zero).unwrap()), zero);
    let deep = format!("global @g: {}i8{}, align 1\n", "[1 x ".repeat(10_000), "]".repeat(10_000));
    let rendered = parse_module(&deep).unwrap_err().render("t", &deep);
    assert!(rendered.contains("nested more than 256 deep"), "{rendered}");
    let ok = format!("global @g: {}i8{}, align 1\n", "[1 x ".repeat(255), "]".repeat(255));
    assert_eq!(print_module(&parse_module(&ok).unwrap()), ok);
    let long = format!("func @f() {{\n^e:\n  {}\n}}\n", "x".repeat(1_000_000));
    assert!(parse_module(&long).is_err());
    let many = "global @a: i8, align 1\n".repeat(20_000);
    assert_eq!(parse_module(&many).unwrap_err().0.len(), 19_999);
}
