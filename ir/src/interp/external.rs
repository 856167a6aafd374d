//! External functions, dispatched by name: libm (see `libm`), the C allocator, string and
//! memory functions, process exit, and formatted output (`printf` family) captured into the
//! interpreter's output buffers. Numeric conversions of `printf` are delegated to the C
//! library's `snprintf`, so the text is exactly what a native program prints.

use std::ffi::{c_char, c_int, c_void, CString};

use crate::function::Function;
use crate::heap::HeapFunction;
use crate::types::Type;

use super::libm;
use super::memory::{Access, AllocKind, Memory};
use super::value::Val;
use super::varargs::{FormatArgs, VaListArgs};
use super::{ErrorKind, Interpreter, R};

/// Alignment of blocks from `malloc` and friends (glibc on x86-64).
const MALLOC_ALIGN: u64 = 16;

extern "C" {
    fn snprintf(buf: *mut c_char, len: usize, format: *const c_char, ...) -> c_int;
}

/// Where formatted output goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Stream {
    Stdout,
    Stderr,
}

/// One argument of a single `snprintf` conversion.
enum CArg {
    Signed(i64),
    Unsigned(u64),
    Char(c_int),
    Double(f64),
    Str(CString),
    Pointer(u64),
}

/// Formats one conversion `spec` (e.g. `%-8.3f`) with the C library.
fn c_format(spec: &str, arg: &CArg) -> R<Vec<u8>> {
    let bad = || ErrorKind::Unsupported(format!("printf conversion `{spec}`"));
    let spec_c = CString::new(spec).map_err(|_| bad())?;
    let mut buf = vec![0u8; 128];
    loop {
        let ptr = buf.as_mut_ptr().cast::<c_char>();
        let len = buf.len();
        // SAFETY: `spec` is one conversion whose argument type matches the value passed;
        // snprintf writes at most `len` bytes into `buf`.
        let n = unsafe {
            match arg {
                CArg::Signed(v) => snprintf(ptr, len, spec_c.as_ptr(), *v as std::ffi::c_longlong),
                CArg::Unsigned(v) => {
                    snprintf(ptr, len, spec_c.as_ptr(), *v as std::ffi::c_ulonglong)
                }
                CArg::Char(c) => snprintf(ptr, len, spec_c.as_ptr(), *c),
                CArg::Double(x) => snprintf(ptr, len, spec_c.as_ptr(), *x),
                CArg::Str(s) => snprintf(ptr, len, spec_c.as_ptr(), s.as_ptr()),
                CArg::Pointer(p) => {
                    snprintf(ptr, len, spec_c.as_ptr(), *p as usize as *const c_void)
                }
            }
        };
        let n = usize::try_from(n).map_err(|_| bad())?;
        if n < len {
            buf.truncate(n);
            return Ok(buf);
        }
        if n > (1 << 26) {
            return Err(bad());
        }
        buf = vec![0u8; n + 1];
    }
}

/// Reads argument `i` as an integer (pointers give their address).
fn int_arg(name: &str, args: &[Val], i: usize) -> R<u128> {
    match args.get(i) {
        Some(Val::Int(v)) => Ok(*v),
        Some(Val::Ptr(p)) => Ok(u128::from(*p)),
        other => Err(ErrorKind::BadExternalCall {
            name: name.to_string(),
            detail: format!("argument {i} should be an integer, found {other:?}"),
        }),
    }
}

fn ptr_arg(name: &str, args: &[Val], i: usize) -> R<u64> {
    match args.get(i) {
        Some(Val::Ptr(p)) => Ok(*p),
        Some(Val::Int(v)) => Ok(*v as u64),
        other => Err(ErrorKind::BadExternalCall {
            name: name.to_string(),
            detail: format!("argument {i} should be a pointer, found {other:?}"),
        }),
    }
}

fn size_arg(name: &str, args: &[Val], i: usize) -> R<u64> {
    Ok(int_arg(name, args, i)? as u64)
}

fn float_arg(name: &str, args: &[Val], i: usize) -> R<f64> {
    match args.get(i) {
        Some(Val::F64(x)) => Ok(*x),
        Some(Val::F32(x)) => Ok(f64::from(*x)),
        other => Err(ErrorKind::BadExternalCall {
            name: name.to_string(),
            detail: format!("argument {i} should be a float, found {other:?}"),
        }),
    }
}

