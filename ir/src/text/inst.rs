//! Lowering of one instruction line to `InstructionData`, opcode by opcode, following the
//! printer's layout. Operands are not resolved here: each `%name` becomes a placeholder
//! value indexing `FnCtx::refs`, replaced once every result of the function exists (values
//! may be used above their definition). The result type comes from the line alone.

use std::collections::HashMap;
use std::sync::Arc;

use crate::dfg::{DebugLoc, TextSpan};
use crate::diagnostic::Diagnostic;
use crate::entities::{Block, Value};
use crate::function::Signature;
use crate::instructions::*;
use crate::text::ast::{Atom, AtomKind, Delim, Inst, Punct};
use crate::text::cursor::{sigil_name, Cursor, PResult, SymbolTable};
use crate::types::Type;

use cranelift_entity::EntityRef;

/// What the lowering of a function's lines accumulates.
pub(crate) struct FnCtx<'a> {
    pub src: &'a str,
    pub symbols: &'a SymbolTable,
    pub blocks: &'a HashMap<String, Block>,
    /// `%name` operands in order of appearance; placeholder `Value::new(i)` is `refs[i]`.
    pub refs: Vec<(String, TextSpan)>,
    /// Types the text writes for operands: (index into `refs`, type), checked once resolved.
    pub checks: Vec<(usize, Type)>,
}

/// A switch case value, read once the type of the switched value is known.
pub(crate) struct CaseLiteral {
    pub text: String,
    pub span: TextSpan,
}

pub(crate) struct Lowered {
    pub data: InstructionData,
    pub result_ty: Option<Type>,
    pub loc: Option<DebugLoc>,
    /// For `switch`: one literal per case, in order (their values in `data` are 0 until read).
    pub cases: Vec<CaseLiteral>,
}

fn binary_flags(op: BinaryOp) -> InstFlags {
    match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl => {
            InstFlags::NUW | InstFlags::NSW
        }
        BinaryOp::Udiv | BinaryOp::Sdiv | BinaryOp::Lshr | BinaryOp::Ashr => InstFlags::EXACT,
        BinaryOp::Or => InstFlags::DISJOINT,
        _ if op.is_float() => InstFlags::FAST,
        _ => InstFlags::empty(),
    }
}

fn flag_names(flags: InstFlags) -> String {
    let names: Vec<&str> =
        InstFlags::NAMES.iter().filter(|(f, _)| flags.contains(*f)).map(|(_, n)| *n).collect();
    names.join(", ")
}

impl<'a> FnCtx<'a> {
    /// A `%value` operand, as a placeholder.
    fn operand(&mut self, c: &mut Cursor<'_>) -> PResult<Value> {
        let (name, span) = c.value()?;
        self.refs.push((name.to_string(), span));
        Ok(Value::new(self.refs.len() - 1))
    }

    /// An operand whose type the line states.
    fn typed(&mut self, c: &mut Cursor<'_>, ty: &Type) -> PResult<Value> {
        let value = self.operand(c)?;
        self.checks.push((value.index(), ty.clone()));
        Ok(value)
    }

    fn operand_list(
        &mut self,
        c: &Cursor<'a>,
        group: &'a crate::text::ast::Group,
    ) -> PResult<Vec<Value>> {
        c.comma_list(group, "an argument", |c| self.operand(c))
    }

    fn block_call(&mut self, c: &mut Cursor<'a>) -> PResult<BlockCall> {
        let (name, span) = c.block()?;
        let block = *self.blocks.get(name).ok_or_else(|| {
            Diagnostic::new(format!("use of undefined block {}", sigil_name('^', name)))
                .with_span(span)
                .with_label("no block has this name in this function")
        })?;
        let args = match c.peek_group(Delim::Paren) {
            Some(group) => {
                c.next();
                self.operand_list(c, group)?
            }
            None => Vec::new(),
        };
        Ok(BlockCall::new(block, args))
    }

    /// Flags allowed on `opcode`; stops at the first word that is not a flag.
    fn flags(c: &mut Cursor<'_>, allowed: InstFlags, opcode: &str) -> PResult<InstFlags> {
        let mut flags = InstFlags::empty();
        while let Some(word) = c.peek_word() {
            let flag = match word {
                "fast" => InstFlags::FAST,
                _ => match InstFlags::from_name(word) {
                    Some(flag) => flag,
                    None => break,
                },
            };
            if flag.0 & !allowed.0 != 0 {
                let label = if allowed.is_empty() {
                    format!("`{opcode}` takes no flags")
                } else {
                    format!("`{opcode}` takes {}", flag_names(allowed))
                };
                return Err(Diagnostic::new(format!("flag `{word}` is not allowed on `{opcode}`"))
                    .with_span(c.here())
                    .with_label(label));
            }
            flags.insert(flag);
            c.next();
        }
        Ok(flags)
    }

