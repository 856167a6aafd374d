//! Reading the atoms of one line: a cursor whose `expect_*` helpers say what they expected
//! and where, plus what module items and instructions share: types, number literals,
//! constants and the symbol table they resolve `@names` against.

use std::collections::HashMap;

use crate::constant::{mask_to_width, Constant, Symbol};
use crate::dfg::TextSpan;
use crate::diagnostic::Diagnostic;
use crate::entities::FuncId;
use crate::function::Signature;
use crate::instructions::ParamAttrs;
use crate::text::ast::{Atom, AtomKind, Delim, Group, Punct};
use crate::types::Type;

pub(crate) type PResult<T> = Result<T, Diagnostic>;

/// Module-level names, known before any body or initializer is lowered so that symbols
/// may be used before their definition.
#[derive(Default)]
pub(crate) struct SymbolTable {
    pub names: HashMap<String, Symbol>,
    pub signatures: HashMap<FuncId, Signature>,
}

impl SymbolTable {
    pub fn resolve(&self, name: &str, span: TextSpan) -> PResult<Symbol> {
        if let Some(symbol) = self.names.get(name) {
            return Ok(*symbol);
        }
        let mut error = Diagnostic::new(format!("use of undefined symbol {}", at_name(name)))
            .with_span(span)
            .with_label("no global or function has this name");
        // `-` is a name character, so an offset written without spaces is part of the name.
        if let Some((base, digits)) = name.rsplit_once('-') {
            if self.names.contains_key(base) && digits.bytes().all(|b| b.is_ascii_digit()) {
                error = error.with_note(format!(
                    "for an address offset, write `{} - {digits}` with spaces",
                    at_name(base)
                ));
            }
        }
        Err(error)
    }

    /// The function `name` names; a global is an error labelled with `why` (what needs a
    /// function there).
    pub fn function(&self, name: &str, span: TextSpan, why: &str) -> PResult<FuncId> {
        match self.resolve(name, span)? {
            Symbol::Func(f) => Ok(f),
            Symbol::Global(_) => {
                Err(Diagnostic::new(format!("{} is a global, not a function", at_name(name)))
                    .with_span(span)
                    .with_label(why))
            }
        }
    }
}

/// `@name` as the printer writes it (quoted when needed).
pub(crate) fn at_name(name: &str) -> String {
    crate::text::print::symbol_name(name)
}

/// A name with its sigil, quoted when needed, e.g. `%x` or `%"a b"`.
pub(crate) fn sigil_name(sigil: char, name: &str) -> String {
    let symbol = at_name(name);
    format!("{sigil}{}", symbol.get(1..).unwrap_or_default())
}

/// One parameter of a signature.
pub(crate) struct Param<'a> {
    /// The value name, in a definition's header.
    pub name: Option<(&'a str, TextSpan)>,
    pub ty: Type,
    pub attrs: ParamAttrs,
}

pub(crate) struct Cursor<'a> {
    src: &'a str,
    atoms: &'a [Atom],
    pos: usize,
    /// Where "expected X" points once the atoms run out.
    end: TextSpan,
}