fn int(v: i64) -> Option<Val> {
    Some(Val::Int(v as u64 as u128))
}

impl<'m> Interpreter<'m> {
    /// Runs the external function `f` (a declaration) on `args`, whose types are `tys`.
    pub(crate) fn call_external(
        &mut self,
        f: &Function,
        args: Vec<Val>,
        tys: &[Type],
    ) -> R<Option<Val>> {
        let name = f.name.as_str();
        let _ = tys;
        let result = match libm::call(name, &args).or_else(|| super::nvvm::call(name, &args)) {
            Some(r) => Some(r?),
            None => self.call_libc(name, &args)?,
        };
        match (&f.signature.ret, result) {
            (None, _) => Ok(None),
            (Some(ty), Some(v)) => {
                v.coerce(ty).map(Some).ok_or_else(|| ErrorKind::BadExternalCall {
                    name: name.to_string(),
                    detail: format!("it returns {}, declared as returning {ty}", v.kind_name()),
                })
            }
            (Some(ty), None) => Err(ErrorKind::BadExternalCall {
                name: name.to_string(),
                detail: format!("it returns nothing, declared as returning {ty}"),
            }),
        }
    }

    fn call_libc(&mut self, name: &str, args: &[Val]) -> R<Option<Val>> {
        let ptr = |i| ptr_arg(name, args, i);
        let size = |i| size_arg(name, args, i);
        match HeapFunction::of(name) {
            Some(HeapFunction::Allocate(a)) => {
                let align = a.align.map(size).transpose()?.unwrap_or(MALLOC_ALIGN);
                let bytes = match a.count {
                    Some(count) => size(count)?.checked_mul(size(a.bytes)?),
                    None => Some(size(a.bytes)?),
                };
                let block = bytes.map_or(Val::Ptr(0), |n| self.malloc(n, align, a.zeroed()));
                let Some(out) = a.out else { return Ok(Some(block)) };
                let failed = block == Val::Ptr(0);
                self.mem.store(ptr(out)?, &Type::PTR, &block, Access::write("posix_memalign"))?;
                return Ok(int(if failed { 12 } else { 0 }));
            }
            Some(HeapFunction::Reallocate) => return Ok(Some(self.realloc(ptr(0)?, size(1)?)?)),
            Some(HeapFunction::Release) => {
                self.mem.free(ptr(0)?)?;
                return Ok(None);
            }
            None => {}
        }
        Ok(match name {
            "memcpy" | "memmove" => {
                let (dst, src, len) = (ptr(0)?, ptr(1)?, size(2)?);
                let op = if name == "memcpy" { "memcpy" } else { "memmove" };
                self.mem.copy(dst, src, len, name == "memmove", op)?;
                Some(Val::Ptr(dst))
            }
            "memset" => {
                let (dst, byte, len) = (ptr(0)?, int_arg(name, args, 1)? as u8, size(2)?);
                self.mem.fill(dst, byte, len, "memset")?;
                Some(Val::Ptr(dst))
            }
            "memcmp" => {
                let len = size(2)?;
                let a = self.mem.read_bytes(ptr(0)?, len, Access::read("memcmp"))?;
                let b = self.mem.read_bytes(ptr(1)?, len, Access::read("memcmp"))?;
                int(byte_difference(&a, &b))
            }
            "strlen" => int(self.mem.c_string(ptr(0)?, None, "strlen")?.len() as i64),
            "strcmp" => {
                let a = self.mem.c_string(ptr(0)?, None, "strcmp")?;
                let b = self.mem.c_string(ptr(1)?, None, "strcmp")?;
                let (mut a, mut b) = (a, b);
                a.push(0);
                b.push(0);
                int(byte_difference(&a, &b))
            }
            "strncmp" => {
                let n = size(2)?;
                let mut a = self.mem.c_string(ptr(0)?, Some(n), "strncmp")?;
                let mut b = self.mem.c_string(ptr(1)?, Some(n), "strncmp")?;
                // The terminator takes part in the comparison when it comes before `n`.
                for s in [&mut a, &mut b] {
                    if (s.len() as u64) < n {
                        s.push(0);
                    }
                }
                int(byte_difference(&a, &b))
            }
            "strcpy" | "strcat" => {
                let (dst, src) = (ptr(0)?, ptr(1)?);
                let len = self.mem.c_string(src, None, "strcpy")?.len() as u64 + 1;
                let start = match name {
                    "strcat" => dst + self.mem.c_string(dst, None, "strcat")?.len() as u64,
                    _ => dst,
                };
                self.mem.copy(start, src, len, false, "strcpy")?;
                Some(Val::Ptr(dst))
            }
            "strncpy" => {
                let (dst, src, n) = (ptr(0)?, ptr(1)?, size(2)?);
                let len = self.mem.c_string(src, Some(n), "strncpy")?.len() as u64;
                self.mem.copy(dst, src, len, false, "strncpy")?;
                // strncpy pads the rest of the destination with zeros.
                self.mem.fill(dst + len, 0, n - len, "strncpy")?;
                Some(Val::Ptr(dst))
            }
            "strchr" => {
                let s = ptr(0)?;
                let c = int_arg(name, args, 1)? as u8;
                let text = self.mem.c_string(s, None, "strchr")?;
                let found =
                    if c == 0 { Some(text.len()) } else { text.iter().position(|b| *b == c) };
                Some(Val::Ptr(found.map_or(0, |i| s + i as u64)))
            }
            "abs" => int(i64::from((int_arg(name, args, 0)? as u32 as i32).wrapping_abs())),
            "labs" | "llabs" => int((int_arg(name, args, 0)? as u64 as i64).wrapping_abs()),
            "abort" => return Err(ErrorKind::Abort),
            "exit" | "_exit" | "_Exit" => {
                return Err(ErrorKind::Exit(int_arg(name, args, 0)? as u32 as i32))
            }
            "__assert_fail" => {
                let text = |i: usize| -> String {
                    ptr(i)
                        .and_then(|p| self.mem.c_string(p, Some(4096), "__assert_fail"))
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_else(|_| "?".to_string())
                };
                let line = int_arg(name, args, 2).map(|l| l as u32).unwrap_or(0);
                return Err(ErrorKind::AssertionFailed(format!(
                    "{} ({}:{line})",
                    text(0),
                    text(1)
                )));
            }
            "printf" => {
                let text = self.format(name, args, 0)?;
                self.emit(Stream::Stdout, &text);
                int(text.len() as i64)
            }
            "fprintf" => {
                let stream = self.stream(name, ptr(0)?)?;
                let text = self.format(name, args, 1)?;
                self.emit(stream, &text);
                int(text.len() as i64)
            }
            "vprintf" => {
                let text = self.format_va(name, ptr(0)?, ptr(1)?)?;
                self.emit(Stream::Stdout, &text);
                int(text.len() as i64)
            }
            "vfprintf" => {
                let stream = self.stream(name, ptr(0)?)?;
                let text = self.format_va(name, ptr(1)?, ptr(2)?)?;
                self.emit(stream, &text);
                int(text.len() as i64)
            }
            "sprintf" | "snprintf" | "vsprintf" | "vsnprintf" => {
                let bounded = name.contains('n');
                let at = if bounded { 2 } else { 1 };
                let text = if name.starts_with('v') {
                    self.format_va(name, ptr(at)?, ptr(at + 1)?)?
                } else {
                    self.format(name, args, at)?
                };
                let capacity = if bounded { size(1)? } else { text.len() as u64 + 1 };
                if capacity > 0 {
                    let kept = (text.len() as u64).min(capacity - 1);
                    let mut bytes = text[..kept as usize].to_vec();
                    bytes.push(0);
                    let op = match name {
                        "sprintf" => "sprintf",
                        "snprintf" => "snprintf",
                        "vsprintf" => "vsprintf",
                        _ => "vsnprintf",
                    };
                    self.mem.write_bytes(ptr(0)?, &bytes, Access::write(op))?;
                }
                int(text.len() as i64)
            }
            "puts" => {
                let mut text = self.mem.c_string(ptr(0)?, None, "puts")?;
                text.push(b'\n');
                self.emit(Stream::Stdout, &text);
                int(text.len() as i64)
            }
            "fputs" => {
                let text = self.mem.c_string(ptr(0)?, None, "fputs")?;
                let stream = self.stream(name, ptr(1)?)?;
                self.emit(stream, &text);
                int(1)
            }
            "putchar" => {
                let c = int_arg(name, args, 0)? as u8;
                self.emit(Stream::Stdout, &[c]);
                int(i64::from(c))
            }
            "fputc" | "putc" => {
                let c = int_arg(name, args, 0)? as u8;
                let stream = self.stream(name, ptr(1)?)?;
                self.emit(stream, &[c]);
                int(i64::from(c))
            }
            "fwrite" => {
                let (data, item, count) = (ptr(0)?, size(1)?, size(2)?);
                let stream = self.stream(name, ptr(3)?)?;
                let len =
                    item.checked_mul(count).ok_or(ErrorKind::OutOfMemory { size: u64::MAX })?;
                let bytes = self.mem.read_bytes(data, len, Access::read("fwrite"))?;
                self.emit(stream, &bytes);
                int(count as i64)
            }
            "fflush" => int(0),
            // A float result and an int written through the second argument.
            "frexp" | "frexpf" | "lgamma_r" | "lgammaf_r" => {
                let lgamma = name.starts_with("lgamma");
                let (m, e) = match args.first() {
                    Some(Val::F32(x)) => {
                        let (m, e) = if lgamma { libm::lgammaf_r(*x) } else { libm::frexpf(*x) };
                        (Val::F32(m), e)
                    }
                    _ => {
                        let x = float_arg(name, args, 0)?;
                        let (m, e) = if lgamma { libm::lgamma_r(x) } else { libm::frexp(x) };
                        (Val::F64(m), e)
                    }
                };
                let e = Val::Int(u128::from(e as u32));
                self.mem.store(ptr(1)?, &Type::I32, &e, Access::write("store"))?;
                Some(m)
            }
            "modf" | "modff" => {
                let (frac, whole, ty) = match args.first() {
                    Some(Val::F32(x)) => {
                        let (f, i) = libm::modff(*x);
                        (Val::F32(f), Val::F32(i), Type::F32)
                    }
                    _ => {
                        let (f, i) = libm::modf(float_arg(name, args, 0)?);
                        (Val::F64(f), Val::F64(i), Type::F64)
                    }
                };
                self.mem.store(ptr(1)?, &ty, &whole, Access::write("store"))?;
                Some(frac)
            }
            "sincos" | "sincosf" => {
                let (s, c, ty) = match args.first() {
                    Some(Val::F32(x)) => {
                        let (s, c) = libm::sincosf(*x);
                        (Val::F32(s), Val::F32(c), Type::F32)
                    }
                    _ => {
                        let (s, c) = libm::sincos(float_arg(name, args, 0)?);
                        (Val::F64(s), Val::F64(c), Type::F64)
                    }
                };
                self.mem.store(ptr(1)?, &ty, &s, Access::write("store"))?;
                self.mem.store(ptr(2)?, &ty, &c, Access::write("store"))?;
                None
            }
            _ => return Err(ErrorKind::UnknownExternal(name.to_string())),
        })
    }

