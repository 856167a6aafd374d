//! Prints a function's type trees, one line per value in definition order (parameters,
//! then each block's parameters and results), Enzyme-style:
//! `%p: {[-1]:Pointer, [-1,0]:Float@double}`. Values about which nothing is known print
//! `{}`; recorded conflicts follow the tree as `conflict [path]: A vs B`.

use std::fmt::Write as _;

use adc_ir::text::FunctionPrinter;
use adc_ir::{FuncId, Module, Value};

use super::TypeAnalysis;

/// The values of `func` in the order they are defined in the text.
pub fn values_in_order(module: &Module, func: FuncId) -> Vec<Value> {
    let function = &module.functions[func];
    let mut values = Vec::new();
    for block in function.layout.blocks() {
        values.extend_from_slice(function.dfg.block_params(*block));
        for inst in function.layout.block_insts(*block) {
            values.extend(function.dfg.inst_result(*inst));
        }
    }
    values
}

/// `func`'s trees as text, starting with a `@name:` line and ending with its return tree.
pub fn print_function_types(module: &Module, analysis: &TypeAnalysis, func: FuncId) -> String {
    let function = &module.functions[func];
    let printer = FunctionPrinter::new(module, function);
    let mut out = String::new();
    let _ = writeln!(out, "@{}:", function.name);
    for value in values_in_order(module, func) {
        let _ = writeln!(out, "  {}: {}", printer.value(value), analysis.tree(func, value));
    }
    if function.signature.ret.is_some() {
        let _ = writeln!(out, "  return: {}", analysis.return_tree(func));
    }
    out
}

/// Every defined function's trees, in module order.
pub fn print_module_types(module: &Module, analysis: &TypeAnalysis) -> String {
    module
        .functions
        .iter()
        .filter(|(_, f)| !f.is_declaration())
        .map(|(id, _)| print_function_types(module, analysis, id))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_one_line_per_value() {
        let text = "func @f(%p: ptr, %i: i64) -> f64 {\n^e:\n  %eight = const i64 8\n  %o = mul i64 %i, %eight\n  %q = ptradd ptr %p, %o\n  %x = load f64, %q, align 8\n  ret %x\n}\n";
        let module = adc_ir::text::parse_module(text).unwrap();
        let analysis = TypeAnalysis::analyze(&module);
        let id = module.function_by_name("f").unwrap();
        let printed = print_function_types(&module, &analysis, id);
        assert_eq!(
            printed,
            "@f:\n  %p: {[-1]:Pointer, [-1,-1]:Float@double}\n  %i: {[-1]:Integer}\n  %eight: {}\n  %o: {[-1]:Integer}\n  %q: {[-1]:Pointer, [-1,-1]:Float@double}\n  %x: {[-1]:Float@double}\n  return: {[-1]:Float@double}\n"
        );
    }
}