    /// Lowers one instruction line.
    pub fn lower(&mut self, inst: &'a Inst) -> PResult<Lowered> {
        let (atoms, loc) = split_debug_loc(self.src, &inst.atoms)?;
        let end = TextSpan { start: inst.span.end, end: inst.span.end };
        let mut c = Cursor::new(self.src, atoms, end);
        let opcode = inst.opcode.as_str();
        let mut cases = Vec::new();
        let (data, result_ty) =
            self.lower_operands(opcode, inst.opcode_span, &mut c, &mut cases)?;
        c.finish(&format!("the operands of `{opcode}`"))?;
        Ok(Lowered { data, result_ty, loc, cases })
    }

    fn lower_operands(
        &mut self,
        opcode: &str,
        opcode_span: TextSpan,
        c: &mut Cursor<'a>,
        cases: &mut Vec<CaseLiteral>,
    ) -> PResult<(InstructionData, Option<Type>)> {
        use InstructionData as I;
        if let Some(op) = UnaryOp::from_name(opcode) {
            let allowed = if op.is_float() { InstFlags::FAST } else { InstFlags::empty() };
            let flags = Self::flags(c, allowed, opcode)?;
            let ty = c.ty()?;
            let arg = self.typed(c, &ty)?;
            return Ok((I::Unary { op, flags, arg }, Some(ty)));
        }
        if let Some(op) = BinaryOp::from_name(opcode) {
            let flags = Self::flags(c, binary_flags(op), opcode)?;
            let ty = c.ty()?;
            let a = self.typed(c, &ty)?;
            c.comma()?;
            let b = self.typed(c, &ty)?;
            return Ok((I::Binary { op, flags, args: [a, b] }, Some(ty)));
        }
        if let Some(op) = CastOp::from_name(opcode) {
            let arg = self.operand(c)?;
            c.expect_word("to")?;
            let ty = c.ty()?;
            return Ok((I::Cast { op, arg, ty: ty.clone() }, Some(ty)));
        }
        if let Some(op) = ReduceOp::from_name(opcode) {
            let allowed = if op.is_float() { InstFlags::FAST } else { InstFlags::empty() };
            let flags = Self::flags(c, allowed, opcode)?;
            let ty = self.vector_type(c, opcode)?;
            let mut args = vec![self.typed(c, &ty)?];
            if op.has_start() {
                c.comma()?;
                args.push(self.operand(c)?);
            }
            let lane = ty.lane_type().clone();
            return Ok((I::Reduce { op, flags, args }, Some(lane)));
        }
        let data = match opcode {
            "const" => {
                let ty = c.ty()?;
                let value = c.constant(&ty, self.symbols)?;
                return Ok((I::Const { ty: ty.clone(), value }, Some(ty)));
            }
            "fma" => {
                let flags = Self::flags(c, InstFlags::FAST, opcode)?;
                let ty = c.ty()?;
                let a = self.typed(c, &ty)?;
                c.comma()?;
                let b = self.typed(c, &ty)?;
                c.comma()?;
                let d = self.typed(c, &ty)?;
                return Ok((I::Fma { flags, args: [a, b, d] }, Some(ty)));
            }
            "icmp" => {
                let (word, span) = c.any_word("a condition (eq, ne, slt, ...)")?;
                let cond = IntCC::from_name(word).ok_or_else(|| {
                    unknown(span, "integer condition", word, IntCC::ALL.iter().map(|c| c.name()))
                })?;
                let ty = c.ty()?;
                let a = self.typed(c, &ty)?;
                c.comma()?;
                let b = self.typed(c, &ty)?;
                return Ok((I::Icmp { cond, args: [a, b] }, Some(ty.with_lane(Type::I1))));
            }
            "fcmp" => {
                let flags = Self::flags(c, InstFlags::FAST, opcode)?;
                let (word, span) = c.any_word("a condition (oeq, olt, une, ...)")?;
                let cond = FloatCC::from_name(word).ok_or_else(|| {
                    unknown(span, "float condition", word, FloatCC::ALL.iter().map(|c| c.name()))
                })?;
                let ty = c.ty()?;
                let a = self.typed(c, &ty)?;
                c.comma()?;
                let b = self.typed(c, &ty)?;
                let result = ty.with_lane(Type::I1);
                return Ok((I::Fcmp { cond, flags, args: [a, b] }, Some(result)));
            }
            "select" => {
                let flag_atom = c.peek();
                let flags = Self::flags(c, InstFlags::FAST, opcode)?;
                let ty = c.ty()?;
                if let Some(atom) = flag_atom.filter(|_| !flags.is_empty()) {
                    if !ty.lane_type().is_float() {
                        let flag = c.text(atom);
                        return Err(Diagnostic::new(format!(
                            "flag `{flag}` is not allowed on `select` of {ty}"
                        ))
                        .with_span(atom.span)
                        .with_label("fast-math flags need a float type"));
                    }
                }
                let cond = self.operand(c)?;
                c.comma()?;
                let a = self.typed(c, &ty)?;
                c.comma()?;
                let b = self.typed(c, &ty)?;
                return Ok((I::Select { flags, args: [cond, a, b] }, Some(ty)));
            }
            "alloca" => {
                let ty = c.ty()?;
                c.comma()?;
                let count = match c.peek() {
                    Some(Atom { kind: AtomKind::Value(_), .. }) => {
                        let count = self.operand(c)?;
                        c.comma()?;
                        Some(count)
                    }
                    _ => None,
                };
                let align = c.align()?;
                return Ok((I::Alloca { ty, count, align }, Some(Type::PTR)));
            }
            "load" => {
                let volatile = c.eat_word("volatile").is_some();
                let ty = c.ty()?;
                c.comma()?;
                let ptr = self.operand(c)?;
                c.comma()?;
                let align = c.align()?;
                return Ok((I::Load { ty: ty.clone(), ptr, align, volatile }, Some(ty)));
            }
            "store" => {
                let volatile = c.eat_word("volatile").is_some();
                let value = self.operand(c)?;
                c.comma()?;
                let ptr = self.operand(c)?;
                c.comma()?;
                let align = c.align()?;
                I::Store { value, ptr, align, volatile }
            }
            "ptradd" => {
                let flags = Self::flags(c, InstFlags::INBOUNDS, opcode)?;
                let ty = c.ty()?;
                let ptr = self.typed(c, &ty)?;
                c.comma()?;
                let offset = self.operand(c)?;
                return Ok((I::PtrAdd { flags, ptr, offset }, Some(ty)));
            }
            "memcpy" | "memmove" | "memset" => {
                let volatile = c.eat_word("volatile").is_some();
                let dst = self.operand(c)?;
                c.comma()?;
                let src = self.operand(c)?;
                c.comma()?;
                let len = self.operand(c)?;
                match opcode {
                    "memset" => I::MemSet { dst, byte: src, len, volatile },
                    _ => I::MemCopy { dst, src, len, may_overlap: opcode == "memmove", volatile },
                }
            }
            "call" => {
                let (name, span) = c.symbol()?;
                let callee =
                    self.symbols.function(name, span, "only functions can be called directly")?;
                let group = c.expect_group(Delim::Paren, "the arguments")?;
                let args = self.operand_list(c, group)?;
                let attrs = func_attrs(c)?;
                let ret = self.symbols.signatures.get(&callee).and_then(|s| s.ret.clone());
                return Ok((I::Call { callee, args, attrs }, ret));
            }
            "call_indirect" => {
                c.expect_word("fn")?;
                let group = c.expect_group(Delim::Paren, "the parameter types")?;
                let (params, varargs) = c.params(group, false, false)?;
                let ret = match c.eat_punct(Punct::Arrow) {
                    Some(_) => Some(c.ty()?),
                    None => None,
                };
                let sig =
                    Signature { params: params.into_iter().map(|p| p.ty).collect(), ret, varargs };
                let callee = self.operand(c)?;
                let group = c.expect_group(Delim::Paren, "the arguments")?;
                let args = self.operand_list(c, group)?;
                let attrs = func_attrs(c)?;
                let ret = sig.ret.clone();
                return Ok((I::CallIndirect { sig: Box::new(sig), callee, args, attrs }, ret));
            }
            "extractlane" => {
                let ty = self.vector_type(c, opcode)?;
                let vector = self.typed(c, &ty)?;
                c.comma()?;
                let index = self.operand(c)?;
                let lane = ty.lane_type().clone();
                return Ok((I::ExtractLane { vector, index }, Some(lane)));
            }
            "insertlane" => {
                let ty = self.vector_type(c, opcode)?;
                let vector = self.typed(c, &ty)?;
                c.comma()?;
                let value = self.operand(c)?;
                c.comma()?;
                let index = self.operand(c)?;
                return Ok((I::InsertLane { vector, value, index }, Some(ty)));
            }
            "shuffle" => {
                let ty = self.vector_type(c, opcode)?;
                let a = self.typed(c, &ty)?;
                c.comma()?;
                let b = self.typed(c, &ty)?;
                c.comma()?;
                let group = c.expect_group(Delim::Bracket, "the lane mask")?;
                let mask = c.comma_list(group, "a mask lane", |c| match c.eat_word("undef") {
                    Some(_) => Ok(None),
                    None => c.u32("a lane index or `undef`").map(Some),
                })?;
                let result = Type::vector(ty.lane_type().clone(), mask.len() as u32);
                return Ok((I::Shuffle { args: [a, b], mask }, Some(result)));
            }
            "extractvalue" | "insertvalue" => {
                let ty = c.ty()?;
                let aggregate = self.typed(c, &ty)?;
                let value = match opcode {
                    "insertvalue" => {
                        c.comma()?;
                        Some(self.operand(c)?)
                    }
                    _ => None,
                };
                let mut indices = Vec::new();
                let mut field = ty.clone();
                while c.eat_punct(Punct::Comma).is_some() {
                    let span = c.here();
                    let index = c.u32("an index")?;
                    field = field.element_type(u64::from(index)).cloned().ok_or_else(|| {
                        Diagnostic::new(format!("index {index} is out of range for {field}"))
                            .with_span(span)
                            .with_label(format!("{field} has no element {index}"))
                    })?;
                    indices.push(index);
                }
                return Ok(match value {
                    Some(value) => (I::InsertValue { aggregate, value, indices }, Some(ty)),
                    None => (I::ExtractValue { aggregate, indices }, Some(field)),
                });
            }
            "atomicrmw" => {
                let volatile = c.eat_word("volatile").is_some();
                let (word, span) = c.any_word("an atomic operation (xchg, add, ...)")?;
                let op = AtomicRmwOp::from_name(word).ok_or_else(|| {
                    unknown(
                        span,
                        "atomic operation",
                        word,
                        AtomicRmwOp::ALL.iter().map(|o| o.name()),
                    )
                })?;
                let ty = c.ty()?;
                let ptr = self.operand(c)?;
                c.comma()?;
                let value = self.typed(c, &ty)?;
                let ordering = ordering(c)?;
                return Ok((I::AtomicRmw { op, ptr, value, ordering, volatile }, Some(ty)));
            }
            "cmpxchg" => {
                let weak = c.eat_word("weak").is_some();
                let volatile = c.eat_word("volatile").is_some();
                let ty = c.ty()?;
                let ptr = self.operand(c)?;
                c.comma()?;
                let expected = self.typed(c, &ty)?;
                c.comma()?;
                let new = self.typed(c, &ty)?;
                let success = ordering(c)?;
                let failure = ordering(c)?;
                let result = Type::structure(vec![ty, Type::I1], false);
                let data = I::CmpXchg { ptr, expected, new, success, failure, weak, volatile };
                return Ok((data, Some(result)));
            }
            "fence" => I::Fence { ordering: ordering(c)? },
            "jump" => I::Jump { dest: self.block_call(c)? },
            "brif" => {
                let cond = self.operand(c)?;
                c.comma()?;
                let then_dest = self.block_call(c)?;
                c.comma()?;
                let else_dest = self.block_call(c)?;
                I::Brif { cond, then_dest, else_dest }
            }
            "switch" => {
                let value = self.operand(c)?;
                c.comma()?;
                let default = self.block_call(c)?;
                let group = c.expect_group(Delim::Bracket, "the cases")?;
                let targets = c.comma_list(group, "a case", |c| {
                    let literal = match c.next() {
                        Some(Atom { kind: AtomKind::Int(text) | AtomKind::Word(text), span }) => {
                            CaseLiteral { text: text.clone(), span: *span }
                        }
                        _ => return Err(c.error("a case value")),
                    };
                    c.expect_punct(Punct::Colon)?;
                    Ok((literal, self.block_call(c)?))
                })?;
                let mut case_list = Vec::with_capacity(targets.len());
                for (literal, dest) in targets {
                    cases.push(literal);
                    case_list.push((0, dest));
                }
                I::Switch { value, default, cases: case_list }
            }
            "ret" => I::Return { value: if c.at_end() { None } else { Some(self.operand(c)?) } },
            "unreachable" => I::Unreachable,
            _ => {
                let mut error = Diagnostic::new(format!("unknown opcode `{opcode}`"))
                    .with_span(opcode_span)
                    .with_label("not an instruction");
                let close = close_names(opcode, crate::instructions::all_opcode_names());
                if !close.is_empty() {
                    error = error.with_note(format!("did you mean {}?", close.join(", ")));
                }
                return Err(error);
            }
        };
        Ok((data, None))
    }

