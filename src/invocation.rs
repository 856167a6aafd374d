//! Function invocations written as text, shared by `; run:` filetest lines and
//! `adc interp`: `@f(1, 2.5, $buf = [f64 1.0, 2.0]) == 3.5 ; $buf == [f64 2.0, 4.0]`.
//!
//! Literals are typed by the callee's signature. A `[T a, b]` literal under a `ptr`
//! parameter becomes a fresh heap buffer; `$name = ` names it for later clauses. Results
//! compare bit-exactly, except that an expected `nan` matches any NaN.

use adc_ir::interp::{Interpreter, Val};
use adc_ir::{FuncId, Module, Type};

/// A parsed invocation; literals stay text until the signature types them.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub function: String,
    pub args: Vec<Arg>,
    pub expect: Option<Expect>,
    pub clauses: Vec<Clause>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// `$name` bound to a buffer argument.
    pub binding: Option<String>,
    pub literal: Literal,
}

/// A literal before typing: an atom (`1`, `-0.0`, `nan`, `true`, `null`), a list
/// (`[1, 2]`, optionally with an element type: `[f64 1.0, 2.0]`) or a struct (`{1, 2}`).
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Atom(String),
    List { elem: Option<Type>, items: Vec<Literal> },
    Struct(Vec<Literal>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Value(Literal),
    /// The call fails with an error whose message contains this text.
    Error(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    /// `$name == [T ...]`: the buffer's contents after the call.
    Buffer { name: String, expected: Literal },
    /// `output == "text"`: what the program printed.
    Output(String),
}

/// What a successful evaluation observed, for printing by `adc interp`.
#[derive(Debug, Default)]
pub struct Outcome {
    pub result: Option<String>,
    pub output: String,
    pub buffers: Vec<(String, String)>,
}

impl Invocation {
    pub fn parse(text: &str) -> Result<Invocation, String> {
        let mut cursor = Cursor { text, pos: 0 };
        let invocation = cursor.invocation()?;
        cursor.skip_ws();
        if cursor.pos < text.len() {
            return Err(format!("unexpected `{}`", &text[cursor.pos..]));
        }
        Ok(invocation)
    }

    /// Runs the call in a fresh interpreter and checks every expectation.
    pub fn evaluate(&self, module: &Module, fuel: Option<u64>) -> Result<Outcome, String> {
        let func = module
            .function_by_name(&self.function)
            .ok_or_else(|| format!("no function @{} in the module", self.function))?;
        let mut interp = Interpreter::new(module).map_err(|e| e.to_string())?;
        if let Some(fuel) = fuel {
            interp.set_fuel(fuel);
        }
        let (args, buffers) = self.materialize_args(module, func, &mut interp)?;
        // `main` runs as a program: the module's constructors first, destructors after.
        let result = match self.function.as_str() {
            "main" => interp.call_program(func, &args),
            _ => interp.call(func, &args),
        };
        let ret_ty = module.functions[func].signature.ret.clone();
        let mut outcome = Outcome { output: interp.output().to_string(), ..Outcome::default() };
        match (&self.expect, result) {
            (Some(Expect::Error(text)), Ok(value)) => {
                let got = describe_result(value.as_ref(), ret_ty.as_ref());
                return Err(format!("expected an error containing \"{text}\", got {got}"));
            }
            (Some(Expect::Error(text)), Err(e)) => {
                let message = e.to_string();
                if !message.contains(text.as_str()) {
                    return Err(format!("expected an error containing \"{text}\", got: {message}"));
                }
                return Ok(outcome);
            }
            (_, Err(e)) => return Err(e.to_diagnostic().to_string()),
            (expect, Ok(value)) => {
                if let (Some(v), Some(ty)) = (&value, &ret_ty) {
                    outcome.result = Some(format_val(v, ty));
                }
                if let Some(Expect::Value(expected)) = expect {
                    let ty = ret_ty.as_ref().ok_or("expected a value from a void function")?;
                    let want = literal_to_val(expected, ty)?;
                    let got = value.ok_or("the function returned no value")?;
                    if !matches_expected(&got, &want) {
                        return Err(format!(
                            "expected {}, got {}",
                            format_val(&want, ty),
                            format_val(&got, ty)
                        ));
                    }
                }
            }
        }
        for (name, ptr, elem, len) in &buffers {
            let values = interp.read(ptr, elem, *len).map_err(|e| e.to_string())?;
            outcome.buffers.push((name.clone(), format_buffer(elem, &values)));
        }
        for clause in &self.clauses {
            match clause {
                Clause::Output(expected) => {
                    if &outcome.output != expected {
                        return Err(format!(
                            "expected output {:?}, got {:?}",
                            expected, outcome.output
                        ));
                    }
                }
                Clause::Buffer { name, expected } => {
                    let (_, ptr, elem, len) = buffers
                        .iter()
                        .find(|(n, ..)| n == name)
                        .ok_or_else(|| format!("no buffer named ${name} in the arguments"))?;
                    check_buffer(&interp, name, ptr, elem, *len, expected)?;
                }
            }
        }
        Ok(outcome)
    }

    /// Types the arguments against the signature, allocating buffers for list literals
    /// under pointer parameters. Returns the values and the named buffers.
    #[allow(clippy::type_complexity)]
    fn materialize_args(
        &self,
        module: &Module,
        func: FuncId,
        interp: &mut Interpreter<'_>,
    ) -> Result<(Vec<Val>, Vec<(String, Val, Type, usize)>), String> {
        let sig = &module.functions[func].signature;
        if self.args.len() != sig.params.len() {
            return Err(format!(
                "@{} takes {} arguments, the invocation passes {}",
                self.function,
                sig.params.len(),
                self.args.len()
            ));
        }
        let mut values = Vec::new();
        let mut buffers = Vec::new();
        for (arg, ty) in self.args.iter().zip(&sig.params) {
            match (&arg.literal, ty) {
                (Literal::List { elem, items }, Type::Ptr(_)) => {
                    let elem = elem.clone().ok_or_else(|| {
                        "a buffer argument needs an element type: [f64 1.0, 2.0]".to_string()
                    })?;
                    let vals: Vec<Val> =
                        items.iter().map(|l| literal_to_val(l, &elem)).collect::<Result<_, _>>()?;
                    let ptr = interp.alloc(&elem, &vals).map_err(|e| e.to_string())?;
                    if let Some(name) = &arg.binding {
                        buffers.push((name.clone(), ptr.clone(), elem, vals.len()));
                    }
                    values.push(ptr);
                }
                (literal, ty) => {
                    if arg.binding.is_some() {
                        return Err("only buffer arguments ([T ...]) can be named".into());
                    }
                    values.push(literal_to_val(literal, ty)?);
                }
            }
        }
        Ok((values, buffers))
    }
}

fn check_buffer(
    interp: &Interpreter<'_>,
    name: &str,
    ptr: &Val,
    elem: &Type,
    len: usize,
    expected: &Literal,
) -> Result<(), String> {
    let Literal::List { elem: want_elem, items } = expected else {
        return Err(format!("${name} must be compared with a [T ...] list"));
    };
    let want_elem = want_elem.as_ref().unwrap_or(elem);
    if items.len() > len || want_elem.size() != elem.size() {
        return Err(format!("${name} holds {len} x {elem}; the check reads past it"));
    }
    let got = interp.read(ptr, want_elem, items.len()).map_err(|e| e.to_string())?;
    let want: Vec<Val> =
        items.iter().map(|l| literal_to_val(l, want_elem)).collect::<Result<_, _>>()?;
    if got.len() != want.len() || !got.iter().zip(&want).all(|(g, w)| matches_expected(g, w)) {
        return Err(format!(
            "${name}: expected {}, got {}",
            format_buffer(want_elem, &want),
            format_buffer(want_elem, &got)
        ));
    }
    Ok(())
}

fn describe_result(value: Option<&Val>, ty: Option<&Type>) -> String {
    match (value, ty) {
        (Some(v), Some(ty)) => format_val(v, ty),
        _ => "no error".to_string(),
    }
}

/// Bitwise equality, except that an expected NaN matches any NaN.
pub(crate) fn matches_expected(got: &Val, want: &Val) -> bool {
    match (got, want) {
        (Val::F64(g), Val::F64(w)) => (w.is_nan() && g.is_nan()) || g.to_bits() == w.to_bits(),
        (Val::F32(g), Val::F32(w)) => (w.is_nan() && g.is_nan()) || g.to_bits() == w.to_bits(),
        (Val::Vector(g), Val::Vector(w)) | (Val::Aggregate(g), Val::Aggregate(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(g, w)| matches_expected(g, w))
        }
        (g, w) => g == w,
    }
}

/// Types a literal: `ty` decides how an atom is read.
pub fn literal_to_val(literal: &Literal, ty: &Type) -> Result<Val, String> {
    match (literal, ty) {
        (Literal::Atom(atom), ty) if ty.is_scalar() => atom_to_val(atom, ty),
        (Literal::List { items, .. }, Type::Vector(elem, n)) if items.len() == *n as usize => {
            let lanes = items.iter().map(|l| literal_to_val(l, elem)).collect::<Result<_, _>>()?;
            Ok(Val::Vector(lanes))
        }
        (Literal::List { items, .. }, Type::Array(elem, n)) if items.len() as u64 == *n => {
            let elems = items.iter().map(|l| literal_to_val(l, elem)).collect::<Result<_, _>>()?;
            Ok(Val::Aggregate(elems))
        }
        (Literal::Struct(items), Type::Struct(s)) if items.len() == s.fields.len() => {
            let fields = items
                .iter()
                .zip(&s.fields)
                .map(|(l, t)| literal_to_val(l, t))
                .collect::<Result<_, _>>()?;
            Ok(Val::Aggregate(fields))
        }
        (literal, ty) => Err(format!("{literal:?} is not a literal of type {ty}")),
    }
}

fn atom_to_val(atom: &str, ty: &Type) -> Result<Val, String> {
    let bad = || format!("`{atom}` is not a literal of type {ty}");
    match ty {
        Type::F64 => {
            parse_float_bits(atom, 64).map(|b| Val::F64(f64::from_bits(b))).ok_or_else(bad)
        }
        Type::F32 => {
            parse_float_bits(atom, 32).map(|b| Val::F32(f32::from_bits(b as u32))).ok_or_else(bad)
        }
        Type::Ptr(_) => match atom {
            "null" => Ok(Val::Ptr(0)),
            _ => parse_int(atom, 64).map(|v| Val::Ptr(v as u64)).ok_or_else(bad),
        },
        _ => {
            let bits = ty.int_bits().ok_or_else(bad)?;
            parse_int(atom, bits).map(Val::Int).ok_or_else(bad)
        }
    }
}

/// Integer literal in `[-2^(w-1), 2^w)`, masked to `bits`; `true`/`false` for any width.
fn parse_int(atom: &str, bits: u32) -> Option<u128> {
    let value: i128 = match atom {
        "true" => 1,
        "false" => 0,
        _ if atom.starts_with('-') => atom.parse().ok()?,
        _ => atom.parse::<u128>().ok()? as i128,
    };
    let fits = bits >= 128 || {
        let (min, max) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
        (min..=max).contains(&value)
    };
    fits.then(|| adc_ir::constant::mask_to_width(value as u128, bits))
}

/// Raw bits of a float literal: decimal, `inf`, `-inf`, `nan`, `0x` bit pattern.
fn parse_float_bits(atom: &str, bits: u32) -> Option<u64> {
    if let Some(hex) = atom.strip_prefix("0x") {
        let raw = u64::from_str_radix(hex, 16).ok()?;
        return (bits == 64 || raw <= u64::from(u32::MAX)).then_some(raw);
    }
    let text = match atom {
        "inf" | "+inf" => "inf",
        "-inf" => "-inf",
        "nan" => "NaN",
        "-nan" => "-NaN",
        other if other.parse::<f64>().is_ok() => other,
        _ => return None,
    };
    if bits == 32 {
        text.parse::<f32>().ok().map(|f| u64::from(f.to_bits()))
    } else {
        text.parse::<f64>().ok().map(f64::to_bits)
    }
}

/// A value in the literal syntax, so a failure message can be pasted back into a test.
pub fn format_val(val: &Val, ty: &Type) -> String {
    match (val, ty) {
        (Val::F64(f), _) => format_float(*f, f.to_bits(), false),
        (Val::F32(f), _) => format_float(f64::from(*f), u64::from(f.to_bits()), true),
        (Val::Ptr(0), _) => "null".into(),
        (Val::Ptr(p), _) => format!("{p:#x}"),
        (Val::Int(v), ty) => match ty.int_bits() {
            Some(1) => (if *v & 1 == 1 { "true" } else { "false" }).into(),
            Some(bits) => adc_ir::constant::sign_extend(*v, bits).to_string(),
            None => v.to_string(),
        },
        (Val::Vector(items), ty) => format!("[{}]", join(items, ty.lane_type())),
        (Val::Aggregate(items), Type::Array(elem, _)) => format!("[{}]", join(items, elem)),
        (Val::Aggregate(items), Type::Struct(s)) => {
            let parts: Vec<_> =
                items.iter().zip(&s.fields).map(|(v, t)| format_val(v, t)).collect();
            format!("{{{}}}", parts.join(", "))
        }
        (other, _) => format!("{other:?}"),
    }
}

/// Shortest round-trip decimal; a NaN shows its bits, which tell NaNs apart.
fn format_float(value: f64, bits: u64, is_f32: bool) -> String {
    if value.is_nan() {
        let digits = if is_f32 { 8 } else { 16 };
        format!("nan (0x{bits:0digits$x})")
    } else if value.is_infinite() {
        (if value > 0.0 { "inf" } else { "-inf" }).into()
    } else if is_f32 {
        format!("{:?}", value as f32)
    } else {
        format!("{value:?}")
    }
}

fn join(items: &[Val], ty: &Type) -> String {
    items.iter().map(|v| format_val(v, ty)).collect::<Vec<_>>().join(", ")
}

pub(crate) fn format_buffer(elem: &Type, values: &[Val]) -> String {
    format!("[{elem} {}]", join(values, elem))
}

/// A small recursive-descent reader for the invocation syntax.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("expected `{token}` at `{}`", self.rest()))
        }
    }

    fn word(&mut self) -> String {
        self.skip_ws();
        let len = self
            .rest()
            .find(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '$'))
            })
            .unwrap_or(self.rest().len());
        let word = &self.rest()[..len];
        self.pos += len;
        word.to_string()
    }

    fn invocation(&mut self) -> Result<Invocation, String> {
        self.expect("@")?;
        let function = self.word();
        if function.is_empty() {
            return Err("expected a function name after `@`".into());
        }
        self.expect("(")?;
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.arg()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut expect = None;
        if self.eat("==") {
            self.skip_ws();
            expect = Some(if self.rest().starts_with("error") {
                self.pos += "error".len();
                Expect::Error(self.string()?)
            } else {
                Expect::Value(self.literal()?)
            });
        }
        let mut clauses = Vec::new();
        while self.eat(";") {
            self.skip_ws();
            if self.eat("$") {
                let name = self.word();
                self.expect("==")?;
                clauses.push(Clause::Buffer { name, expected: self.literal()? });
            } else if self.eat("output") {
                self.expect("==")?;
                clauses.push(Clause::Output(self.string()?));
            } else {
                return Err(format!("expected `$name ==` or `output ==` at `{}`", self.rest()));
            }
        }
        Ok(Invocation { function, args, expect, clauses })
    }

    fn arg(&mut self) -> Result<Arg, String> {
        let mut binding = None;
        if self.eat("$") {
            binding = Some(self.word());
            self.expect("=")?;
        }
        Ok(Arg { binding, literal: self.literal()? })
    }

    fn literal(&mut self) -> Result<Literal, String> {
        if self.eat("[") {
            let elem = self.element_type();
            let items = self.items("]")?;
            Ok(Literal::List { elem, items })
        } else if self.eat("{") {
            Ok(Literal::Struct(self.items("}")?))
        } else {
            let atom = self.word();
            if atom.is_empty() {
                Err(format!("expected a literal at `{}`", self.rest()))
            } else {
                Ok(Literal::Atom(atom))
            }
        }
    }

    /// An optional element type right after `[`: a scalar name or `<N x T>`.
    fn element_type(&mut self) -> Option<Type> {
        let start = self.pos;
        self.skip_ws();
        if let Some(ty) = self.scalar_or_vector_type() {
            return Some(ty);
        }
        self.pos = start;
        None
    }

    fn scalar_or_vector_type(&mut self) -> Option<Type> {
        if self.eat("<") {
            let lanes: u32 = self.word().parse().ok()?;
            if self.word() != "x" {
                return None;
            }
            let elem = self.scalar_or_vector_type()?;
            self.eat(">").then(|| Type::vector(elem, lanes))
        } else {
            Type::scalar_from_name(&self.word())
        }
    }

    fn items(&mut self, close: &str) -> Result<Vec<Literal>, String> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(self.literal()?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(",")?;
        }
    }

    /// A double-quoted string with `\XX` hex escapes (and `\n`, `\t`, `\\`, `\"`).
    fn string(&mut self) -> Result<String, String> {
        self.expect("\"")?;
        let mut bytes = Vec::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return String::from_utf8(bytes).map_err(|_| "string is not UTF-8".into());
                }
                '\\' => {
                    let escaped = match chars.next().map(|(_, c)| c) {
                        Some('n') => b'\n',
                        Some('t') => b'\t',
                        Some('\\') => b'\\',
                        Some('"') => b'"',
                        Some(h) => {
                            let l = chars.next().map(|(_, c)| c).ok_or("unfinished escape")?;
                            let hex: String = [h, l].iter().collect();
                            u8::from_str_radix(&hex, 16)
                                .map_err(|_| format!("bad escape \\{hex}"))?
                        }
                        None => return Err("unfinished escape".into()),
                    };
                    bytes.push(escaped);
                }
                c => {
                    let mut buf = [0; 4];
                    bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        Err("unterminated string".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_invocation() {
        let inv = Invocation::parse(
            "@scale($a = [f64 1.0, 2.0], -2.5, 2) == 3 ; $a == [f64 2.0, 4.0] ; output == \"x\\0A\"",
        )
        .unwrap();
        assert_eq!(inv.function, "scale");
        assert_eq!(inv.args.len(), 3);
        assert_eq!(inv.args[0].binding.as_deref(), Some("a"));
        assert_eq!(
            inv.args[0].literal,
            Literal::List {
                elem: Some(Type::F64),
                items: vec![Literal::Atom("1.0".into()), Literal::Atom("2.0".into())]
            }
        );
        assert_eq!(inv.expect, Some(Expect::Value(Literal::Atom("3".into()))));
        assert_eq!(inv.clauses[1], Clause::Output("x\n".into()));
    }

    #[test]
    fn parses_expected_errors_and_void_calls() {
        let inv = Invocation::parse("@div(1, 0) == error \"division by zero\"").unwrap();
        assert_eq!(inv.expect, Some(Expect::Error("division by zero".into())));
        assert_eq!(Invocation::parse("@f()").unwrap().args, vec![]);
        assert!(Invocation::parse("@f(1").is_err());
        assert!(Invocation::parse("f(1)").is_err());
    }

    #[test]
    fn literals_are_typed_by_the_signature() {
        let atom = |s: &str| Literal::Atom(s.into());
        assert_eq!(literal_to_val(&atom("-1"), &Type::I8), Ok(Val::Int(0xff)));
        assert_eq!(literal_to_val(&atom("255"), &Type::I8), Ok(Val::Int(0xff)));
        assert!(literal_to_val(&atom("256"), &Type::I8).is_err());
        assert_eq!(literal_to_val(&atom("true"), &Type::I1), Ok(Val::Int(1)));
        assert_eq!(literal_to_val(&atom("-0.0"), &Type::F64), Ok(Val::F64(-0.0)));
        assert_eq!(literal_to_val(&atom("1"), &Type::F32), Ok(Val::F32(1.0)));
        let nan = literal_to_val(&atom("0x7ff8000000000001"), &Type::F64).unwrap();
        assert!(matches!(nan, Val::F64(f) if f.to_bits() == 0x7ff8000000000001));
        assert!(matches_expected(&nan, &Val::F64(f64::NAN)));
        assert!(!matches_expected(&Val::F64(0.0), &Val::F64(-0.0)));
    }
}
