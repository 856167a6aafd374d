//! The lexer of the text form (logos). Newlines are tokens because the format is
//! line-oriented (one instruction per line); `Tokens` collapses runs of them, and turns
//! lexical errors into an `Invalid` token so that the grammar recovers at the next line
//! while the error itself, with its span, is kept aside.

use std::fmt;
use std::ops::Range;

use logos::Logos;

/// What went wrong while cutting the text into tokens, and where (byte range).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct LexError {
    pub kind: LexErrorKind,
    pub span: Range<usize>,
}

#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub enum LexErrorKind {
    /// A character that starts no token.
    #[default]
    UnexpectedChar,
    /// A `"` without its closing `"` on the same line.
    UnterminatedString,
    /// A `\` not followed by two hex digits.
    BadEscape,
    /// A quoted `%`/`^`/`@` name whose bytes are not UTF-8.
    NameNotUtf8,
    /// Brackets nested deeper than `MAX_DEPTH` on one line.
    TooDeep,
}

/// The deepest bracket nesting accepted on one line. The lowering recurses on nesting, so
/// this bounds its stack use whatever the input.
pub const MAX_DEPTH: usize = 256;

impl LexError {
    fn from_lexer(lex: &mut logos::Lexer<'_, Token>) -> LexError {
        LexError { kind: LexErrorKind::UnexpectedChar, span: lex.span() }
    }

    /// The one-line message of the diagnostic; `source` provides the offending text.
    pub fn message(&self, source: &str) -> String {
        match self.kind {
            LexErrorKind::UnexpectedChar => {
                let text = source.get(self.span.clone()).unwrap_or("");
                let shown: String = text.chars().take(20).collect();
                let more = if shown.len() < text.len() { "..." } else { "" };
                let plural = if text.chars().nth(1).is_some() { "s" } else { "" };
                format!("unexpected character{plural} `{}{more}`", shown.escape_debug())
            }
            LexErrorKind::UnterminatedString => "unterminated string".to_string(),
            LexErrorKind::BadEscape => {
                "invalid escape in string: expected `\\` and two hex digits".to_string()
            }
            LexErrorKind::NameNotUtf8 => "quoted name is not valid UTF-8".to_string(),
            LexErrorKind::TooDeep => format!("brackets nested more than {MAX_DEPTH} deep"),
        }
    }

    /// The short text attached to the span.
    pub fn label(&self) -> &'static str {
        match self.kind {
            LexErrorKind::UnexpectedChar => "not part of any token",
            LexErrorKind::UnterminatedString => "this string has no closing `\"` on its line",
            LexErrorKind::BadEscape => "bad escape",
            LexErrorKind::NameNotUtf8 => "names must decode to UTF-8",
            LexErrorKind::TooDeep => "one bracket too many",
        }
    }
}

/// Tokens. Keywords and opcodes are `Word`s, resolved by the lowering, so that an unknown
/// opcode is reported with the opcode's span rather than as a syntax error.
#[derive(Logos, Clone, PartialEq, Debug)]
#[logos(error(LexError, LexError::from_lexer))]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip(r";[^\n]*", allow_greedy = true))]
pub enum Token {
    #[token("\n")]
    Newline,
    /// The only keyword with its own token: a function body spans several lines, which
    /// the grammar must know about.
    #[token("func", priority = 10)]
    Func,
    #[regex(r"[A-Za-z_][A-Za-z0-9_.]*", |lex| lex.slice().to_owned())]
    Word(String),
    #[regex(r"%[A-Za-z0-9_.$-]+", |lex| plain_name(lex.slice()))]
    #[token("%\"", quoted_name)]
    Value(String),
    #[regex(r"\^[A-Za-z0-9_.$-]+", |lex| plain_name(lex.slice()))]
    #[token("^\"", quoted_name)]
    Block(String),
    #[regex(r"@[A-Za-z0-9_.$-]+", |lex| plain_name(lex.slice()))]
    #[token("@\"", quoted_name)]
    Symbol(String),
    #[regex(r"-?[0-9]+", |lex| lex.slice().to_owned())]
    Int(String),
    #[regex(r"-?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+", |lex| lex.slice().to_owned())]
    #[regex(r"-?[0-9]+\.[0-9]+", |lex| lex.slice().to_owned())]
    #[token("-inf", |_| "-inf".to_owned())]
    Float(String),
    /// Raw bits of a float (`0x7ff8000000000001`).
    #[regex(r"0x[0-9A-Fa-f]+", |lex| lex.slice().to_owned())]
    Hex(String),
    #[token("\"", string_body)]
    Str(Vec<u8>),
    /// `c"..."`: the bytes of an `[N x i8]` constant.
    #[token("c\"", string_body)]
    Bytes(Vec<u8>),
    #[token("=")]
    Eq,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("->")]
    Arrow,
    #[token("...")]
    Ellipsis,
    #[token("!")]
    Bang,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    LAngle,
    #[token(">")]
    RAngle,
    /// Stands in for a lexical error (never produced by logos itself); no grammar rule
    /// accepts it, so the parser recovers at the end of the line.
    Invalid,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Newline => f.write_str("end of line"),
            Token::Func => f.write_str("`func`"),
            Token::Word(w) => write!(f, "`{w}`"),
            Token::Value(n) => write!(f, "`%{n}`"),
            Token::Block(n) => write!(f, "`^{n}`"),
            Token::Symbol(n) => write!(f, "`@{n}`"),
            Token::Int(t) | Token::Float(t) | Token::Hex(t) => write!(f, "`{t}`"),
            Token::Str(_) => f.write_str("a string"),
            Token::Bytes(_) => f.write_str("a c\"...\" string"),
            Token::Eq => f.write_str("`=`"),
            Token::Colon => f.write_str("`:`"),
            Token::Comma => f.write_str("`,`"),
            Token::Plus => f.write_str("`+`"),
            Token::Minus => f.write_str("`-`"),
            Token::Arrow => f.write_str("`->`"),
            Token::Ellipsis => f.write_str("`...`"),
            Token::Bang => f.write_str("`!`"),
            Token::LParen => f.write_str("`(`"),
            Token::RParen => f.write_str("`)`"),
            Token::LBracket => f.write_str("`[`"),
            Token::RBracket => f.write_str("`]`"),
            Token::LBrace => f.write_str("`{`"),
            Token::RBrace => f.write_str("`}`"),
            Token::LAngle => f.write_str("`<`"),
            Token::RAngle => f.write_str("`>`"),
            Token::Invalid => f.write_str("an invalid token"),
        }
    }
}