    /// A heap block, or null when it cannot be had (as C's allocator does).
    fn malloc(&mut self, size: u64, align: u64, zeroed: bool) -> Val {
        match self.mem.allocate(size, align, AllocKind::Heap, zeroed) {
            Ok(p) => Val::Ptr(p),
            Err(_) => Val::Ptr(0),
        }
    }

    /// `realloc`: a new block holding the old contents (and their initialized bits).
    fn realloc(&mut self, old: u64, size: u64) -> R<Val> {
        if old == 0 {
            return Ok(self.malloc(size, MALLOC_ALIGN, false));
        }
        let Some(old_size) = self.mem.heap_block_size(old) else {
            // Reports double free / invalid free with the right message.
            self.mem.free(old)?;
            return Err(ErrorKind::InvalidFree {
                addr: old,
                detail: "realloc of a non-heap pointer".into(),
            });
        };
        if size == 0 {
            self.mem.free(old)?;
            return Ok(Val::Ptr(0));
        }
        let new = self.malloc(size, MALLOC_ALIGN, false);
        if let Val::Ptr(new_addr @ 1..) = new {
            self.mem.copy(new_addr, old, old_size.min(size), false, "realloc")?;
            self.mem.free(old)?;
        }
        Ok(new)
    }

    fn stream(&self, name: &str, handle: u64) -> R<Stream> {
        if handle == self.streams.stdout {
            Ok(Stream::Stdout)
        } else if handle == self.streams.stderr {
            Ok(Stream::Stderr)
        } else {
            Err(ErrorKind::BadExternalCall {
                name: name.to_string(),
                detail: format!("stream {handle:#x} is neither stdout nor stderr"),
            })
        }
    }