    fn vector_type(&self, c: &mut Cursor<'_>, opcode: &str) -> PResult<Type> {
        let span = c.here();
        let ty = c.ty()?;
        if !ty.is_vector() {
            return Err(Diagnostic::new(format!("`{opcode}` needs a vector type, found {ty}"))
                .with_span(span)
                .with_label("expected a vector type"));
        }
        Ok(ty)
    }
}

/// Function attributes: the words left at the end of a call or a signature.
pub(crate) fn func_attrs(c: &mut Cursor<'_>) -> PResult<FuncAttrs> {
    let mut attrs = FuncAttrs::empty();
    while let Some(atom) = c.peek() {
        let AtomKind::Word(word) = &atom.kind else {
            break;
        };
        let attr = FuncAttrs::from_name(word).ok_or_else(|| {
            unknown(atom.span, "function attribute", word, FuncAttrs::NAMES.iter().map(|(_, n)| *n))
        })?;
        attrs.insert(attr);
        c.next();
    }
    Ok(attrs)
}

fn ordering(c: &mut Cursor<'_>) -> PResult<Ordering> {
    let (word, span) = c.any_word("a memory ordering (monotonic, seq_cst, ...)")?;
    Ordering::from_name(word).ok_or_else(|| {
        unknown(span, "memory ordering", word, Ordering::ALL.iter().map(|o| o.name()))
    })
}