fn plain_name(slice: &str) -> String {
    slice.get(1..).unwrap_or_default().to_owned()
}

/// Reads the rest of a quoted string whose opening `"` has just been matched. Stops at
/// the closing quote; a newline or the end of input first is an unterminated string.
/// After a bad escape the scan goes on to the closing quote, so lexing resumes after it.
fn string_body(lex: &mut logos::Lexer<'_, Token>) -> Result<Vec<u8>, LexError> {
    let open = lex.span().start;
    let base = lex.span().end;
    let rest = lex.remainder().as_bytes();
    let mut out = Vec::new();
    let mut bad_escape: Option<Range<usize>> = None;
    let mut i = 0;
    loop {
        match rest.get(i) {
            None | Some(b'\n') => {
                lex.bump(i);
                return Err(LexError {
                    kind: LexErrorKind::UnterminatedString,
                    span: open..base + i,
                });
            }
            Some(b'"') => {
                lex.bump(i + 1);
                return match bad_escape {
                    Some(span) => Err(LexError { kind: LexErrorKind::BadEscape, span }),
                    None => Ok(out),
                };
            }
            Some(b'\\') => {
                let hi = rest.get(i + 1).and_then(|b| (*b as char).to_digit(16));
                let lo = rest.get(i + 2).and_then(|b| (*b as char).to_digit(16));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => {
                        out.push((hi * 16 + lo) as u8);
                        i += 3;
                    }
                    _ => {
                        if bad_escape.is_none() {
                            let len = if hi.is_some() { 2 } else { 1 };
                            bad_escape = Some(base + i..base + i + len);
                        }
                        i += 1;
                    }
                }
            }
            Some(&b) => {
                out.push(b);
                i += 1;
            }
        }
    }
}

fn quoted_name(lex: &mut logos::Lexer<'_, Token>) -> Result<String, LexError> {
    let start = lex.span().start;
    let bytes = string_body(lex)?;
    String::from_utf8(bytes)
        .map_err(|_| LexError { kind: LexErrorKind::NameNotUtf8, span: start..lex.span().end })
}

/// A token with its byte range, as the generated parser wants it.
pub type Spanned = (usize, Token, usize);

/// The token stream fed to the parser: no leading newline, no two newlines in a row, a
/// final newline (spanning the end of input) even when the text lacks one, and lexical
/// errors replaced by `Token::Invalid` and collected in `errors`.
pub struct Tokens<'s> {
    lexer: logos::Lexer<'s, Token>,
    len: usize,
    errors: Vec<LexError>,
    last_was_newline: bool,
    finished: bool,
    /// Open brackets on the current line.
    depth: usize,
}