    fn emit(&mut self, stream: Stream, bytes: &[u8]) {
        let (text, pending) = match stream {
            Stream::Stdout => (&mut self.output, &mut self.output_pending),
            Stream::Stderr => (&mut self.error_output, &mut self.error_pending),
        };
        append_utf8(text, pending, bytes);
    }

    /// Formats `printf`-style: the format string is argument `at`, values follow it.
    fn format(&mut self, name: &str, args: &[Val], at: usize) -> R<Vec<u8>> {
        let fmt = ptr_arg(name, args, at)?;
        self.format_from(name, fmt, &mut ValArgs { name, args, next: at + 1 })
    }

    /// Formats the format string at `fmt` with the arguments of the `va_list` at `ap`.
    fn format_va(&mut self, name: &str, fmt: u64, ap: u64) -> R<Vec<u8>> {
        self.format_from(name, fmt, &mut VaListArgs { name, ap })
    }

    /// Formats the format string at `fmt` with the values `values` yields.
    fn format_from(&mut self, name: &str, fmt: u64, values: &mut dyn FormatArgs) -> R<Vec<u8>> {
        let fmt = self.mem.c_string(fmt, None, "printf")?;
        let unsupported =
            |what: String| ErrorKind::BadExternalCall { name: name.to_string(), detail: what };
        let mut out = Vec::new();
        let mut i = 0;
        while i < fmt.len() {
            if fmt[i] != b'%' {
                out.push(fmt[i]);
                i += 1;
                continue;
            }
            let start = i;
            i += 1;
            let mut spec = String::from("%");
            while let Some(&c) = fmt.get(i).filter(|c| b"-+ #0".contains(c)) {
                spec.push(c as char);
                i += 1;
            }
            if fmt.get(i) == Some(&b'*') {
                let w = values.int(&mut self.mem, 32)? as u32 as i32;
                spec.push_str(&w.to_string());
                i += 1;
            } else {
                while let Some(&c) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
                    spec.push(c as char);
                    i += 1;
                }
            }
            let mut precision = None;
            if fmt.get(i) == Some(&b'.') {
                i += 1;
                let p = if fmt.get(i) == Some(&b'*') {
                    i += 1;
                    values.int(&mut self.mem, 32)? as u32 as i32
                } else {
                    let mut p = 0i32;
                    while let Some(&c) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
                        p = p.saturating_mul(10).saturating_add(i32::from(c - b'0'));
                        i += 1;
                    }
                    p
                };
                if p >= 0 {
                    spec.push_str(&format!(".{p}"));
                    precision = Some(p as u64);
                }
            }
            let mut length = String::new();
            while let Some(&c) = fmt.get(i).filter(|c| b"hlzjtLq".contains(c)) {
                length.push(c as char);
                i += 1;
            }
            let Some(&conv) = fmt.get(i) else {
                return Err(unsupported("format string ends inside a conversion".into()));
            };
            i += 1;
            let bits = match length.as_str() {
                "" => 32,
                "hh" => 8,
                "h" => 16,
                "l" | "ll" | "z" | "j" | "t" | "q" => 64,
                other => {
                    return Err(unsupported(format!(
                        "length modifier `{other}` in %{other}{}",
                        conv as char
                    )))
                }
            };
            let text = match conv {
                b'%' => b"%".to_vec(),
                b'd' | b'i' => {
                    let v =
                        crate::constant::sign_extend(values.int(&mut self.mem, bits)?, bits) as i64;
                    c_format(&format!("{spec}lld"), &CArg::Signed(v))?
                }
                b'u' | b'x' | b'X' | b'o' => {
                    let v = crate::constant::mask_to_width(values.int(&mut self.mem, bits)?, bits)
                        as u64;
                    c_format(&format!("{spec}ll{}", conv as char), &CArg::Unsigned(v))?
                }
                b'c' => {
                    let c = values.int(&mut self.mem, 32)? as u8;
                    c_format(&format!("{spec}c"), &CArg::Char(c_int::from(c)))?
                }
                b's' => {
                    let p = values.ptr(&mut self.mem)?;
                    let bytes = self.mem.c_string(p, precision, "printf")?;
                    let s =
                        CString::new(bytes).map_err(|_| unsupported("string with NUL".into()))?;
                    c_format(&format!("{spec}s"), &CArg::Str(s))?
                }
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' if length != "L" => {
                    let x = values.float(&mut self.mem)?;
                    c_format(&format!("{spec}{}", conv as char), &CArg::Double(x))?
                }
                b'p' => {
                    let p = values.ptr(&mut self.mem)?;
                    c_format(&format!("{spec}p"), &CArg::Pointer(p))?
                }
                _ => {
                    let text = String::from_utf8_lossy(&fmt[start..i]).into_owned();
                    return Err(unsupported(format!("conversion `{text}` is not supported")));
                }
            };
            out.extend_from_slice(&text);
        }
        Ok(out)
    }
}

