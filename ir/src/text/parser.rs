//! `parse_module`: text -> `Module`. Runs the grammar over the token stream, turns syntax
//! and lexical errors into diagnostics, then lowers the tree in three passes: symbols
//! (globals and function signatures, in text order, so that names may be used before
//! their definition), global initializers, function bodies.
//!
//! Within a body: blocks and their parameters first, then every instruction with its
//! result (typed from its own line), then operand names are resolved and the types the
//! text writes are checked against the operands'. Dominance, arity and terminators are
//! the verifier's business.

use std::collections::{HashMap, HashSet};

use lalrpop_util::ParseError;

use crate::constant::Symbol;
use crate::dfg::TextSpan;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::entities::{Block, FuncId, GlobalId, Value};
use crate::function::{Function, Linkage, Signature};
use crate::instructions::InstructionData;
use crate::module::{Global, Module, StartupFunction, StartupKind};
use crate::text::ast::{self, Atom, AtomKind, Delim, InstLine, Item, Punct};
use crate::text::cursor::{at_name, int_literal, sigil_name, Cursor, PResult, SymbolTable};
use crate::text::grammar::ModuleParser;
use crate::text::inst::{close_names, func_attrs, CaseLiteral, FnCtx};
use crate::text::lexer::{LexError, Token, Tokens};
use crate::types::Type;

use cranelift_entity::EntityRef;

/// Parses a module from its text form. On failure, returns every error found (at least
/// one), each with the span it is about.
pub fn parse_module(source: &str) -> Result<Module, Diagnostics> {
    let mut tokens = Tokens::new(source);
    let parsed = ModuleParser::new().parse(&mut tokens);
    let mut diags: Vec<Diagnostic> =
        tokens.take_errors().iter().map(|e| lex_diagnostic(source, e)).collect();
    let tree = match parsed {
        Ok(tree) => Some(tree),
        Err(error) => {
            diags.extend(syntax_diagnostic(source, error));
            None
        }
    };
    if let Some(tree) = &tree {
        diags.extend(recovered_errors(source, tree));
    }
    if !diags.is_empty() {
        diags.sort_by_key(|d| d.span.map(|s| s.start));
        return Err(Diagnostics(diags));
    }
    match tree {
        Some(tree) => Lowerer::new(source).module(&tree),
        // A failed parse always produced a diagnostic; this only guards the invariant.
        None => Err(Diagnostics(vec![Diagnostic::new("syntax error")])),
    }
}

fn lex_diagnostic(source: &str, error: &LexError) -> Diagnostic {
    Diagnostic::new(error.message(source))
        .with_span(TextSpan::new(error.span.start, error.span.end))
        .with_label(error.label())
}

/// The syntax errors the grammar recovered from. A run of broken top-level lines (the
/// remains of a function whose header broke) is reported once.
fn recovered_errors(source: &str, tree: &ast::Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut previous_broken = false;
    for item in &tree.items {
        match item {
            Item::Error(recovered) => {
                if !previous_broken || starts_item(source, &recovered.error) {
                    out.extend(syntax_diagnostic(source, recovered.error.clone()));
                }
                previous_broken = true;
            }
            Item::Func(def) => {
                previous_broken = false;
                for block in &def.blocks {
                    for line in &block.insts {
                        if let InstLine::Error(recovered) = line {
                            out.extend(syntax_diagnostic(source, recovered.error.clone()));
                        }
                    }
                }
            }
            // Only a line that starts a new item ends the run: the body lines of a broken
            // function (`ret %x`) also parse as lines.
            Item::Line(line) => {
                if ITEM_KEYWORDS.contains(&line.keyword.as_str()) {
                    previous_broken = false;
                }
            }
        }
    }
    out
}

/// The text of the line holding `offset`, from its first non-blank character on.
fn line_of_offset(source: &str, offset: usize) -> &str {
    let before = source.get(..offset.min(source.len())).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    source.get(line_start..).unwrap_or("").trim_start()
}

