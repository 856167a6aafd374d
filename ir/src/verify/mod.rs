//! The verifier: checks that a module is well-formed IR and reports every problem it finds
//! as a `Diagnostic` (message, source span when the IR came from text, a label, and a
//! note naming the function, block and printed instruction).
//!
//! It never panics, even on in-memory IR with dangling entity references: every lookup
//! goes through `.get()` or a validity check first. The checks are split by subject:
//! structure, CFG, SSA dominance and module-level facts here; per-instruction typing and
//! flags in `insts`.

mod insts;

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use rustc_hash::{FxHashMap, FxHashSet};

use cranelift_entity::SecondaryMap;

use crate::constant::{Constant, Symbol};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::entities::{Block, Inst, Value};
use crate::function::{Function, Linkage};
use crate::instructions::InstructionData;
use crate::module::Module;
use crate::text::FunctionPrinter;
use crate::types::Type;
use crate::ValueDef;

use crate::dominance::DomTree;

/// Verifies every global and function of `module`, and the module-level facts (unique
/// symbol names, initializers, declarations).
pub fn verify_module(module: &Module) -> Result<(), Diagnostics> {
    let mut errors = Vec::new();
    check_symbols(module, &mut errors);
    for global in module.globals.values() {
        check_global(module, global, &mut errors);
    }
    for func in module.functions.values() {
        FuncVerifier::new(module, func, &mut errors).run();
    }
    check_startup(module, &mut errors);
    finish(errors)
}

/// Constructors and destructors are functions of no parameters returning nothing (the C
/// runtime calls them so).
fn check_startup(module: &Module, errors: &mut Vec<Diagnostic>) {
    for startup in &module.startup {
        let kind = startup.kind.keyword();
        let Some(func) = module.functions.get(startup.function) else {
            errors.push(Diagnostic::new(format!("{kind} names a function not in the module")));
            continue;
        };
        let sig = &func.signature;
        if !sig.params.is_empty() || sig.ret.is_some() || sig.varargs {
            errors.push(Diagnostic::new(format!(
                "{kind} @{} must take no parameters and return nothing",
                func.name
            )));
        }
    }
}

/// Verifies one function; symbols (callees, globals) are resolved in `module`, of which
/// `func` need not be a member.
pub fn verify_function(module: &Module, func: &Function) -> Result<(), Diagnostics> {
    let mut errors = Vec::new();
    FuncVerifier::new(module, func, &mut errors).run();
    finish(errors)
}

fn finish(errors: Vec<Diagnostic>) -> Result<(), Diagnostics> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(errors))
    }
}

/// Functions and globals share the `@` namespace of the text form (as in LLVM), so a name
/// must be unique across both.
fn check_symbols(module: &Module, errors: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &'static str> = HashMap::new();
    let symbols = module
        .globals
        .values()
        .map(|g| (g.name.as_str(), "global"))
        .chain(module.functions.values().map(|f| (f.name.as_str(), "function")));
    for (name, kind) in symbols {
        if name.is_empty() {
            errors.push(
                Diagnostic::new(format!("{kind} with an empty name"))
                    .with_label("every symbol needs a name"),
            );
            continue;
        }
        if let Some(first) = seen.insert(name, kind) {
            let what =
                if first == kind { format!("{kind}s") } else { format!("{first} and {kind}") };
            errors.push(
                Diagnostic::new(format!("symbol {} is defined twice", symbol_name(name)))
                    .with_label(format!("duplicate {kind} name"))
                    .with_note(format!("two {what} are named {}", symbol_name(name))),
            );
        }
    }
}

