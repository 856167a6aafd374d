//! Printing then parsing random valid modules (see `generate`) is stable:
//! `print(parse(print(m))) == print(m)`, and the parsed module verifies.

mod generate;

use adc_ir::text::{parse_module, print_module};
use adc_ir::verify::verify_module;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn print_parse_print_is_stable(m in generate::module()) {
        let text = print_module(&m.0);
        let parsed = match parse_module(&text) {
            Ok(parsed) => parsed,
            Err(diagnostics) => {
                return Err(TestCaseError::fail(diagnostics.render("generated.adir", &text)));
            }
        };
        let again = print_module(&parsed);
        if again != text {
            let line = text.lines().zip(again.lines()).position(|(a, b)| a != b);
            let detail = match line {
                Some(i) => format!(
                    "first difference on line {}:\n  printed: {}\n  reprinted: {}",
                    i + 1,
                    text.lines().nth(i).unwrap_or(""),
                    again.lines().nth(i).unwrap_or("")
                ),
                None => "one text is a prefix of the other".to_string(),
            };
            return Err(TestCaseError::fail(detail));
        }
        if let Err(diagnostics) = verify_module(&parsed) {
            return Err(TestCaseError::fail(diagnostics.render("generated.adir", &text)));
        }
    }
}