/// "unknown X `w`", listing the valid names.
pub(crate) fn unknown<'n>(
    span: TextSpan,
    what: &str,
    word: &str,
    valid: impl Iterator<Item = &'n str>,
) -> Diagnostic {
    let valid: Vec<&str> = valid.collect();
    Diagnostic::new(format!("unknown {what} `{word}`"))
        .with_span(span)
        .with_label(format!("not a {what}"))
        .with_note(format!("expected one of: {}", valid.join(", ")))
}

/// Splits `! "file":line:col` off the end of an instruction's atoms.
fn split_debug_loc<'a>(src: &str, atoms: &'a [Atom]) -> PResult<(&'a [Atom], Option<DebugLoc>)> {
    let Some(bang) = atoms.iter().position(|a| a.is_punct(Punct::Bang)) else {
        return Ok((atoms, None));
    };
    let (ops, loc_atoms) = atoms.split_at(bang);
    let end = loc_atoms
        .last()
        .map_or_else(TextSpan::default, |a| TextSpan { start: a.span.end, end: a.span.end });
    let mut c = Cursor::new(src, loc_atoms.get(1..).unwrap_or_default(), end);
    let file = match c.next() {
        Some(Atom { kind: AtomKind::Str(bytes), span }) => match std::str::from_utf8(bytes) {
            Ok(file) => Arc::<str>::from(file),
            Err(_) => {
                return Err(Diagnostic::new("debug location file name is not valid UTF-8")
                    .with_span(*span)
                    .with_label("not UTF-8"))
            }
        },
        _ => {
            let c = Cursor::new(src, loc_atoms.get(1..).unwrap_or_default(), end);
            return Err(c.error("a quoted file name after `!` (`!\"file\":line:column`)"));
        }
    };
    c.expect_punct(Punct::Colon)?;
    let line = c.u32("a line number")?;
    c.expect_punct(Punct::Colon)?;
    let column = c.u32("a column number")?;
    c.finish("the debug location")?;
    Ok((ops, Some(DebugLoc { file, line, column })))
}

/// Names within a small edit distance of `word`, closest first.
pub(crate) fn close_names<'n>(word: &str, names: impl IntoIterator<Item = &'n str>) -> Vec<String> {
    // Every name is short: a long word is close to none, and is not worth the quadratic cost.
    if word.len() > 32 {
        return Vec::new();
    }
    let limit = if word.len() <= 3 { 1 } else { 2 };
    let mut close: Vec<(usize, &str)> = names
        .into_iter()
        .map(|n| (edit_distance(word, n), n))
        .filter(|(d, _)| *d <= limit)
        .collect();
    close.sort();
    close.into_iter().take(4).map(|(_, n)| format!("`{n}`")).collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row.get(j + 1).copied().unwrap_or(0);
            let best = substitute.min(previous + 1).min(row.get(j).copied().unwrap_or(0) + 1);
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = best;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("fadd", "fadd"), 0);
        assert_eq!(edit_distance("fad", "fadd"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let close = close_names("fmull", crate::instructions::all_opcode_names());
        assert_eq!(close.first().map(String::as_str), Some("`fmul`"));
        assert!(close_names("zzzzzz", crate::instructions::all_opcode_names()).is_empty());
    }
}