fn check_global(module: &Module, global: &crate::module::Global, errors: &mut Vec<Diagnostic>) {
    let name = symbol_name(&global.name);
    let note = format!("in global {name}");
    let mut error = |message: String, label: &str| {
        errors.push(Diagnostic::new(message).with_label(label).with_note(note.clone()));
    };
    if let Some(problem) = type_problem(&global.ty) {
        error(format!("global {name} has malformed type {}: {problem}", global.ty), "bad type");
    }
    if !global.align.is_power_of_two() {
        error(
            format!("alignment {} of global {name} is not a power of two", global.align),
            "alignment must be a power of two",
        );
    }
    if let Some(init) = &global.init {
        if !init.fits(&global.ty) {
            error(
                format!("initializer of global {name} does not fit its type {}", global.ty),
                "initializer does not fit",
            );
        }
        for symbol in unknown_symbols(module, init) {
            error(
                format!("initializer of global {name} refers to unknown {symbol}"),
                "unknown symbol",
            );
        }
        if global.linkage == Linkage::ExternWeak {
            error(
                format!("global {name} has an initializer but extern_weak linkage"),
                "extern_weak globals are defined elsewhere",
            );
        }
    }
}

/// Symbols of `Address` constants inside `c` that the module does not have, named for
/// messages (`global g7`, `function fn3`).
fn unknown_symbols(module: &Module, c: &Constant) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![c];
    while let Some(c) = stack.pop() {
        match c {
            Constant::Address { symbol: Symbol::Global(g), .. } if !module.globals.is_valid(*g) => {
                out.push(format!("global {g}"));
            }
            Constant::Address { symbol: Symbol::Func(f), .. } if !module.functions.is_valid(*f) => {
                out.push(format!("function {f}"));
            }
            Constant::Elements(elems) => stack.extend(elems.iter().rev()),
            _ => {}
        }
    }
    out
}

/// `@name` as the printer writes it: quoted unless it is a plain identifier.
pub(crate) fn symbol_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'));
    if plain {
        format!("@{name}")
    } else {
        let mut out = String::from("@\"");
        for b in name.bytes() {
            if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
                out.push(b as char);
            } else {
                out.push_str(&format!("\\{b:02X}"));
            }
        }
        out.push('"');
        out
    }
}

/// Why `ty` is not a well-formed type, if it is not: vectors hold 1 or more scalar lanes.
pub(crate) fn type_problem(ty: &Type) -> Option<String> {
    let mut stack = vec![ty];
    while let Some(ty) = stack.pop() {
        match ty {
            Type::Vector(elem, lanes) => {
                if !elem.is_scalar() {
                    return Some(format!("vector lanes must be scalars, found {elem}"));
                }
                if *lanes == 0 {
                    return Some("a vector needs at least one lane".to_string());
                }
            }
            Type::Array(elem, _) => stack.push(elem),
            Type::Struct(s) => stack.extend(s.fields.iter()),
            _ => {}
        }
    }
    None
}

/// Where an error is: the note and span of a diagnostic are derived from it.
#[derive(Copy, Clone)]
pub(crate) enum At {
    Func,
    Block(Block),
    Inst(Block, Inst),
}

pub(crate) struct FuncVerifier<'a> {
    module: &'a Module,
    func: &'a Function,
    /// Built on the first error only: naming values costs an allocation per value.
    printer: OnceCell<FunctionPrinter<'a>>,
    errors: &'a mut Vec<Diagnostic>,
    /// Block and index of every laid-out instruction (its first placement).
    position: SecondaryMap<Inst, Option<(Block, u32)>>,
    laid_out: FxHashSet<Block>,
    /// Successors of every laid-out block, restricted to laid-out targets.
    succs: FxHashMap<Block, Vec<Block>>,
    domtree: Option<DomTree>,
}

impl<'a> FuncVerifier<'a> {
    fn new(module: &'a Module, func: &'a Function, errors: &'a mut Vec<Diagnostic>) -> Self {
        FuncVerifier {
            module,
            func,
            printer: OnceCell::new(),
            errors,
            position: SecondaryMap::new(),
            laid_out: FxHashSet::default(),
            succs: FxHashMap::default(),
            domtree: None,
        }
    }