/// Whether the line of a syntax error starts with an item keyword: a new item, whose
/// error is worth reporting even right after another broken one.
fn starts_item(source: &str, error: &ParseError<usize, Token, LexError>) -> bool {
    let at = match error {
        ParseError::UnrecognizedToken { token: (start, ..), .. }
        | ParseError::ExtraToken { token: (start, ..) } => *start,
        ParseError::InvalidToken { location } | ParseError::UnrecognizedEof { location, .. } => {
            *location
        }
        ParseError::User { error } => error.span.start,
    };
    let line = line_of_offset(source, at);
    ITEM_KEYWORDS
        .iter()
        .any(|k| line.strip_prefix(k).is_some_and(|rest| rest.starts_with([' ', '\t', '@'])))
}

fn syntax_diagnostic(
    source: &str,
    error: ParseError<usize, Token, LexError>,
) -> Option<Diagnostic> {
    let end_of_file = |expected: &[String]| {
        // Just after the last line's text rather than on the empty line that follows it.
        let end = source.strip_suffix('\n').unwrap_or(source).len();
        Diagnostic::new("unexpected end of file")
            .with_span(TextSpan::new(end, end))
            .with_label(format!("expected {}", describe_expected(expected)))
    };
    Some(match error {
        ParseError::InvalidToken { location } => Diagnostic::new("invalid token")
            .with_span(TextSpan::new(location, location + 1))
            .with_label("not part of any token"),
        ParseError::UnrecognizedEof { expected, .. } => end_of_file(&expected),
        ParseError::UnrecognizedToken { token: (_, Token::Invalid, _), .. } => return None,
        ParseError::UnrecognizedToken { token: (start, Token::Newline, _), expected }
            if start >= source.len() =>
        {
            end_of_file(&expected)
        }
        ParseError::UnrecognizedToken { token: (start, token, end), expected } => {
            let header =
                token == Token::Newline && line_of_offset(source, start).starts_with("func");
            let expected = describe_expected(&expected);
            let error = Diagnostic::new(format!("unexpected {token}, expected {expected}"))
                .with_span(TextSpan::new(start, end.max(start + 1)))
                .with_label(format!("expected {expected}"));
            if header {
                error.with_note("a function header ends with the `{` that opens its body")
            } else {
                error
            }
        }
        ParseError::ExtraToken { token: (start, token, end) } => {
            Diagnostic::new(format!("unexpected {token}"))
                .with_span(TextSpan::new(start, end))
                .with_label("nothing more was expected")
        }
        ParseError::User { error } => lex_diagnostic(source, &error),
    })
}

/// Terminals that can start an atom: when all are expected, say "an operand".
/// The words that start a top-level item.
const ITEM_KEYWORDS: [&str; 6] =
    ["target", "global", "declare", "func", "constructor", "destructor"];

const ATOM_STARTS: &[&str] = &[
    "word", "%value", "^block", "@symbol", "integer", "float", "hex", "string", "c-string", "=",
    ":", ",", "+", "-", "->", "...", "!", "(", "[", "{", "<",
];

fn describe_expected(expected: &[String]) -> String {
    let names: Vec<&str> = expected.iter().map(|e| e.trim_matches('"')).collect();
    let any_atom = ATOM_STARTS.iter().all(|a| names.contains(a));
    let mut parts: Vec<String> = Vec::new();
    if any_atom {
        parts.push("an operand".to_string());
    }
    for name in names {
        if any_atom && ATOM_STARTS.contains(&name) {
            continue;
        }
        parts.push(match name {
            "end of line" => "end of line".to_string(),
            // Outside operands, a word starts a line: an opcode or an item keyword.
            "word" => "an opcode or keyword".to_string(),
            "func" => "`func`".to_string(),
            "%value" => "a %value".to_string(),
            "^block" => "a ^block label".to_string(),
            "@symbol" => "an @symbol".to_string(),
            "integer" => "an integer".to_string(),
            "float" => "a float".to_string(),
            "hex" => "a hex number".to_string(),
            "string" => "a string".to_string(),
            "c-string" => "a c\"...\" string".to_string(),
            other => format!("`{other}`"),
        });
    }
    match parts.len() {
        0 => "nothing".to_string(),
        1 => parts.remove(0),
        n => format!("{} or {}", parts[..n - 1].join(", "), parts[n - 1]),
    }
}