impl<'a> Cursor<'a> {
    pub fn new(src: &'a str, atoms: &'a [Atom], end: TextSpan) -> Cursor<'a> {
        Cursor { src, atoms, pos: 0, end }
    }

    /// A cursor over a group's contents; running out points at the closing bracket.
    pub fn group(&self, group: &'a Group) -> Cursor<'a> {
        let close = TextSpan { start: group.span.end.saturating_sub(1), end: group.span.end };
        Cursor::new(self.src, &group.atoms, close)
    }

    pub fn peek(&self) -> Option<&'a Atom> {
        self.atoms.get(self.pos)
    }

    pub fn next(&mut self) -> Option<&'a Atom> {
        let atom = self.atoms.get(self.pos)?;
        self.pos += 1;
        Some(atom)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.atoms.len()
    }

    /// The remaining atoms (the cursor is left at the end).
    pub fn rest(&mut self) -> &'a [Atom] {
        let rest = self.atoms.get(self.pos..).unwrap_or_default();
        self.pos = self.atoms.len();
        rest
    }

    /// The span of the next atom, or of the end when there is none.
    pub fn here(&self) -> TextSpan {
        self.peek().map_or(self.end, |a| a.span)
    }

    /// The source text of an atom, shortened for messages.
    pub fn text(&self, atom: &Atom) -> String {
        let text = self.src.get(atom.span.range()).unwrap_or("?");
        match text.char_indices().nth(40) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text.to_string(),
        }
    }

    /// "expected X, found Y" at the next atom (or the end of the line).
    pub fn error(&self, expected: &str) -> Diagnostic {
        match self.peek() {
            Some(atom) => {
                Diagnostic::new(format!("expected {expected}, found `{}`", self.text(atom)))
                    .with_span(atom.span)
                    .with_label(format!("expected {expected}"))
            }
            None => Diagnostic::new(format!("expected {expected}, found {}", self.end_name()))
                .with_span(self.end)
                .with_label(format!("expected {expected}")),
        }
    }

    fn end_name(&self) -> &'static str {
        let closing = self.src.get(self.end.range()).unwrap_or("");
        match closing {
            ")" => "`)`",
            "]" => "`]`",
            "}" => "`}`",
            ">" => "`>`",
            "," => "`,`",
            _ => "end of line",
        }
    }

    /// Fails unless every atom was consumed.
    pub fn finish(&self, after: &str) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(atom) => {
                Err(Diagnostic::new(format!("unexpected `{}` after {after}", self.text(atom)))
                    .with_span(atom.span)
                    .with_label("nothing more was expected here"))
            }
        }
    }

    pub fn eat_punct(&mut self, punct: Punct) -> Option<TextSpan> {
        let atom = self.peek().filter(|a| a.is_punct(punct))?;
        self.pos += 1;
        Some(atom.span)
    }

    pub fn expect_punct(&mut self, punct: Punct) -> PResult<TextSpan> {
        self.eat_punct(punct).ok_or_else(|| self.error(&format!("`{}`", punct.text())))
    }

    pub fn comma(&mut self) -> PResult<TextSpan> {
        self.expect_punct(Punct::Comma)
    }

    pub fn peek_word(&self) -> Option<&'a str> {
        match &self.peek()?.kind {
            AtomKind::Word(w) => Some(w),
            _ => None,
        }
    }

    pub fn eat_word(&mut self, word: &str) -> Option<TextSpan> {
        let atom = self.peek().filter(|a| a.is_word(word))?;
        self.pos += 1;
        Some(atom.span)
    }

    pub fn expect_word(&mut self, word: &str) -> PResult<TextSpan> {
        self.eat_word(word).ok_or_else(|| self.error(&format!("`{word}`")))
    }

    /// A word and its span, whatever the word.
    pub fn any_word(&mut self, expected: &str) -> PResult<(&'a str, TextSpan)> {
        match self.peek() {
            Some(Atom { kind: AtomKind::Word(w), span }) => {
                self.pos += 1;
                Ok((w, *span))
            }
            _ => Err(self.error(expected)),
        }
    }

    pub fn value(&mut self) -> PResult<(&'a str, TextSpan)> {
        match self.peek() {
            Some(Atom { kind: AtomKind::Value(name), span }) => {
                self.pos += 1;
                Ok((name, *span))
            }
            _ => Err(self.error("a %value")),
        }
    }

    pub fn block(&mut self) -> PResult<(&'a str, TextSpan)> {
        match self.peek() {
            Some(Atom { kind: AtomKind::Block(name), span }) => {
                self.pos += 1;
                Ok((name, *span))
            }
            _ => Err(self.error("a ^block")),
        }
    }

    pub fn symbol(&mut self) -> PResult<(&'a str, TextSpan)> {
        match self.peek() {
            Some(Atom { kind: AtomKind::Symbol(name), span }) => {
                self.pos += 1;
                Ok((name, *span))
            }
            _ => Err(self.error("an @symbol")),
        }
    }

    pub fn peek_group(&self, delim: Delim) -> Option<&'a Group> {
        match &self.peek()?.kind {
            AtomKind::Group(g) if g.delim == delim => Some(g),
            _ => None,
        }
    }

    pub fn expect_group(&mut self, delim: Delim, what: &str) -> PResult<&'a Group> {
        match self.peek_group(delim) {
            Some(group) => {
                self.pos += 1;
                Ok(group)
            }
            None => Err(self.error(&format!("`{}` opening {what}", delim.open()))),
        }
    }

    /// An unsigned integer literal (lengths, alignments, indices, address spaces).
    pub fn unsigned(&mut self, what: &str, max: u64) -> PResult<u64> {
        let atom = self.peek().ok_or_else(|| self.error(what))?;
        let AtomKind::Int(text) = &atom.kind else {
            return Err(self.error(what));
        };
        let value = text.parse::<u64>().ok().filter(|v| *v <= max).ok_or_else(|| {
            Diagnostic::new(format!("{what} `{text}` is out of range (0 to {max})"))
                .with_span(atom.span)
                .with_label("out of range")
        })?;
        self.pos += 1;
        Ok(value)
    }

    pub fn u32(&mut self, what: &str) -> PResult<u32> {
        Ok(self.unsigned(what, u64::from(u32::MAX))? as u32)
    }

    /// `align N`.
    pub fn align(&mut self) -> PResult<u32> {
        self.expect_word("align")?;
        self.u32("an alignment")
    }

    /// A type: `i32`, `ptr addrspace(1)`, `<4 x f64>`, `[2 x i8]`, `{i32, f64}`, `<{i8}>`.
    pub fn ty(&mut self) -> PResult<Type> {
        let Some(atom) = self.peek() else {
            return Err(self.error("a type"));
        };
        let ty = match &atom.kind {
            AtomKind::Word(word) => {
                let Some(ty) = Type::scalar_from_name(word) else {
                    return Err(self.error("a type"));
                };
                self.pos += 1;
                if ty == Type::PTR && self.eat_word("addrspace").is_some() {
                    return Ok(Type::Ptr(self.addrspace_number()?));
                }
                ty
            }
            AtomKind::Group(group) => {
                self.pos += 1;
                self.aggregate_type(group)?
            }
            _ => return Err(self.error("a type")),
        };
        Ok(ty)
    }

    /// The `(N)` of `addrspace(N)`.
    pub fn addrspace_number(&mut self) -> PResult<u32> {
        let group = self.expect_group(Delim::Paren, "the address space")?;
        let mut inner = self.group(group);
        let space = inner.u32("an address space")?;
        inner.finish("the address space")?;
        Ok(space)
    }

    fn aggregate_type(&self, group: &'a Group) -> PResult<Type> {
        let mut inner = self.group(group);
        match group.delim {
            Delim::Bracket => {
                let len = inner.unsigned("an array length", u64::MAX)?;
                inner.expect_word("x")?;
                let elem = inner.ty()?;
                inner.finish("the element type")?;
                Ok(Type::array(elem, len))
            }
            Delim::Angle => {
                if let Some(fields) = inner.peek_group(Delim::Brace) {
                    inner.pos += 1;
                    inner.finish("the fields of a packed struct")?;
                    let fields = self.comma_list(fields, "a field type", |c| c.ty())?;
                    return Ok(Type::structure(fields, true));
                }
                let lanes = inner.u32("a vector length")?;
                inner.expect_word("x")?;
                let elem_span = inner.here();
                let elem = inner.ty()?;
                inner.finish("the element type")?;
                if !elem.is_scalar() {
                    return Err(Diagnostic::new(format!(
                        "vector of {elem}: lanes must be scalars"
                    ))
                    .with_span(elem_span)
                    .with_label("not a scalar type"));
                }
                Ok(Type::vector(elem, lanes))
            }
            Delim::Brace => {
                let fields = self.comma_list(group, "a field type", |c| c.ty())?;
                Ok(Type::structure(fields, false))
            }
            Delim::Paren => Err(Diagnostic::new("expected a type, found `(`")
                .with_span(group.span)
                .with_label("expected a type")),
        }
    }

    /// The parameters of a signature in `group`: `ty attrs` (declarations, indirect calls)
    /// or `%name: ty attrs` (definitions), optionally ending in `...`.
    pub fn params(
        &self,
        group: &'a Group,
        named: bool,
        attrs: bool,
    ) -> PResult<(Vec<Param<'a>>, bool)> {
        let mut ellipsis: Option<TextSpan> = None;
        let mut misplaced: Option<TextSpan> = None;
        let params = self.comma_list(group, "a parameter", |c| {
            if let Some(span) = c.eat_punct(Punct::Ellipsis) {
                misplaced = misplaced.or(ellipsis);
                ellipsis = Some(span);
                return Ok(None);
            }
            if let Some(span) = ellipsis {
                misplaced = misplaced.or(Some(span));
            }
            let name = if named {
                let name = c.value()?;
                c.expect_punct(Punct::Colon)?;
                Some(name)
            } else {
                None
            };
            let ty = c.ty()?;
            let mut flags = ParamAttrs::empty();
            while let Some((word, span)) = c.peek_word().map(|w| (w, c.here())) {
                let flag = ParamAttrs::from_name(word).filter(|_| attrs).ok_or_else(|| {
                    let valid = ParamAttrs::NAMES.iter().map(|(_, n)| *n).collect::<Vec<_>>();
                    let error = Diagnostic::new(format!("unknown parameter attribute `{word}`"))
                        .with_span(span)
                        .with_label("not a parameter attribute");
                    if attrs {
                        error.with_note(format!("expected one of: {}", valid.join(", ")))
                    } else {
                        error.with_note("an indirect call's signature has no attributes")
                    }
                })?;
                flags.insert(flag);
                c.next();
            }
            Ok(Some(Param { name, ty, attrs: flags }))
        })?;
        if let Some(span) = misplaced {
            return Err(Diagnostic::new("`...` must be the last parameter")
                .with_span(span)
                .with_label("more parameters follow"));
        }
        Ok((params.into_iter().flatten().collect(), ellipsis.is_some()))
    }

    /// Reads a comma-separated list in `group` (possibly empty), each element with `item`,
    /// which must consume its whole element.
    pub fn comma_list<T>(
        &self,
        group: &'a Group,
        what: &str,
        mut item: impl FnMut(&mut Cursor<'a>) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        let atoms = group.atoms.as_slice();
        if atoms.is_empty() {
            return Ok(out);
        }
        let close = TextSpan { start: group.span.end.saturating_sub(1), end: group.span.end };
        let mut start = 0;
        loop {
            let comma = atoms[start..].iter().position(|a| a.is_punct(Punct::Comma));
            let stop = comma.map_or(atoms.len(), |i| start + i);
            let end = atoms.get(stop).map_or(close, |a| a.span);
            let mut element = Cursor::new(self.src, &atoms[start..stop], end);
            out.push(item(&mut element)?);
            if let Some(atom) = element.peek() {
                let closing = self.src.get(close.range()).unwrap_or("");
                return Err(Diagnostic::new(format!(
                    "unexpected `{}` after {what}",
                    element.text(atom)
                ))
                .with_span(atom.span)
                .with_label(format!("expected `,` or `{closing}`")));
            }
            match comma {
                Some(_) => start = stop + 1,
                None => return Ok(out),
            }
        }
    }

    /// A constant of type `ty` (one atom, or a symbol with its offset).
    pub fn constant(&mut self, ty: &Type, symbols: &SymbolTable) -> PResult<Constant> {
        let Some(atom) = self.peek() else {
            return Err(self.error(&format!("a constant of type {ty}")));
        };
        self.pos += 1;
        let mismatch = |what: &str| {
            Diagnostic::new(format!("{what} is not a constant of type {ty}"))
                .with_span(atom.span)
                .with_label(format!("expected a {ty} constant"))
        };
        let text = self.text(atom);
        match &atom.kind {
            AtomKind::Word(word) => match word.as_str() {
                "zeroinit" => Ok(Constant::Zero),
                "undef" => Ok(Constant::Undef),
                "poison" => Ok(Constant::Poison),
                "null" if ty.is_ptr() => Ok(Constant::Int(0)),
                "true" | "false" if *ty == Type::I1 => {
                    Ok(Constant::Int(u128::from(word == "true")))
                }
                "inf" | "nan" if ty.is_float() => float_constant(ty, word, atom.span),
                _ => Err(mismatch(&format!("`{text}`"))),
            },
            AtomKind::Int(digits) => match ty {
                // An absolute address (`inttoptr` of a constant), 64 bits.
                Type::Ptr(_) => int_literal(digits, 64, atom.span).map(Constant::Int),
                _ if ty.is_int() => {
                    let bits = ty.int_bits().unwrap_or(128);
                    int_literal(digits, bits, atom.span).map(Constant::Int)
                }
                _ if ty.is_float() => float_constant(ty, digits, atom.span),
                _ => Err(mismatch(&format!("`{text}`"))),
            },
            AtomKind::Float(digits) if ty.is_float() => float_constant(ty, digits, atom.span),
            AtomKind::Hex(digits) if ty.is_float() => {
                let max = if *ty == Type::F32 { u64::from(u32::MAX) } else { u64::MAX };
                digits
                    .get(2..)
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .filter(|bits| *bits <= max)
                    .map(Constant::Float)
                    .ok_or_else(|| {
                        Diagnostic::new(format!("`{text}` does not fit in the bits of {ty}"))
                            .with_span(atom.span)
                            .with_label("too many bits")
                    })
            }
            AtomKind::Hex(_) => Err(mismatch(&format!("`{text}`"))
                .with_note("hex bit patterns are only allowed for f32 and f64")),
            AtomKind::Bytes(bytes) => match ty {
                Type::Array(elem, len) if **elem == Type::I8 => {
                    if bytes.len() as u64 == *len {
                        Ok(Constant::Bytes(bytes.clone()))
                    } else {
                        Err(Diagnostic::new(format!(
                            "c-string of {} bytes for {ty}, which holds {len}",
                            bytes.len()
                        ))
                        .with_span(atom.span)
                        .with_label(format!("expected {len} bytes")))
                    }
                }
                _ => Err(mismatch("a c-string")),
            },
            AtomKind::Symbol(name) if ty.is_ptr() => {
                let symbol = symbols.resolve(name, atom.span)?;
                let offset = self.symbol_offset()?;
                Ok(Constant::Address { symbol, offset })
            }
            AtomKind::Group(group) => self.aggregate_constant(ty, group, symbols),
            _ => Err(mismatch(&format!("`{text}`"))),
        }
    }

    /// The optional ` + N` / ` - N` after a symbol in a constant.
    fn symbol_offset(&mut self) -> PResult<i64> {
        let negative = if self.eat_punct(Punct::Plus).is_some() {
            false
        } else if self.eat_punct(Punct::Minus).is_some() {
            true
        } else if let Some(Atom { kind: AtomKind::Int(text), span }) = self.peek() {
            // `@"g"-8`: the offset lexed as a negative integer.
            if !text.starts_with('-') {
                return Ok(0);
            }
            self.pos += 1;
            return text.parse::<i64>().map_err(|_| offset_range(*span));
        } else {
            return Ok(0);
        };
        let Some(Atom { kind: AtomKind::Int(text), span }) = self.peek() else {
            return Err(self.error("a byte offset"));
        };
        if text.starts_with('-') {
            return Err(self.error("an unsigned byte offset"));
        }
        self.pos += 1;
        let magnitude = text.parse::<i128>().map_err(|_| offset_range(*span))?;
        let value = if negative { -magnitude } else { magnitude };
        i64::try_from(value).map_err(|_| offset_range(*span))
    }

    fn aggregate_constant(
        &self,
        ty: &Type,
        group: &'a Group,
        symbols: &SymbolTable,
    ) -> PResult<Constant> {
        // The element count comes from the type and may be huge: elements are looked up
        // by index, never materialized.
        let (delim, count): (Delim, u64) = match ty {
            Type::Array(_, len) => (Delim::Bracket, *len),
            Type::Vector(_, lanes) => (Delim::Bracket, u64::from(*lanes)),
            Type::Struct(s) if s.packed => (Delim::Angle, s.fields.len() as u64),
            Type::Struct(s) => (Delim::Brace, s.fields.len() as u64),
            _ => {
                return Err(Diagnostic::new(format!(
                    "`{}` is not a constant of type {ty}",
                    group.delim.open()
                ))
                .with_span(group.span)
                .with_label(format!("expected a {ty} constant")))
            }
        };
        if group.delim != delim {
            let open = if delim == Delim::Angle { "<{" } else { delim.open() };
            return Err(Diagnostic::new(format!("a {ty} constant is written in `{open}`"))
                .with_span(group.span)
                .with_label(format!("expected `{open}`")));
        }
        let list = if delim == Delim::Angle {
            let mut inner = self.group(group);
            let fields = inner.expect_group(Delim::Brace, "the fields")?;
            inner.finish("the fields of a packed struct")?;
            fields
        } else {
            group
        };
        let mut index = 0;
        let values = self.comma_list(list, "an element", |c| {
            let elem_ty = ty.element_type(index).cloned();
            index += 1;
            match elem_ty {
                Some(elem_ty) => c.constant(&elem_ty, symbols),
                None => Err(Diagnostic::new(format!("too many elements for {ty}: it has {count}"))
                    .with_span(c.here())
                    .with_label("one too many")),
            }
        })?;
        if values.len() as u64 != count {
            return Err(Diagnostic::new(format!(
                "{ty} has {count} elements, the constant gives {}",
                values.len()
            ))
            .with_span(list.span)
            .with_label(format!("expected {count} elements")));
        }
        Ok(Constant::Elements(values))
    }
}

