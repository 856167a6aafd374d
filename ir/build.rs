//! Generates the text-form parser from `src/text/grammar.lalrpop`.
fn main() {
    lalrpop::process_src().expect("lalrpop grammar failed to build");
}