/// Line numbers of byte offsets, for "first defined on line N" notes.
struct LineIndex {
    newlines: Vec<u32>,
}

impl LineIndex {
    fn new(source: &str) -> LineIndex {
        let newlines = source.bytes().enumerate().filter(|(_, b)| *b == b'\n');
        LineIndex { newlines: newlines.map(|(i, _)| i as u32).collect() }
    }

    /// 1-based line of `offset`.
    fn line(&self, offset: u32) -> usize {
        self.newlines.partition_point(|n| *n < offset) + 1
    }
}

/// A global whose initializer waits for the symbol table.
struct PendingGlobal<'t> {
    id: GlobalId,
    init: &'t [Atom],
    end: TextSpan,
}

/// A function definition whose body waits for the symbol table.
struct PendingBody<'t> {
    id: FuncId,
    def: &'t ast::FuncDef,
    params: Vec<(&'t str, TextSpan)>,
}

struct Lowerer<'s> {
    src: &'s str,
    module: Module,
    symbols: SymbolTable,
    /// Where each symbol was defined, for duplicate notes.
    defined_at: HashMap<String, TextSpan>,
    /// Functions whose header failed: their calls are not checked further.
    broken: HashSet<FuncId>,
    lines: LineIndex,
    diags: Vec<Diagnostic>,
}