impl<'s> Tokens<'s> {
    pub fn new(source: &'s str) -> Tokens<'s> {
        Tokens {
            lexer: Token::lexer(source),
            len: source.len(),
            errors: Vec::new(),
            last_was_newline: true,
            finished: false,
            depth: 0,
        }
    }

    pub fn take_errors(&mut self) -> Vec<LexError> {
        std::mem::take(&mut self.errors)
    }

    /// Records an error; a run of unexpected characters is one error.
    fn push_error(&mut self, error: LexError) {
        if let Some(last) = self.errors.last_mut() {
            let both_unexpected = last.kind == LexErrorKind::UnexpectedChar
                && error.kind == LexErrorKind::UnexpectedChar;
            if both_unexpected && last.span.end == error.span.start {
                last.span.end = error.span.end;
                return;
            }
        }
        self.errors.push(error);
    }
}

impl Iterator for Tokens<'_> {
    type Item = Result<Spanned, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let Some(result) = self.lexer.next() else {
                if self.finished || self.last_was_newline {
                    self.finished = true;
                    return None;
                }
                self.finished = true;
                self.last_was_newline = true;
                return Some(Ok((self.len, Token::Newline, self.len)));
            };
            let span = self.lexer.span();
            let mut token = match result {
                Ok(token) => token,
                Err(error) => {
                    self.push_error(error);
                    Token::Invalid
                }
            };
            match token {
                Token::LParen | Token::LBracket | Token::LBrace | Token::LAngle => {
                    if self.depth >= MAX_DEPTH {
                        // Once per line: the parser skips the rest of the line anyway.
                        if self.depth == MAX_DEPTH {
                            let error =
                                LexError { kind: LexErrorKind::TooDeep, span: span.clone() };
                            self.errors.push(error);
                            self.depth += 1;
                        }
                        token = Token::Invalid;
                    } else {
                        self.depth += 1;
                    }
                }
                Token::RParen | Token::RBracket | Token::RBrace | Token::RAngle => {
                    self.depth = self.depth.saturating_sub(1);
                }
                Token::Newline => self.depth = 0,
                _ => {}
            }
            let newline = token == Token::Newline;
            if newline && self.last_was_newline {
                continue;
            }
            self.last_was_newline = newline;
            return Some(Ok((span.start, token, span.end)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(source: &str) -> Vec<Token> {
        Tokens::new(source).map(|t| t.map(|(_, tok, _)| tok).unwrap_or(Token::Invalid)).collect()
    }

    fn word(w: &str) -> Token {
        Token::Word(w.to_owned())
    }

    #[test]
    fn names_numbers_and_punctuation() {
        let toks = tokens("%x = fadd fast f64 %\"a b\", %y.1 ; comment\n");
        assert_eq!(
            toks,
            vec![
                Token::Value("x".into()),
                Token::Eq,
                word("fadd"),
                word("fast"),
                word("f64"),
                Token::Value("a b".into()),
                Token::Comma,
                Token::Value("y.1".into()),
                Token::Newline,
            ]
        );
        let toks = tokens("-5 1.5 -0.0 1e-10 2.5E+300 -inf inf 0x7ff8000000000001 -> - ...");
        assert_eq!(
            toks,
            vec![
                Token::Int("-5".into()),
                Token::Float("1.5".into()),
                Token::Float("-0.0".into()),
                Token::Float("1e-10".into()),
                Token::Float("2.5E+300".into()),
                Token::Float("-inf".into()),
                word("inf"),
                Token::Hex("0x7ff8000000000001".into()),
                Token::Arrow,
                Token::Minus,
                Token::Ellipsis,
                Token::Newline,
            ]
        );
    }

    #[test]
    fn sigils_keywords_and_strings() {
        let toks = tokens("func @\"a\\22b\" ^bb-1 @g-8 c\"hi\\00\" reduce.fadd <{");
        assert_eq!(
            toks,
            vec![
                Token::Func,
                Token::Symbol("a\"b".into()),
                Token::Block("bb-1".into()),
                Token::Symbol("g-8".into()),
                Token::Bytes(b"hi\0".to_vec()),
                word("reduce.fadd"),
                Token::LAngle,
                Token::LBrace,
                Token::Newline,
            ]
        );
        assert_eq!(tokens("functional"), vec![word("functional"), Token::Newline]);
    }

    #[test]
    fn newlines_collapse_and_end_the_input() {
        let toks = tokens("\n\n ret ; c\n\n\n ret");
        assert_eq!(toks, vec![word("ret"), Token::Newline, word("ret"), Token::Newline]);
        assert!(tokens("").is_empty());
    }

    #[test]
    fn errors_carry_spans() {
        let mut lexer = Tokens::new("ret # x\n\"abc\n@\"\\zz\" \"\\FF");
        let toks: Vec<_> = lexer.by_ref().map(|t| t.map(|(_, tok, _)| tok)).collect();
        assert!(toks.contains(&Ok(Token::Invalid)));
        let errors = lexer.take_errors();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert_eq!(errors[0], LexError { kind: LexErrorKind::UnexpectedChar, span: 4..5 });
        assert_eq!(errors[1], LexError { kind: LexErrorKind::UnterminatedString, span: 8..12 });
        assert_eq!(errors[2], LexError { kind: LexErrorKind::BadEscape, span: 15..16 });
        assert_eq!(errors[3].kind, LexErrorKind::UnterminatedString);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        let mut lexer = Tokens::new(&deep);
        let invalid = lexer.by_ref().filter(|t| matches!(t, Ok((_, Token::Invalid, _)))).count();
        assert_eq!(invalid, 1);
        assert_eq!(lexer.take_errors()[0].kind, LexErrorKind::TooDeep);
        let lines = format!("{}\n{}", "(".repeat(MAX_DEPTH), "(".repeat(MAX_DEPTH));
        let mut lexer = Tokens::new(&lines);
        lexer.by_ref().for_each(drop);
        assert!(lexer.take_errors().is_empty());
    }
}