    fn printer(&self) -> &FunctionPrinter<'a> {
        self.printer.get_or_init(|| FunctionPrinter::new(self.module, self.func))
    }

    pub(crate) fn value_name(&self, v: Value) -> String {
        self.printer().value(v)
    }

    pub(crate) fn block_name(&self, b: Block) -> String {
        self.printer().block(b)
    }

    /// The printed instruction; the printer assumes a few shapes (a reduction has an
    /// operand) that only malformed IR breaks, so those are spelled out here.
    fn inst_text(&self, inst: Inst) -> String {
        match self.func.dfg.insts.get(inst) {
            None => format!("<invalid {inst}>"),
            Some(InstructionData::Reduce { args, op, .. }) if args.is_empty() => {
                format!("{op} <no operands>")
            }
            Some(_) => self.printer().inst_to_string(inst),
        }
    }

    /// Records an error at `at` with a one-line message and a short label.
    pub(crate) fn error(&mut self, at: At, message: impl Into<String>, label: impl Into<String>) {
        let dfg = &self.func.dfg;
        let function = symbol_name(&self.func.name);
        let (span, note) = match at {
            At::Func => (None, format!("in function {function}")),
            At::Block(block) => (
                Some(dfg.block_spans[block]),
                format!("in function {function}, block {}", self.block_name(block)),
            ),
            At::Inst(block, inst) => (
                Some(dfg.inst_spans[inst]),
                format!(
                    "in function {function}, block {}: `{}`",
                    self.block_name(block),
                    self.inst_text(inst)
                ),
            ),
        };
        let mut diagnostic = Diagnostic::new(message).with_label(label).with_note(note);
        if let Some(span) = span.filter(|s| !s.is_empty()) {
            diagnostic = diagnostic.with_span(span);
        }
        self.errors.push(diagnostic);
    }

    pub(crate) fn error_count(&self) -> usize {
        self.errors.len()
    }

    /// The type of `v`, if `v` exists.
    pub(crate) fn ty(&self, v: Value) -> Option<&'a Type> {
        self.func.dfg.values.get(v).map(|d| &d.ty)
    }

    fn run(mut self) {
        self.check_signature();
        if self.func.is_declaration() {
            self.check_declaration();
            return;
        }
        self.check_layout();
        self.check_entry();
        self.build_cfg();
        let blocks = self.func.layout.blocks().to_vec();
        let mut visited = HashSet::new();
        for block in blocks {
            // Invalid or duplicate blocks were reported by `check_layout`.
            if !self.func.dfg.blocks.is_valid(block) || !visited.insert(block) {
                continue;
            }
            self.check_block_params(block);
            for (index, &inst) in self.func.layout.block_insts(block).iter().enumerate() {
                if self.position[inst] != Some((block, index as u32)) {
                    continue;
                }
                let before = self.error_count();
                self.check_operands_defined(block, inst, index as u32);
                self.check_inst(block, inst);
                self.check_result(block, inst, before);
            }
        }
    }

    fn check_signature(&mut self) {
        let sig = &self.func.signature;
        for ty in sig.params.iter().chain(sig.ret.iter()) {
            if let Some(problem) = type_problem(ty) {
                self.error(
                    At::Func,
                    format!("signature type {ty} is malformed: {problem}"),
                    "bad type",
                );
            }
        }
        if self.func.param_attrs.len() > sig.params.len() {
            self.error(
                At::Func,
                format!(
                    "{} parameter attribute sets for {} parameters",
                    self.func.param_attrs.len(),
                    sig.params.len()
                ),
                "too many parameter attributes",
            );
        }
    }

    /// A declaration is defined in another object: no body, and a linkage that says so.
    fn check_declaration(&mut self) {
        let name = symbol_name(&self.func.name);
        if !self.func.dfg.insts.is_empty() {
            self.error(
                At::Func,
                format!("declaration {name} has instructions but no laid-out blocks"),
                "declarations have no body",
            );
        }
        if !matches!(self.func.linkage, Linkage::External | Linkage::ExternWeak) {
            self.error(
                At::Func,
                format!(
                    "declaration {name} has {} linkage; declarations are external or extern_weak",
                    self.func.linkage.name()
                ),
                "invalid linkage for a declaration",
            );
        }
    }

    /// Blocks exist and are laid out once; each is non-empty and ends in its only
    /// terminator; each instruction exists and is laid out once.
    fn check_layout(&mut self) {
        let func = self.func;
        if func.linkage == Linkage::ExternWeak {
            self.error(
                At::Func,
                format!("function {} has a body but extern_weak linkage", symbol_name(&func.name)),
                "extern_weak functions are defined elsewhere",
            );
        }
        for &block in func.layout.blocks() {
            if !func.dfg.blocks.is_valid(block) {
                self.error(
                    At::Func,
                    format!("laid-out block {block} does not exist in the data-flow graph"),
                    "dangling block",
                );
                continue;
            }
            if !self.laid_out.insert(block) {
                self.error(
                    At::Block(block),
                    format!("block {} is laid out twice", self.block_name(block)),
                    "duplicate block",
                );
                continue;
            }
            let insts = func.layout.block_insts(block);
            let Some(&last) = insts.last() else {
                self.error(
                    At::Block(block),
                    format!(
                        "block {} is empty; it must end in a terminator",
                        self.block_name(block)
                    ),
                    "empty block",
                );
                continue;
            };
            for (index, &inst) in insts.iter().enumerate() {
                let Some(data) = func.dfg.insts.get(inst) else {
                    self.error(
                        At::Block(block),
                        format!(
                            "instruction {inst} in block {} does not exist in the data-flow graph",
                            self.block_name(block)
                        ),
                        "dangling instruction",
                    );
                    continue;
                };
                if let Some((first, _)) = self.position[inst] {
                    let first = self.block_name(first);
                    self.error(
                        At::Inst(block, inst),
                        format!("instruction is laid out twice (first in block {first})"),
                        "duplicate instruction",
                    );
                    continue;
                }
                self.position[inst] = Some((block, index as u32));
                if data.is_terminator() && inst != last {
                    self.error(
                        At::Inst(block, inst),
                        format!(
                            "terminator `{}` in the middle of block {}",
                            data.opcode_name(),
                            self.block_name(block)
                        ),
                        "a terminator must be the last instruction of its block",
                    );
                }
            }
            let ends_in_terminator = func.dfg.insts.get(last).is_some_and(|d| d.is_terminator());
            if !ends_in_terminator && func.dfg.insts.is_valid(last) {
                self.error(
                    At::Inst(block, last),
                    format!("block {} does not end in a terminator", self.block_name(block)),
                    "last instruction is not a terminator",
                );
            }
        }
    }

    /// The entry block's parameters are the function's: same count and types.
    fn check_entry(&mut self) {
        let Some(entry) = self.func.entry_block() else {
            return;
        };
        let Some(data) = self.func.dfg.blocks.get(entry) else {
            return;
        };
        let sig = &self.func.signature;
        if data.params.len() != sig.params.len() {
            self.error(
                At::Block(entry),
                format!(
                    "entry block {} has {} parameters but the signature has {}",
                    self.block_name(entry),
                    data.params.len(),
                    sig.params.len()
                ),
                "entry parameters must match the signature",
            );
            return;
        }
        for (i, (&param, expected)) in data.params.iter().zip(&sig.params).enumerate() {
            if let Some(ty) = self.ty(param).filter(|t| *t != expected) {
                self.error(
                    At::Block(entry),
                    format!(
                        "parameter {i} ({}) of entry block has type {ty}, but the signature says {expected}",
                        self.value_name(param)
                    ),
                    format!("expected {expected}, found {ty}"),
                );
            }
        }
    }

    /// Builds successor lists over laid-out blocks, reports branches to the entry block,
    /// and computes the dominator tree.
    fn build_cfg(&mut self) {
        let Some(entry) = self.func.entry_block() else {
            return;
        };
        if !self.laid_out.contains(&entry) {
            return;
        }
        let mut succs: FxHashMap<Block, Vec<Block>> = FxHashMap::default();
        let mut entry_preds = Vec::new();
        for &block in self.func.layout.blocks() {
            if !self.laid_out.contains(&block) || succs.contains_key(&block) {
                continue;
            }
            let targets = self.terminator_targets(block);
            if targets.contains(&entry) {
                entry_preds.push(block);
            }
            let targets = targets.into_iter().filter(|t| self.laid_out.contains(t)).collect();
            succs.insert(block, targets);
        }
        for block in entry_preds {
            let term = self.func.layout.last_inst(block);
            let at = term.map_or(At::Block(block), |t| At::Inst(block, t));
            self.error(
                at,
                format!("branch to the entry block {}", self.block_name(entry)),
                "the entry block cannot have predecessors",
            );
        }
        self.domtree = Some(DomTree::compute(entry, &succs));
        self.succs = succs;
    }

    /// Targets of the block's terminator (none if its last instruction is not one).
    fn terminator_targets(&self, block: Block) -> Vec<Block> {
        let last = self.func.layout.last_inst(block);
        match last.and_then(|i| self.func.dfg.insts.get(i)) {
            Some(data) => data.branch_targets().iter().map(|c| c.block).collect(),
            None => Vec::new(),
        }
    }

    fn is_reachable(&self, block: Block) -> bool {
        self.domtree.as_ref().is_some_and(|t| t.is_reachable(block))
    }

    /// Block parameters exist, have well-formed types and record their own position.
    fn check_block_params(&mut self, block: Block) {
        let params = self.func.dfg.blocks[block].params.clone();
        for (index, param) in params.into_iter().enumerate() {
            let Some(data) = self.func.dfg.values.get(param) else {
                self.error(
                    At::Block(block),
                    format!(
                        "parameter {index} of block {} is the nonexistent value {param}",
                        self.block_name(block)
                    ),
                    "dangling value",
                );
                continue;
            };
            if data.def != ValueDef::Param(block, index as u32) {
                self.error(
                    At::Block(block),
                    format!(
                        "parameter {index} of block {} ({}) is recorded as defined elsewhere ({:?})",
                        self.block_name(block),
                        self.value_name(param),
                        data.def
                    ),
                    "inconsistent value definition",
                );
            }
            if let Some(problem) = type_problem(&data.ty) {
                self.error(
                    At::Block(block),
                    format!(
                        "parameter {} has malformed type {}: {problem}",
                        self.value_name(param),
                        data.ty
                    ),
                    "bad type",
                );
            }
        }
    }

    /// Every operand exists, is defined in this function's layout, and (in reachable
    /// blocks) its definition dominates the use.
    fn check_operands_defined(&mut self, block: Block, inst: Inst, index: u32) {
        let at = At::Inst(block, inst);
        let args = self.func.dfg.insts[inst].args();
        for (i, &v) in args.iter().enumerate() {
            // `add %y, %y` is one problem, not two.
            if args[..i].contains(&v) {
                continue;
            }
            if let Some((message, label)) = self.use_problem(block, index, v) {
                self.error(at, message, label);
            }
        }
    }

    /// What is wrong with using `v` at position `index` of `block`, if anything: (message,
    /// label). Names are only computed for problems, so that a clean run allocates none.
    fn use_problem(&self, block: Block, index: u32, v: Value) -> Option<(String, String)> {
        let Some(data) = self.func.dfg.values.get(v) else {
            let message = format!("use of undefined value {v}");
            return Some((message, "this value does not exist".to_string()));
        };
        let name = || self.value_name(v);
        let def_block = match data.def {
            ValueDef::Result(def) => {
                let Some((def_block, def_index)) = self.position.get(def).copied().flatten() else {
                    let message =
                        format!("use of {}, whose defining instruction is not laid out", name());
                    return Some((message, "defined nowhere in this function".to_string()));
                };
                if self.func.dfg.inst_result(def) != Some(v) {
                    let message = format!(
                        "use of {}, which is not the result of its recorded definition",
                        name()
                    );
                    return Some((message, "inconsistent value definition".to_string()));
                }
                if def_block == block && self.is_reachable(block) && def_index >= index {
                    let message = if def_index == index {
                        format!("instruction uses its own result {}", name())
                    } else {
                        format!(
                            "use of {} before its definition in block {}",
                            name(),
                            self.block_name(block)
                        )
                    };
                    return Some((message, format!("{} is defined later", name())));
                }
                def_block
            }
            ValueDef::Param(def_block, param_index) => {
                if !self.laid_out.contains(&def_block) {
                    let message =
                        format!("use of {}, a parameter of a block that is not laid out", name());
                    return Some((message, "defined nowhere in this function".to_string()));
                }
                let params = &self.func.dfg.blocks[def_block].params;
                if params.get(param_index as usize) != Some(&v) {
                    let message = format!(
                        "use of {}, which claims to be parameter {param_index} of block {} but is not",
                        name(),
                        self.block_name(def_block)
                    );
                    return Some((message, "inconsistent value definition".to_string()));
                }
                def_block
            }
        };
        let dominated = self
            .domtree
            .as_ref()
            .is_none_or(|t| !t.is_reachable(block) || t.dominates(def_block, block));
        if dominated {
            return None;
        }
        let message = format!(
            "{} (defined in block {}) does not dominate its use in block {}",
            name(),
            self.block_name(def_block),
            self.block_name(block)
        );
        Some((message, format!("{} is not available here", name())))
    }

    /// The stored result matches what the instruction computes: present iff it has one,
    /// of type `DataFlowGraph::result_type`, recorded as defined here. Skipped when the
    /// instruction had other errors, whose cause the result type would only echo.
    fn check_result(&mut self, block: Block, inst: Inst, errors_before: usize) {
        let at = At::Inst(block, inst);
        let data = &self.func.dfg.insts[inst];
        let result = self.func.dfg.inst_result(inst);
        if let Some(r) = result {
            match self.func.dfg.values.get(r) {
                None => {
                    self.error(at, format!("result {r} does not exist"), "dangling result");
                    return;
                }
                Some(vd) if vd.def != ValueDef::Result(inst) => {
                    let name = self.value_name(r);
                    self.error(
                        at,
                        format!("result {name} is recorded as defined elsewhere"),
                        "inconsistent value definition",
                    );
                    return;
                }
                Some(vd) => {
                    if let Some(problem) = type_problem(&vd.ty) {
                        let message = format!("result type {} is malformed: {problem}", vd.ty);
                        self.error(at, message, "bad type");
                        return;
                    }
                }
            }
        }
        if self.error_count() > errors_before {
            return;
        }
        let never = matches!(
            data,
            InstructionData::Store { .. }
                | InstructionData::MemCopy { .. }
                | InstructionData::MemSet { .. }
                | InstructionData::Fence { .. }
        ) || data.is_terminator();
        let expected = if never { None } else { self.module.result_type(self.func, data) };
        let opcode = data.opcode_name();
        match (result, expected) {
            (Some(r), None) if never || insts::returns_void(self.module, data) => {
                let name = self.value_name(r);
                self.error(
                    at,
                    format!("`{opcode}` has result {name} but produces no value"),
                    "no result expected",
                );
            }
            (None, Some(ty)) => {
                self.error(
                    at,
                    format!("`{opcode}` produces a {ty} but has no result value"),
                    "missing result",
                );
            }
            (Some(r), Some(expected)) => {
                if let Some(ty) = self.ty(r).filter(|t| **t != expected) {
                    let name = self.value_name(r);
                    self.error(
                        at,
                        format!("result {name} of `{opcode}` has type {ty}, expected {expected}"),
                        format!("expected {expected}, found {ty}"),
                    );
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