impl<'s> Lowerer<'s> {
    fn new(src: &'s str) -> Lowerer<'s> {
        Lowerer {
            src,
            module: Module::new(),
            symbols: SymbolTable::default(),
            defined_at: HashMap::new(),
            broken: HashSet::new(),
            lines: LineIndex::new(src),
            diags: Vec::new(),
        }
    }

    fn module(mut self, tree: &'s ast::Module) -> Result<Module, Diagnostics> {
        let mut globals = Vec::new();
        let mut bodies = Vec::new();
        let mut startup = Vec::new();
        let mut target_span: Option<TextSpan> = None;
        for item in &tree.items {
            let result = match item {
                Item::Line(line) => match line.keyword.as_str() {
                    "target" => self.target(line, &mut target_span),
                    "global" => self.global(line).map(|g| globals.extend(g)),
                    "declare" => self.function(&line.atoms, line.span, None).map(|_| ()),
                    "constructor" | "destructor" => {
                        startup.push(line);
                        Ok(())
                    }
                    other => {
                        let mut error = Diagnostic::new(format!("unknown keyword `{other}`"))
                            .with_span(line.keyword_span)
                            .with_label(
                                "expected `target`, `global`, `declare`, `func`, `constructor` \
                                 or `destructor`",
                            );
                        let close = close_names(other, ITEM_KEYWORDS);
                        if !close.is_empty() {
                            error = error.with_note(format!("did you mean {}?", close.join(", ")));
                        }
                        Err(error)
                    }
                },
                Item::Func(def) => {
                    self.function(&def.header, def.header_span, Some(def)).map(|b| bodies.extend(b))
                }
                Item::Error(_) => Ok(()),
            };
            if let Err(error) = result {
                self.diags.push(error);
            }
        }
        for pending in globals {
            if let Err(error) = self.initializer(&pending) {
                self.diags.push(error);
            }
        }
        for line in startup {
            if let Err(error) = self.startup_function(line) {
                self.diags.push(error);
            }
        }
        for body in bodies {
            self.body(body);
        }
        if self.diags.is_empty() {
            Ok(self.module)
        } else {
            self.diags.sort_by_key(|d| d.span.map(|s| s.start));
            Err(Diagnostics(self.diags))
        }
    }

    fn line_cursor(&self, atoms: &'s [Atom], span: TextSpan) -> Cursor<'s> {
        Cursor::new(self.src, atoms, TextSpan { start: span.end, end: span.end })
    }

    fn target(&mut self, line: &ast::Line, seen: &mut Option<TextSpan>) -> PResult<()> {
        let mut c = Cursor::new(
            self.src,
            &line.atoms,
            TextSpan { start: line.span.end, end: line.span.end },
        );
        let triple = match c.next() {
            Some(Atom { kind: AtomKind::Str(bytes), span }) => String::from_utf8(bytes.clone())
                .map_err(|_| {
                    Diagnostic::new("target triple is not valid UTF-8").with_span(*span)
                })?,
            _ => {
                let c = Cursor::new(
                    self.src,
                    &line.atoms,
                    TextSpan { start: line.span.end, end: line.span.end },
                );
                return Err(c.error("a quoted target triple"));
            }
        };
        c.finish("the target triple")?;
        if let Some(first) = seen {
            return Err(Diagnostic::new("duplicate `target`")
                .with_span(line.span)
                .with_label("a module has one target")
                .with_note(format!("first given on line {}", self.lines.line(first.start))));
        }
        *seen = Some(line.span);
        self.module.target = Some(triple);
        Ok(())
    }

    /// Registers a symbol name, or reports it as a duplicate.
    fn define(&mut self, name: &str, span: TextSpan, symbol: Symbol) -> PResult<()> {
        if let Some(first) = self.defined_at.get(name) {
            return Err(Diagnostic::new(format!("duplicate symbol {}", at_name(name)))
                .with_span(span)
                .with_label("defined again here")
                .with_note(format!("first defined on line {}", self.lines.line(first.start))));
        }
        self.defined_at.insert(name.to_string(), span);
        self.symbols.names.insert(name.to_string(), symbol);
        Ok(())
    }

    /// `global [linkage] [const] @name: ty[, addrspace(N)], align N [= constant]`.
    fn global(&mut self, line: &'s ast::Line) -> PResult<Option<PendingGlobal<'s>>> {
        let mut c = self.line_cursor(&line.atoms, line.span);
        let linkage = linkage(&mut c);
        let constant = c.eat_word("const").is_some();
        let (name, name_span) = c.symbol()?;
        let id = self.module.add_global(Global {
            name: name.to_string(),
            ty: Type::I8,
            linkage,
            constant,
            align: 1,
            addr_space: 0,
            init: None,
        });
        self.define(name, name_span, Symbol::Global(id))?;
        c.expect_punct(Punct::Colon)?;
        let ty = c.ty()?;
        c.comma()?;
        let mut addr_space = 0;
        if c.eat_word("addrspace").is_some() {
            addr_space = c.addrspace_number()?;
            c.comma()?;
        }
        let align = c.align()?;
        let global = &mut self.module.globals[id];
        global.ty = ty;
        global.addr_space = addr_space;
        global.align = align;
        if c.eat_punct(Punct::Eq).is_none() {
            c.finish("the global's alignment")?;
            return Ok(None);
        }
        if c.at_end() {
            return Err(c.error("an initializer"));
        }
        let end = TextSpan { start: line.span.end, end: line.span.end };
        Ok(Some(PendingGlobal { id, init: c.rest(), end }))
    }

    /// `constructor PRIORITY @f` / `destructor PRIORITY @f` (after every function is
    /// known, so the line may come before the function).
    fn startup_function(&mut self, line: &'s ast::Line) -> PResult<()> {
        let kind = match line.keyword.as_str() {
            "constructor" => StartupKind::Constructor,
            _ => StartupKind::Destructor,
        };
        let mut c = self.line_cursor(&line.atoms, line.span);
        let priority = c.u32("a priority")?;
        let (name, span) = c.symbol()?;
        let why = format!("a {} must be a function", kind.keyword());
        let function = self.symbols.function(name, span, &why)?;
        c.finish("the function")?;
        self.module.startup.push(StartupFunction { kind, priority, function });
        Ok(())
    }

    fn initializer(&mut self, pending: &PendingGlobal<'_>) -> PResult<()> {
        let mut c = Cursor::new(self.src, pending.init, pending.end);
        let ty = self.module.globals[pending.id].ty.clone();
        let init = c.constant(&ty, &self.symbols)?;
        c.finish("the initializer")?;
        self.module.globals[pending.id].init = Some(init);
        Ok(())
    }

    /// A `declare` line or a `func` header: `[linkage] @name(params) [-> ty] attrs`.
    fn function(
        &mut self,
        atoms: &'s [Atom],
        span: TextSpan,
        def: Option<&'s ast::FuncDef>,
    ) -> PResult<Option<PendingBody<'s>>> {
        let mut c = self.line_cursor(atoms, span);
        let linkage = linkage(&mut c);
        let (name, name_span) = c.symbol()?;
        let id = self.module.add_function(Function::new(name, Signature::default()));
        self.define(name, name_span, Symbol::Func(id))?;
        self.broken.insert(id);
        let group = c.expect_group(Delim::Paren, "the parameters")?;
        let (params, varargs) = c.params(group, def.is_some(), true)?;
        let ret = match c.eat_punct(Punct::Arrow) {
            Some(_) => Some(c.ty()?),
            None => None,
        };
        let attrs = func_attrs(&mut c)?;
        c.finish("the function's attributes")?;
        let signature =
            Signature { params: params.iter().map(|p| p.ty.clone()).collect(), ret, varargs };
        let func = &mut self.module.functions[id];
        func.signature = signature.clone();
        func.linkage = linkage;
        func.attrs = attrs;
        func.param_attrs = params.iter().map(|p| p.attrs).collect();
        self.symbols.signatures.insert(id, signature);
        self.broken.remove(&id);
        Ok(def.map(|def| PendingBody {
            id,
            def,
            params: params.iter().filter_map(|p| p.name).collect(),
        }))
    }

    fn body(&mut self, pending: PendingBody<'s>) {
        let mut func = std::mem::take(&mut self.module.functions[pending.id]);
        let diags = BodyLowerer::new(self, &mut func).run(&pending);
        self.module.functions[pending.id] = func;
        self.diags.extend(diags);
    }
}

fn linkage(c: &mut Cursor<'_>) -> Linkage {
    match c.peek_word().and_then(Linkage::from_name) {
        Some(linkage) => {
            c.next();
            linkage
        }
        None => Linkage::External,
    }
}

/// Lowers one function body into `func` (whose signature is already set).
struct BodyLowerer<'l, 's> {
    src: &'s str,
    symbols: &'l SymbolTable,
    broken: &'l HashSet<FuncId>,
    lines: &'l LineIndex,
    func: &'l mut Function,
    values: HashMap<String, (Value, TextSpan)>,
    /// Result names of lines that failed to lower.
    failed: HashSet<String>,
    diags: Vec<Diagnostic>,
}

impl<'l, 's> BodyLowerer<'l, 's> {
    fn new(lowerer: &'l Lowerer<'s>, func: &'l mut Function) -> BodyLowerer<'l, 's> {
        BodyLowerer {
            src: lowerer.src,
            symbols: &lowerer.symbols,
            broken: &lowerer.broken,
            lines: &lowerer.lines,
            func,
            values: HashMap::new(),
            failed: HashSet::new(),
            diags: Vec::new(),
        }
    }

    fn name_value(&mut self, value: Value, name: &str, span: TextSpan) {
        if let Some((_, first)) = self.values.get(name) {
            self.diags.push(
                Diagnostic::new(format!("duplicate value name {}", sigil_name('%', name)))
                    .with_span(span)
                    .with_label("defined again here")
                    .with_note(format!("first defined on line {}", self.lines.line(first.start))),
            );
            return;
        }
        self.values.insert(name.to_string(), (value, span));
        self.func.dfg.set_value_name(value, name);
    }

    fn run(mut self, pending: &PendingBody<'s>) -> Vec<Diagnostic> {
        let def = pending.def;
        let blocks = self.blocks(pending);
        let mut ctx = FnCtx {
            src: self.src,
            symbols: self.symbols,
            blocks: &blocks,
            refs: Vec::new(),
            checks: Vec::new(),
        };
        let mut switches = Vec::new();
        let mut created = Vec::new();
        for (block_def, &block) in def.blocks.iter().zip(self.func.layout.blocks().to_vec().iter())
        {
            for line in &block_def.insts {
                let InstLine::Inst(inst) = line else { continue };
                // A line that fails defines nothing; its result name is remembered so that
                // its uses are not reported as undefined too.
                let fail = |this: &mut Self, error: Option<Diagnostic>| {
                    this.diags.extend(error);
                    if let Some((name, _)) = &inst.result {
                        this.failed.insert(name.clone());
                    }
                };
                let lowered = match ctx.lower(inst) {
                    Ok(lowered) => lowered,
                    Err(error) => {
                        fail(&mut self, Some(error));
                        continue;
                    }
                };
                if let InstructionData::Call { callee, .. } = &lowered.data {
                    if self.broken.contains(callee) {
                        fail(&mut self, None);
                        continue;
                    }
                }
                if let Err(error) = check_result(inst, lowered.result_ty.as_ref()) {
                    fail(&mut self, Some(error));
                    continue;
                }
                let dfg = &mut self.func.dfg;
                let id = dfg.make_inst(lowered.data, lowered.result_ty);
                dfg.inst_spans[id] = inst.span;
                dfg.debug_locs[id] = lowered.loc;
                self.func.layout.append_inst(id, block);
                if let (Some((name, span)), Some(result)) = (&inst.result, dfg.inst_result(id)) {
                    self.name_value(result, name, *span);
                }
                if !lowered.cases.is_empty() {
                    switches.push((id, lowered.cases));
                }
                created.push(id);
            }
        }
        let refs = std::mem::take(&mut ctx.refs);
        let checks = std::mem::take(&mut ctx.checks);
        let resolved: Vec<Option<Value>> = refs
            .iter()
            .map(|(name, span)| match self.values.get(name.as_str()) {
                Some((value, _)) => Some(*value),
                None if self.failed.contains(name.as_str()) => None,
                None => {
                    self.diags.push(
                        Diagnostic::new(format!(
                            "use of undefined value {}",
                            sigil_name('%', name)
                        ))
                        .with_span(*span)
                        .with_label("no parameter or instruction result has this name"),
                    );
                    None
                }
            })
            .collect();
        for id in created {
            self.func.dfg.insts[id]
                .map_args(|v| resolved.get(v.index()).copied().flatten().unwrap_or(v));
        }
        for (index, ty) in checks {
            let (Some(Some(value)), Some((name, span))) = (resolved.get(index), refs.get(index))
            else {
                continue;
            };
            let actual = self.func.dfg.value_type(*value);
            if *actual != ty {
                self.diags.push(
                    Diagnostic::new(format!(
                        "type mismatch: `{}` is {actual} but the instruction says {ty}",
                        sigil_name('%', name)
                    ))
                    .with_span(*span)
                    .with_label(format!("this is {actual}")),
                );
            }
        }
        for (id, literals) in switches {
            self.switch_cases(id, &literals);
        }
        self.diags
    }

    /// Creates the blocks (with their parameters) in text order.
    fn blocks(&mut self, pending: &PendingBody<'s>) -> HashMap<String, Block> {
        let def = pending.def;
        let mut blocks: HashMap<String, Block> = HashMap::new();
        let mut block_spans: HashMap<&str, TextSpan> = HashMap::new();
        if def.blocks.is_empty() {
            self.diags.push(
                Diagnostic::new(format!("function {} has no blocks", at_name(&self.func.name)))
                    .with_span(def.close_span)
                    .with_label("expected a block label such as `^entry:`")
                    .with_note("a function without a body is written with `declare`"),
            );
        }
        for (index, block_def) in def.blocks.iter().enumerate() {
            let dfg = &mut self.func.dfg;
            let block = dfg.make_block();
            self.func.layout.append_block(block);
            dfg.block_spans[block] = block_def.span;
            dfg.set_block_name(block, &block_def.name);
            match block_spans.get(block_def.name.as_str()) {
                Some(first) => self.diags.push(
                    Diagnostic::new(format!(
                        "duplicate block name {}",
                        sigil_name('^', &block_def.name)
                    ))
                    .with_span(block_def.name_span)
                    .with_label("defined again here")
                    .with_note(format!("first defined on line {}", self.lines.line(first.start))),
                ),
                None => {
                    block_spans.insert(&block_def.name, block_def.name_span);
                    blocks.insert(block_def.name.clone(), block);
                }
            }
            if index == 0 {
                if let Some(group) = &block_def.params {
                    self.diags.push(
                        Diagnostic::new("the entry block cannot have written parameters")
                            .with_span(group.span)
                            .with_label("write these in the function header")
                            .with_note("the entry block's parameters are the function's"),
                    );
                }
                let types = self.func.signature.params.clone();
                for (i, ty) in types.into_iter().enumerate() {
                    let value = self.func.dfg.append_block_param(block, ty);
                    if let Some((name, span)) = pending.params.get(i) {
                        self.name_value(value, name, *span);
                    }
                }
            } else if let Some(group) = &block_def.params {
                let c = Cursor::new(self.src, &[], group.span);
                match c.params(group, true, false) {
                    Ok((params, false)) => {
                        for param in params {
                            let value = self.func.dfg.append_block_param(block, param.ty);
                            if let Some((name, span)) = param.name {
                                self.name_value(value, name, span);
                            }
                        }
                    }
                    Ok((_, true)) => self.diags.push(
                        Diagnostic::new("a block cannot take variable arguments")
                            .with_span(group.span)
                            .with_label("remove `...`"),
                    ),
                    Err(error) => {
                        self.diags.push(error);
                        for atom in &group.atoms {
                            if let AtomKind::Value(name) = &atom.kind {
                                self.failed.insert(name.clone());
                            }
                        }
                    }
                }
            }
        }
        blocks
    }

    /// Reads the case literals of a switch against the type of the switched value.
    fn switch_cases(&mut self, id: crate::entities::Inst, literals: &[CaseLiteral]) {
        let dfg = &mut self.func.dfg;
        let InstructionData::Switch { value, cases, .. } = &mut dfg.insts[id] else {
            return;
        };
        let Some(ty) = dfg.values.get(*value).map(|d| d.ty.clone()) else {
            return;
        };
        let Some(bits) = ty.int_bits() else {
            let span = literals.first().map(|l| l.span).unwrap_or_default();
            self.diags.push(
                Diagnostic::new(format!("switch on a value of type {ty}"))
                    .with_span(span)
                    .with_label("case values need an integer type"),
            );
            return;
        };
        for ((case, _), literal) in cases.iter_mut().zip(literals) {
            let value = match literal.text.as_str() {
                "true" | "false" if bits == 1 => Ok(u128::from(literal.text == "true")),
                text if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                    int_literal(text, bits, literal.span)
                }
                text => Err(Diagnostic::new(format!("`{text}` is not a case value of type {ty}"))
                    .with_span(literal.span)
                    .with_label("expected an integer")),
            };
            match value {
                Ok(value) => *case = value,
                Err(error) => self.diags.push(error),
            }
        }
    }
}

/// Whether the line names a result exactly when the instruction has one. Results of
/// calls and atomics may go unnamed: they are often ignored.
fn check_result(inst: &ast::Inst, result_ty: Option<&Type>) -> PResult<()> {
    let opcode = inst.opcode.as_str();
    match (&inst.result, result_ty) {
        (Some((name, span)), None) => {
            let what = if opcode == "call" || opcode == "call_indirect" {
                "the callee returns nothing".to_string()
            } else {
                format!("`{opcode}` produces no value")
            };
            Err(Diagnostic::new(format!(
                "{} cannot be defined here: {what}",
                sigil_name('%', name)
            ))
            .with_span(*span)
            .with_label(format!("remove `{} =`", sigil_name('%', name))))
        }
        (None, Some(ty))
            if !matches!(opcode, "call" | "call_indirect" | "atomicrmw" | "cmpxchg") =>
        {
            Err(Diagnostic::new(format!("the {ty} result of `{opcode}` needs a name"))
                .with_span(inst.opcode_span)
                .with_label(format!("write `%name = {opcode} ...`")))
        }
        _ => Ok(()),
    }
}
