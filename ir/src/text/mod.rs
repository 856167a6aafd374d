//! The textual form of adc-ir: printer here, lexer/grammar/parser beside it.
//! `print(parse(t)) == t` for every canonical text `t` (what the printer produces).

mod print;

pub use print::{print_function, print_module, FunctionPrinter};
