//! The textual form of adc-ir: printer, lexer, grammar and parser (lowering to a `Module`).
//! `print(parse(t)) == t` for every canonical text `t` (what the printer produces).

mod ast;
mod cursor;
mod inst;
mod lexer;
mod parser;
mod print;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports)]
    grammar,
    "/text/grammar.rs"
);

pub use lexer::{LexError, LexErrorKind};
pub use parser::parse_module;
pub use print::{print_function, print_module, FunctionPrinter};