/// The `printf` family's own arguments, after the format string.
struct ValArgs<'a> {
    name: &'a str,
    args: &'a [Val],
    next: usize,
}

impl ValArgs<'_> {
    fn take(&mut self) -> usize {
        self.next += 1;
        self.next - 1
    }
}

impl FormatArgs for ValArgs<'_> {
    fn int(&mut self, _: &mut Memory, _: u32) -> R<u128> {
        let i = self.take();
        int_arg(self.name, self.args, i)
    }

    fn float(&mut self, _: &mut Memory) -> R<f64> {
        let i = self.take();
        float_arg(self.name, self.args, i)
    }

    fn ptr(&mut self, _: &mut Memory) -> R<u64> {
        let i = self.take();
        ptr_arg(self.name, self.args, i)
    }
}

/// `memcmp`-style comparison: the difference of the first differing bytes.
fn byte_difference(a: &[u8], b: &[u8]) -> i64 {
    a.iter().zip(b).find(|(x, y)| x != y).map_or(0, |(x, y)| i64::from(*x) - i64::from(*y))
}

/// Appends bytes to a text buffer, decoding UTF-8 across calls; invalid bytes become
/// U+FFFD, an incomplete sequence at the end waits in `pending`.
pub(crate) fn append_utf8(text: &mut String, pending: &mut Vec<u8>, bytes: &[u8]) {
    pending.extend_from_slice(bytes);
    loop {
        match std::str::from_utf8(pending) {
            Ok(s) => {
                text.push_str(s);
                pending.clear();
                return;
            }
            Err(e) => {
                let good = e.valid_up_to();
                text.push_str(&String::from_utf8_lossy(&pending[..good]));
                match e.error_len() {
                    Some(bad) => {
                        text.push('\u{FFFD}');
                        pending.drain(..good + bad);
                    }
                    None => {
                        pending.drain(..good);
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_formatting() {
        assert_eq!(c_format("%5.2f", &CArg::Double(1.23456)).unwrap(), b" 1.23");
        assert_eq!(c_format("%e", &CArg::Double(12345.678)).unwrap(), b"1.234568e+04");
        assert_eq!(c_format("%g", &CArg::Double(0.0001)).unwrap(), b"0.0001");
        assert_eq!(c_format("%-4lld|", &CArg::Signed(-7)).unwrap(), b"-7  |");
        assert_eq!(c_format("%llx", &CArg::Unsigned(255)).unwrap(), b"ff");
        assert_eq!(c_format("%p", &CArg::Pointer(0x10)).unwrap(), b"0x10");
        assert_eq!(c_format("%.300f", &CArg::Double(1.0)).unwrap().len(), 302);
    }

    #[test]
    fn utf8_across_writes() {
        let (mut text, mut pending) = (String::new(), Vec::new());
        append_utf8(&mut text, &mut pending, &[b'a', 0xc3]);
        assert_eq!(text, "a");
        append_utf8(&mut text, &mut pending, &[0xa9, 0xff, b'b']);
        assert_eq!(text, "a\u{e9}\u{FFFD}b");
    }
}
