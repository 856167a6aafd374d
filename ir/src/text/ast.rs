//! The syntax tree the grammar produces: lines of atoms with byte spans. The grammar only
//! knows the line structure (module items, function bodies, block labels, instructions)
//! and bracket nesting; what the atoms of a line mean is decided by the lowering, which
//! can then say precisely what it expected.

use lalrpop_util::ErrorRecovery;

use crate::dfg::TextSpan;
use crate::text::lexer::{LexError, Token};

/// A syntax error the grammar recovered from (at the end of its line).
pub type Recovered = ErrorRecovery<usize, Token, LexError>;

#[derive(Debug)]
pub struct Module {
    pub items: Vec<Item>,
}

#[derive(Debug)]
pub enum Item {
    /// `target ...`, `global ...`, `declare ...`: a keyword and the rest of its line.
    Line(Line),
    Func(FuncDef),
    Error(Box<Recovered>),
}

#[derive(Debug)]
pub struct Line {
    pub keyword: String,
    pub keyword_span: TextSpan,
    pub atoms: Vec<Atom>,
    pub span: TextSpan,
}

#[derive(Debug)]
pub struct FuncDef {
    /// Everything between `func` and the `{` that opens the body.
    pub header: Vec<Atom>,
    pub header_span: TextSpan,
    pub blocks: Vec<BlockDef>,
    /// The closing `}`.
    pub close_span: TextSpan,
}

#[derive(Debug)]
pub struct BlockDef {
    pub name: String,
    pub name_span: TextSpan,
    /// The atoms between the parentheses of `^name(...)`, when written.
    pub params: Option<Group>,
    /// The label line, `^name(...):`.
    pub span: TextSpan,
    pub insts: Vec<InstLine>,
}

#[derive(Debug)]
pub enum InstLine {
    Inst(Inst),
    Error(Box<Recovered>),
}

/// `%result = opcode atoms...`; a debug location `!"file":line:col` is among the atoms.
#[derive(Debug)]
pub struct Inst {
    pub result: Option<(String, TextSpan)>,
    pub opcode: String,
    pub opcode_span: TextSpan,
    pub atoms: Vec<Atom>,
    pub span: TextSpan,
}

#[derive(Clone, Debug)]
pub struct Atom {
    pub kind: AtomKind,
    pub span: TextSpan,
}

#[derive(Clone, Debug)]
pub enum AtomKind {
    Word(String),
    Value(String),
    Block(String),
    Symbol(String),
    /// Number literals keep their text: their meaning depends on the type they are read as.
    Int(String),
    Float(String),
    Hex(String),
    Str(Vec<u8>),
    Bytes(Vec<u8>),
    Punct(Punct),
    Group(Group),
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Punct {
    Eq,
    Colon,
    Comma,
    Plus,
    Minus,
    Arrow,
    Ellipsis,
    Bang,
}

impl Punct {
    pub fn text(self) -> &'static str {
        match self {
            Punct::Eq => "=",
            Punct::Colon => ":",
            Punct::Comma => ",",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Arrow => "->",
            Punct::Ellipsis => "...",
            Punct::Bang => "!",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Delim {
    Paren,
    Bracket,
    Brace,
    Angle,
}

impl Delim {
    pub fn open(self) -> &'static str {
        match self {
            Delim::Paren => "(",
            Delim::Bracket => "[",
            Delim::Brace => "{",
            Delim::Angle => "<",
        }
    }
}

/// A bracketed run of atoms; `span` covers the brackets.
#[derive(Clone, Debug)]
pub struct Group {
    pub delim: Delim,
    pub atoms: Vec<Atom>,
    pub span: TextSpan,
}

impl Atom {
    pub fn new(kind: AtomKind, start: usize, end: usize) -> Atom {
        Atom { kind, span: TextSpan::new(start, end) }
    }

    pub fn punct(punct: Punct, start: usize, end: usize) -> Atom {
        Atom::new(AtomKind::Punct(punct), start, end)
    }

    pub fn group(delim: Delim, atoms: Vec<Atom>, start: usize, end: usize) -> Atom {
        let span = TextSpan::new(start, end);
        Atom { kind: AtomKind::Group(Group { delim, atoms, span }), span }
    }

    pub fn is_punct(&self, punct: Punct) -> bool {
        matches!(self.kind, AtomKind::Punct(p) if p == punct)
    }

    pub fn is_word(&self, word: &str) -> bool {
        matches!(&self.kind, AtomKind::Word(w) if w == word)
    }
}