fn offset_range(span: TextSpan) -> Diagnostic {
    Diagnostic::new("byte offset out of range").with_span(span).with_label("must fit in an i64")
}

/// An integer literal of `bits` bits: from `-2^(bits-1)` to `2^bits - 1`, masked.
pub(crate) fn int_literal(text: &str, bits: u32, span: TextSpan) -> PResult<u128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = digits.parse::<u128>().ok();
    let limit =
        if negative { 1u128 << (bits.clamp(1, 128) - 1) } else { mask_to_width(u128::MAX, bits) };
    match magnitude {
        Some(m) if m <= limit => {
            let value = if negative { 0u128.wrapping_sub(m) } else { m };
            Ok(mask_to_width(value, bits))
        }
        _ => {
            let (min, max) = if bits >= 128 {
                ("-2^127".to_string(), "2^128-1".to_string())
            } else {
                (format!("-{}", 1u128 << (bits - 1)), mask_to_width(u128::MAX, bits).to_string())
            };
            Err(Diagnostic::new(format!("integer `{text}` does not fit in i{bits}"))
                .with_span(span)
                .with_label(format!("i{bits} literals range from {min} to {max}")))
        }
    }
}

/// A decimal float, an integer, `inf`, `-inf` or `nan` read as `ty` (f32 or f64).
fn float_constant(ty: &Type, text: &str, span: TextSpan) -> PResult<Constant> {
    let out_of_range = || {
        Diagnostic::new(format!("`{text}` is out of range for {ty}"))
            .with_span(span)
            .with_label(format!("too large for {ty}"))
    };
    let explicit_inf = text.ends_with("inf");
    if *ty == Type::F32 {
        let value = match text {
            "nan" => f32::NAN,
            _ => text.parse::<f32>().map_err(|_| out_of_range())?,
        };
        if value.is_infinite() && !explicit_inf {
            return Err(out_of_range());
        }
        Ok(Constant::f32(value))
    } else {
        let value = match text {
            "nan" => f64::NAN,
            _ => text.parse::<f64>().map_err(|_| out_of_range())?,
        };
        if value.is_infinite() && !explicit_inf {
            return Err(out_of_range());
        }
        Ok(Constant::f64(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span() -> TextSpan {
        TextSpan::new(0, 1)
    }

    #[test]
    fn integer_ranges() {
        assert_eq!(int_literal("255", 8, span()), Ok(0xff));
        assert_eq!(int_literal("-128", 8, span()), Ok(0x80));
        assert!(int_literal("256", 8, span()).is_err());
        assert!(int_literal("-129", 8, span()).is_err());
        assert_eq!(int_literal("1", 1, span()), Ok(1));
        assert_eq!(int_literal("-1", 1, span()), Ok(1));
        assert!(int_literal("2", 1, span()).is_err());
        assert_eq!(int_literal(&u128::MAX.to_string(), 128, span()), Ok(u128::MAX));
        assert_eq!(int_literal(&i128::MIN.to_string(), 128, span()), Ok(1u128 << 127));
        assert!(int_literal("-170141183460469231731687303715884105729", 128, span()).is_err());
        assert!(int_literal("340282366920938463463374607431768211456", 128, span()).is_err());
        assert_eq!(int_literal("-1", 64, span()), Ok(u128::from(u64::MAX)));
    }

    #[test]
    fn floats() {
        assert_eq!(float_constant(&Type::F64, "-0.0", span()), Ok(Constant::f64(-0.0)));
        assert_eq!(float_constant(&Type::F32, "0.1", span()), Ok(Constant::f32(0.1)));
        assert_eq!(
            float_constant(&Type::F64, "-inf", span()),
            Ok(Constant::f64(f64::NEG_INFINITY))
        );
        assert_eq!(float_constant(&Type::F32, "nan", span()), Ok(Constant::f32(f32::NAN)));
        assert!(float_constant(&Type::F64, "1e400", span()).is_err());
        assert!(float_constant(&Type::F32, "1e39", span()).is_err());
    }
}
