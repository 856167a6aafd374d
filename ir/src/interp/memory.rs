//! The interpreter's memory: byte-addressed, little-endian, with an "initialized" bit per
//! byte. Every allocation (global, stack `alloca`, heap block) gets its own address range,
//! separated from its neighbours by a guard gap and never reused, so that out-of-bounds
//! accesses, use after free and use of dead stack memory are all detected. Also holds the
//! encoding of values into bytes with the layout of `types.rs` (bit-packed `i1` vectors).

use std::collections::BTreeMap;

use crate::types::Type;

use super::value::{leaf_count, malformed, Val};
use super::{ErrorKind, R};

/// The first address handed out; everything below (null included) is never valid.
const FIRST_ADDRESS: u64 = 0x1_0000;
/// Bytes left unused after every allocation.
const GUARD: u64 = 64;
/// Minimum alignment of every allocation.
const MIN_ALIGN: u64 = 16;
/// Limit on the bytes of all live allocations together.
pub(crate) const MAX_LIVE_BYTES: u64 = 1 << 30;
/// Function addresses live in their own region above all data.
pub(crate) const FUNC_BASE: u64 = 0xF000_0000_0000_0000;
/// Distance between two function addresses.
pub(crate) const FUNC_STRIDE: u64 = 16;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AllocKind {
    Global {
        name: String,
        constant: bool,
    },
    /// A global declared without a definition: any access is an error.
    ExternGlobal {
        name: String,
    },
    Stack {
        func: String,
    },
    Heap,
    /// The object behind `stdout`/`stderr`.
    Stream,
}

impl AllocKind {
    fn describe(&self) -> String {
        match self {
            AllocKind::Global { name, .. } => format!("global @{name}"),
            AllocKind::ExternGlobal { name } => format!("external global @{name}"),
            AllocKind::Stack { func } => format!("alloca in @{func}"),
            AllocKind::Heap => "heap block".to_string(),
            AllocKind::Stream => "FILE object".to_string(),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Live,
    /// A heap block after `free`.
    Freed,
    /// An `alloca` whose function has returned.
    Dead,
}

#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub size: u64,
    pub kind: AllocKind,
    pub state: State,
    bytes: Vec<u8>,
    init: Vec<bool>,
}

#[derive(Debug)]
pub(crate) struct Memory {
    allocs: BTreeMap<u64, Allocation>,
    next: u64,
    live_bytes: u64,
    /// `Some(byte)`: never-written bytes read as `byte` instead of being an error.
    undef_fill: Option<u8>,
}

impl Default for Memory {
    fn default() -> Self {
        Memory { allocs: BTreeMap::new(), next: FIRST_ADDRESS, live_bytes: 0, undef_fill: None }
    }
}

/// Size of a type in bytes, with overflow checks (`None` when absurdly large).
pub(crate) fn checked_size(ty: &Type) -> Option<u64> {
    let size = match ty {
        Type::Array(elem, n) => checked_size(elem)?.checked_mul(*n)?,
        Type::Struct(s) => {
            let mut offset = 0u64;
            let mut align = 1u64;
            for field in &s.fields {
                // Size first: once it is known to be bounded, `align` cannot overflow.
                let field_size = checked_size(field)?;
                let field_align = if s.packed { 1 } else { field.align() };
                offset = offset.checked_next_multiple_of(field_align)?;
                offset = offset.checked_add(field_size)?;
                align = align.max(field_align);
            }
            offset.checked_next_multiple_of(align)?
        }
        // Vectors hold scalars only; anything else is malformed and refused here.
        Type::Vector(elem, _) if !elem.is_scalar() => return None,
        other => other.size(),
    };
    (size <= MAX_LIVE_BYTES).then_some(size)
}

/// Number of bytes a load or store of `ty` touches: the size, except that a vector's
/// trailing alignment padding is not touched (LLVM's store size).
pub(crate) fn store_size(ty: &Type) -> R<u64> {
    let too_big = || ErrorKind::Unsupported(format!("type {ty} is too large"));
    match ty {
        Type::Vector(elem, _) if !elem.is_scalar() => Err(too_big()),
        Type::Vector(elem, n) => {
            let lane_bits = if **elem == Type::I1 { 1 } else { elem.size() * 8 };
            Ok((lane_bits * u64::from(*n)).div_ceil(8))
        }
        other => checked_size(other).ok_or_else(too_big),
    }
}

/// Writes `val` of type `ty` into `bytes` (at least `store_size(ty)` long) and marks the
/// bytes it covers in `init`; padding between fields is left alone.
pub(crate) fn encode(ty: &Type, val: &Val, bytes: &mut [u8], init: &mut [bool]) -> R<()> {
    let mismatch = || malformed(format!("{} stored as {ty}", val.kind_name()));
    let put = |bytes: &mut [u8], init: &mut [bool], data: &[u8]| -> R<()> {
        let n = data.len();
        let small = || malformed("value larger than its slot");
        bytes.get_mut(..n).ok_or_else(small)?.copy_from_slice(data);
        init.get_mut(..n).ok_or_else(small)?.fill(true);
        Ok(())
    };
    match (ty, val) {
        (t, Val::Int(v)) if t.is_int() => put(bytes, init, &v.to_le_bytes()[..t.size() as usize]),
        (Type::Ptr(_), Val::Ptr(p)) => put(bytes, init, &p.to_le_bytes()),
        (Type::Ptr(_), Val::Int(v)) => put(bytes, init, &(*v as u64).to_le_bytes()),
        (Type::F32, Val::F32(x)) => put(bytes, init, &x.to_bits().to_le_bytes()),
        (Type::F64, Val::F64(x)) => put(bytes, init, &x.to_bits().to_le_bytes()),
        (Type::Vector(elem, n), Val::Vector(lanes)) if lanes.len() as u64 == u64::from(*n) => {
            if **elem == Type::I1 {
                let mut packed = vec![0u8; lanes.len().div_ceil(8)];
                for (i, lane) in lanes.iter().enumerate() {
                    if lane.as_bool()? {
                        packed[i / 8] |= 1 << (i % 8);
                    }
                }
                return put(bytes, init, &packed);
            }
            let stride = elem.size() as usize;
            for (i, lane) in lanes.iter().enumerate() {
                let at = i * stride;
                let (b, m) = (
                    bytes.get_mut(at..).ok_or_else(mismatch)?,
                    init.get_mut(at..).ok_or_else(mismatch)?,
                );
                encode(elem, lane, b, m)?;
            }
            Ok(())
        }
        (Type::Array(elem, n), Val::Aggregate(elems)) if elems.len() as u64 == *n => {
            let stride = elem.size() as usize;
            for (i, e) in elems.iter().enumerate() {
                let at = i * stride;
                let (b, m) = (
                    bytes.get_mut(at..).ok_or_else(mismatch)?,
                    init.get_mut(at..).ok_or_else(mismatch)?,
                );
                encode(elem, e, b, m)?;
            }
            Ok(())
        }
        (Type::Struct(s), Val::Aggregate(fields)) if fields.len() == s.fields.len() => {
            for ((field_ty, f), at) in s.fields.iter().zip(fields).zip(s.field_offsets()) {
                let at = at as usize;
                let (b, m) = (
                    bytes.get_mut(at..).ok_or_else(mismatch)?,
                    init.get_mut(at..).ok_or_else(mismatch)?,
                );
                encode(field_ty, f, b, m)?;
            }
            Ok(())
        }
        _ => Err(mismatch()),
    }
}

/// Reads a value of type `ty` from `bytes`; only the bytes that hold data (not padding) must
/// be initialized: `uninit(offset)` makes the error for the first one that is not.
pub(crate) fn decode(
    ty: &Type,
    bytes: &[u8],
    init: &[bool],
    uninit: &dyn Fn(usize) -> ErrorKind,
) -> R<Val> {
    let short = || malformed(format!("slot too small for {ty}"));
    let take = |n: usize| -> R<&[u8]> {
        let data = bytes.get(..n).ok_or_else(short)?;
        let flags = init.get(..n).ok_or_else(short)?;
        match flags.iter().position(|b| !b) {
            Some(i) => Err(uninit(i)),
            None => Ok(data),
        }
    };
    let sub = |at: usize| -> R<(&[u8], &[bool])> {
        Ok((bytes.get(at..).ok_or_else(short)?, init.get(at..).ok_or_else(short)?))
    };
    match ty {
        t if t.is_int() => {
            let n = t.size() as usize;
            let mut buf = [0u8; 16];
            buf[..n].copy_from_slice(take(n)?);
            let v = u128::from_le_bytes(buf);
            Ok(Val::Int(if *t == Type::I1 { v & 1 } else { v }))
        }
        Type::Ptr(_) => Ok(Val::Ptr(u64::from_le_bytes(take(8)?.try_into().map_err(|_| short())?))),
        Type::F32 => Ok(Val::F32(f32::from_bits(u32::from_le_bytes(
            take(4)?.try_into().map_err(|_| short())?,
        )))),
        Type::F64 => Ok(Val::F64(f64::from_bits(u64::from_le_bytes(
            take(8)?.try_into().map_err(|_| short())?,
        )))),
        Type::Vector(elem, n) => {
            let n = *n as usize;
            if **elem == Type::I1 {
                let packed = take(n.div_ceil(8))?;
                return Ok(Val::Vector(
                    (0..n).map(|i| Val::bool(packed[i / 8] >> (i % 8) & 1 == 1)).collect(),
                ));
            }
            let stride = elem.size() as usize;
            let lanes = (0..n)
                .map(|i| {
                    let (b, m) = sub(i * stride)?;
                    decode(elem, b, m, &|o| uninit(i * stride + o))
                })
                .collect::<R<_>>()?;
            Ok(Val::Vector(lanes))
        }
        Type::Array(elem, n) => {
            let stride = elem.size() as usize;
            let elems = (0..*n as usize)
                .map(|i| {
                    let (b, m) = sub(i * stride)?;
                    decode(elem, b, m, &|o| uninit(i * stride + o))
                })
                .collect::<R<_>>()?;
            Ok(Val::Aggregate(elems))
        }
        Type::Struct(s) => {
            let fields = s
                .fields
                .iter()
                .zip(s.field_offsets())
                .map(|(field_ty, at)| {
                    let at = at as usize;
                    let (b, m) = sub(at)?;
                    decode(field_ty, b, m, &|o| uninit(at + o))
                })
                .collect::<R<_>>()?;
            Ok(Val::Aggregate(fields))
        }
        _ => Err(malformed(format!("cannot load a value of type {ty}"))),
    }
}

/// Bit width of a scalar or vector type, for `bitcast`.
fn bit_width(ty: &Type) -> Option<u64> {
    match ty {
        Type::Vector(elem, n) => Some(u64::from(elem.scalar_bits()?) * u64::from(*n)),
        other => other.scalar_bits().map(u64::from),
    }
}

fn push_bits(ty: &Type, v: &Val, out: &mut Vec<bool>) -> R<()> {
    let (bits, raw) = match (ty, v) {
        (Type::Vector(elem, _), Val::Vector(lanes)) => {
            for lane in lanes {
                push_bits(elem, lane, out)?;
            }
            return Ok(());
        }
        (Type::F32, Val::F32(x)) => (32, u128::from(x.to_bits())),
        (Type::F64, Val::F64(x)) => (64, u128::from(x.to_bits())),
        (Type::Ptr(_), v) => (64, u128::from(v.as_ptr()?)),
        (t, Val::Int(x)) if t.is_int() => (t.int_bits().unwrap_or(128), *x),
        _ => return Err(malformed(format!("bitcast of {} as {ty}", v.kind_name()))),
    };
    out.extend((0..bits).map(|i| raw >> i & 1 == 1));
    Ok(())
}

fn pop_bits(ty: &Type, bits: &mut impl Iterator<Item = bool>) -> R<Val> {
    let mut take = |n: u32| -> u128 {
        (0..n).fold(0u128, |acc, i| acc | (u128::from(bits.next().unwrap_or(false)) << i))
    };
    Ok(match ty {
        Type::F32 => Val::F32(f32::from_bits(take(32) as u32)),
        Type::F64 => Val::F64(f64::from_bits(take(64) as u64)),
        Type::Ptr(_) => Val::Ptr(take(64) as u64),
        Type::Vector(elem, n) => {
            Val::Vector((0..*n).map(|_| pop_bits(elem, bits)).collect::<R<_>>()?)
        }
        t => Val::Int(take(t.int_bits().ok_or_else(|| malformed(format!("bitcast to {t}")))?)),
    })
}

/// Reinterprets the bits of `v` (of type `from`) as type `to`; lane 0 holds the least
/// significant bits, as on a little-endian machine.
pub(crate) fn bitcast(from: &Type, to: &Type, v: &Val) -> R<Val> {
    match (bit_width(from), bit_width(to)) {
        (Some(a), Some(b)) if a == b => {}
        _ => return Err(malformed(format!("bitcast from {from} to {to}"))),
    }
    let mut bits = Vec::new();
    push_bits(from, v, &mut bits)?;
    pop_bits(to, &mut bits.into_iter())
}

/// What an access does, for checks and messages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    pub op: &'static str,
    pub write: bool,
}

impl Access {
    pub const fn read(op: &'static str) -> Access {
        Access { op, write: false }
    }
    pub const fn write(op: &'static str) -> Access {
        Access { op, write: true }
    }
}

impl Memory {
    /// See [`super::UninitReads`]; applies to memory allocated afterwards.
    pub fn set_undef_fill(&mut self, fill: Option<u8>) {
        self.undef_fill = fill;
    }

    /// The initialized bits a read checks: the real ones, or all set when never-written
    /// bytes read as the fill pattern.
    fn read_init<'a>(&self, init: &'a [bool]) -> std::borrow::Cow<'a, [bool]> {
        match self.undef_fill {
            Some(_) => std::borrow::Cow::Owned(vec![true; init.len()]),
            None => std::borrow::Cow::Borrowed(init),
        }
    }

    /// Reserves a fresh range of `size` bytes. `zeroed` makes them zero and initialized
    /// (globals, calloc); otherwise they start uninitialized.
    pub fn allocate(&mut self, size: u64, align: u64, kind: AllocKind, zeroed: bool) -> R<u64> {
        let oom = || ErrorKind::OutOfMemory { size };
        let live =
            self.live_bytes.checked_add(size).filter(|l| *l <= MAX_LIVE_BYTES).ok_or_else(oom)?;
        let align = align.max(MIN_ALIGN).checked_next_power_of_two().ok_or_else(oom)?;
        let base = self.next.checked_next_multiple_of(align).ok_or_else(oom)?;
        let next = base.checked_add(size).and_then(|e| e.checked_add(GUARD)).ok_or_else(oom)?;
        if next >= FUNC_BASE {
            return Err(oom());
        }
        let n = size as usize;
        let fill = if zeroed { 0 } else { self.undef_fill.unwrap_or(0) };
        let alloc = Allocation {
            size,
            kind,
            state: State::Live,
            bytes: vec![fill; n],
            init: vec![zeroed; n],
        };
        self.allocs.insert(base, alloc);
        self.next = next;
        self.live_bytes = live;
        Ok(base)
    }

    fn retire(&mut self, base: u64, state: State) {
        if let Some(a) = self.allocs.get_mut(&base) {
            if a.state == State::Live {
                self.live_bytes -= a.size;
            }
            a.state = state;
            a.bytes = Vec::new();
            a.init = Vec::new();
        }
    }

    /// Ends the life of an `alloca` (its function returned).
    pub fn kill_stack(&mut self, base: u64) {
        self.retire(base, State::Dead);
    }

    /// `free`: only live heap blocks, by their base address; `free(null)` does nothing.
    pub fn free(&mut self, addr: u64) -> R<()> {
        if addr == 0 {
            return Ok(());
        }
        match self.allocs.get(&addr) {
            Some(a) if a.kind == AllocKind::Heap => match a.state {
                State::Live => {
                    self.retire(addr, State::Freed);
                    Ok(())
                }
                _ => Err(ErrorKind::DoubleFree { addr }),
            },
            Some(a) => {
                Err(ErrorKind::InvalidFree { addr, detail: format!("the {}", a.kind.describe()) })
            }
            None => {
                let detail = match self.containing(addr) {
                    Some((base, a)) => {
                        format!(
                            "offset {} into the {} at {base:#x}",
                            addr - base,
                            a.kind.describe()
                        )
                    }
                    None => "not the start of a heap block".to_string(),
                };
                Err(ErrorKind::InvalidFree { addr, detail })
            }
        }
    }

    /// The allocation whose range holds `addr`, whatever its state.
    fn containing(&self, addr: u64) -> Option<(u64, &Allocation)> {
        let (base, a) = self.allocs.range(..=addr).next_back()?;
        (addr - base < a.size.max(1)).then_some((*base, a))
    }

    /// Checks an access of `len` bytes at `addr`; returns the base of its allocation and
    /// the offset inside it, or `None` for an empty access (which is always allowed).
    pub fn check(&self, addr: u64, len: u64, access: Access) -> R<Option<(u64, usize)>> {
        if len == 0 {
            return Ok(None);
        }
        let oob = |detail: String| ErrorKind::OutOfBounds { op: access.op, addr, len, detail };
        if addr == 0 {
            return Err(oob("null pointer".to_string()));
        }
        let Some((base, a)) = self.containing(addr) else {
            return Err(oob(self.nearest(addr)));
        };
        match (&a.state, &a.kind) {
            (State::Freed, _) => return Err(ErrorKind::UseAfterFree { op: access.op, addr, len }),
            (State::Dead, AllocKind::Stack { func }) => {
                return Err(ErrorKind::DeadStack { op: access.op, addr, len, func: func.clone() })
            }
            (_, AllocKind::ExternGlobal { name }) => {
                return Err(ErrorKind::UndefinedGlobal { name: name.clone() })
            }
            (_, AllocKind::Global { name, constant: true }) if access.write => {
                return Err(ErrorKind::WriteToConstant { name: name.clone() })
            }
            _ => {}
        }
        let offset = addr - base;
        if offset.checked_add(len).is_none_or(|end| end > a.size) {
            return Err(oob(format!(
                "offset {offset} in the {}-byte {} at {base:#x}",
                a.size,
                a.kind.describe()
            )));
        }
        Ok(Some((base, offset as usize)))
    }

    /// Describes where a stray address lies relative to the allocations around it.
    fn nearest(&self, addr: u64) -> String {
        let before = self.allocs.range(..=addr).next_back();
        let after = self.allocs.range(addr..).next();
        match (before, after) {
            (Some((b, a)), _) if addr - (b + a.size) < GUARD => format!(
                "{} bytes past the end of the {}-byte {} at {b:#x}",
                addr - (b + a.size),
                a.size,
                a.kind.describe()
            ),
            (_, Some((b, a))) if b - addr <= GUARD => {
                format!("{} bytes before the {} at {b:#x}", b - addr, a.kind.describe())
            }
            _ if addr >= FUNC_BASE => "a function address".to_string(),
            _ => "not in any allocation".to_string(),
        }
    }

    fn slices(&self, addr: u64, len: u64, access: Access) -> R<Option<(&[u8], &[bool])>> {
        let Some((base, off)) = self.check(addr, len, access)? else {
            return Ok(None);
        };
        let a = &self.allocs[&base];
        let end = off + len as usize;
        Ok(Some((&a.bytes[off..end], &a.init[off..end])))
    }

    fn slices_mut(
        &mut self,
        addr: u64,
        len: u64,
        access: Access,
    ) -> R<Option<(&mut [u8], &mut [bool])>> {
        let Some((base, off)) = self.check(addr, len, access)? else {
            return Ok(None);
        };
        let a = self.allocs.get_mut(&base).ok_or_else(|| malformed("allocation vanished"))?;
        let end = off + len as usize;
        Ok(Some((&mut a.bytes[off..end], &mut a.init[off..end])))
    }

    fn uninit_error(access: Access, addr: u64, len: u64) -> impl Fn(usize) -> ErrorKind {
        move |offset| ErrorKind::UninitRead {
            op: access.op,
            addr,
            len,
            first: addr.wrapping_add(offset as u64),
        }
    }

    /// Loads a value of type `ty` from `addr`.
    pub fn load(&self, addr: u64, ty: &Type, access: Access) -> R<Val> {
        if leaf_count(ty).is_none() {
            return Err(ErrorKind::Unsupported(format!("loads of {ty} are too large")));
        }
        let len = store_size(ty)?;
        match self.slices(addr, len, access)? {
            Some((bytes, init)) => {
                let init = self.read_init(init);
                decode(ty, bytes, &init, &Self::uninit_error(access, addr, len))
            }
            // A zero-sized type: an empty aggregate or array.
            None => super::value::zero(ty),
        }
    }

    /// Stores `val` of type `ty` at `addr`.
    pub fn store(&mut self, addr: u64, ty: &Type, val: &Val, access: Access) -> R<()> {
        let len = store_size(ty)?;
        match self.slices_mut(addr, len, access)? {
            Some((bytes, init)) => encode(ty, val, bytes, init),
            None => Ok(()),
        }
    }

    /// Reads `len` bytes, all of which must be initialized.
    pub fn read_bytes(&self, addr: u64, len: u64, access: Access) -> R<Vec<u8>> {
        match self.slices(addr, len, access)? {
            Some((bytes, init)) => match self.read_init(init).iter().position(|b| !b) {
                Some(i) => Err(Self::uninit_error(access, addr, len)(i)),
                None => Ok(bytes.to_vec()),
            },
            None => Ok(Vec::new()),
        }
    }

    /// Writes `bytes` at `addr`, marking them initialized.
    pub fn write_bytes(&mut self, addr: u64, bytes: &[u8], access: Access) -> R<()> {
        if let Some((b, m)) = self.slices_mut(addr, bytes.len() as u64, access)? {
            b.copy_from_slice(bytes);
            m.fill(true);
        }
        Ok(())
    }

    /// `memcpy`/`memmove`: copies bytes together with their initialized bits (copying
    /// uninitialized bytes is not an error). Overlapping `memcpy` ranges are reported,
    /// except for a copy onto itself.
    pub fn copy(
        &mut self,
        dst: u64,
        src: u64,
        len: u64,
        may_overlap: bool,
        op: &'static str,
    ) -> R<()> {
        let Some((bytes, init)) = self.slices(src, len, Access::read(op))? else {
            return Ok(());
        };
        let (bytes, init) = (bytes.to_vec(), init.to_vec());
        let overlap = dst < src.wrapping_add(len) && src < dst.wrapping_add(len);
        if !may_overlap && overlap && dst != src {
            return Err(ErrorKind::OverlappingCopy { dst, src, len });
        }
        if let Some((b, m)) = self.slices_mut(dst, len, Access::write(op))? {
            b.copy_from_slice(&bytes);
            m.copy_from_slice(&init);
        }
        Ok(())
    }

    pub fn fill(&mut self, dst: u64, byte: u8, len: u64, op: &'static str) -> R<()> {
        if let Some((b, m)) = self.slices_mut(dst, len, Access::write(op))? {
            b.fill(byte);
            m.fill(true);
        }
        Ok(())
    }

    /// Reads a NUL-terminated string (without the NUL), at most `max` bytes when given.
    pub fn c_string(&self, addr: u64, max: Option<u64>, op: &'static str) -> R<Vec<u8>> {
        let access = Access::read(op);
        let Some((base, off)) = self.check(addr, 1, access)? else {
            return Ok(Vec::new());
        };
        let a = &self.allocs[&base];
        let mut out = Vec::new();
        for i in off..a.size as usize {
            if max.is_some_and(|m| out.len() as u64 >= m) {
                return Ok(out);
            }
            if !a.init[i] && self.undef_fill.is_none() {
                return Err(Self::uninit_error(access, addr, (i - off + 1) as u64)(i - off));
            }
            if a.bytes[i] == 0 {
                return Ok(out);
            }
            out.push(a.bytes[i]);
        }
        if max.is_some_and(|m| out.len() as u64 >= m) {
            return Ok(out);
        }
        Err(ErrorKind::OutOfBounds {
            op,
            addr,
            len: out.len() as u64 + 1,
            detail: format!(
                "unterminated string in the {}-byte {} at {base:#x}",
                a.size,
                a.kind.describe()
            ),
        })
    }

    /// Initializes a global's bytes directly (constant globals included): all bytes zero and
    /// initialized, then the value written over them.
    pub fn init_global(&mut self, base: u64, ty: &Type, val: Option<&Val>) -> R<()> {
        let a = self.allocs.get_mut(&base).ok_or_else(|| malformed("global without memory"))?;
        a.init.fill(true);
        match val {
            Some(v) => encode(ty, v, &mut a.bytes, &mut a.init),
            None => Ok(()),
        }
    }

    /// Size of the live heap block starting at `addr`, if there is one.
    pub fn heap_block_size(&self, addr: u64) -> Option<u64> {
        self.allocs
            .get(&addr)
            .filter(|a| a.kind == AllocKind::Heap && a.state == State::Live)
            .map(|a| a.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem_with_block(size: u64) -> (Memory, u64) {
        let mut m = Memory::default();
        let p = m.allocate(size, 8, AllocKind::Heap, false).unwrap();
        (m, p)
    }

    #[test]
    fn out_of_bounds_and_null() {
        let (mut m, p) = mem_with_block(16);
        m.store(p + 8, &Type::F64, &Val::F64(1.0), Access::write("store")).unwrap();
        let e = m.load(p + 16, &Type::I8, Access::read("load")).unwrap_err();
        assert!(e.to_string().contains("out of bounds"), "{e}");
        assert!(e.to_string().contains("past the end"), "{e}");
        let e = m.load(p + 12, &Type::F64, Access::read("load")).unwrap_err();
        assert!(e.to_string().contains("offset 12 in the 16-byte heap block"), "{e}");
        let e = m.load(0, &Type::I32, Access::read("load")).unwrap_err();
        assert!(e.to_string().contains("null"), "{e}");
        let e = m.load(p.wrapping_sub(4), &Type::I32, Access::read("load")).unwrap_err();
        assert!(e.to_string().contains("before"), "{e}");
    }

    #[test]
    fn use_after_free_and_double_free() {
        let (mut m, p) = mem_with_block(8);
        m.store(p, &Type::I64, &Val::Int(5), Access::write("store")).unwrap();
        m.free(p).unwrap();
        assert!(matches!(
            m.load(p, &Type::I64, Access::read("load")),
            Err(ErrorKind::UseAfterFree { .. })
        ));
        assert!(matches!(m.free(p), Err(ErrorKind::DoubleFree { .. })));
        assert!(matches!(m.free(p + 1), Err(ErrorKind::InvalidFree { .. })));
        let q = m.allocate(8, 8, AllocKind::Stack { func: "f".into() }, false).unwrap();
        assert!(q > p, "addresses are never reused");
        assert!(matches!(m.free(q), Err(ErrorKind::InvalidFree { .. })));
        m.kill_stack(q);
        assert!(matches!(
            m.load(q, &Type::I8, Access::read("load")),
            Err(ErrorKind::DeadStack { .. })
        ));
    }

    #[test]
    fn uninitialized_reads() {
        let (mut m, p) = mem_with_block(16);
        m.store(p, &Type::I32, &Val::Int(7), Access::write("store")).unwrap();
        assert_eq!(m.load(p, &Type::I32, Access::read("load")).unwrap(), Val::Int(7));
        let e = m.load(p, &Type::I64, Access::read("load")).unwrap_err();
        assert!(matches!(e, ErrorKind::UninitRead { first, .. } if first == p + 4), "{e}");
        // Copying uninitialized bytes is fine; reading them afterwards is not.
        let (q, _) = (m.allocate(16, 8, AllocKind::Heap, false).unwrap(), ());
        m.copy(q, p, 16, false, "memcpy").unwrap();
        assert_eq!(m.load(q, &Type::I32, Access::read("load")).unwrap(), Val::Int(7));
        assert!(m.load(q + 4, &Type::I32, Access::read("load")).is_err());
    }

    #[test]
    fn struct_padding_is_not_checked() {
        let (mut m, p) = mem_with_block(16);
        let s = Type::structure(vec![Type::I8, Type::I32], false);
        m.store(p, &Type::I8, &Val::Int(1), Access::write("store")).unwrap();
        m.store(p + 4, &Type::I32, &Val::Int(2), Access::write("store")).unwrap();
        let v = m.load(p, &s, Access::read("load")).unwrap();
        assert_eq!(v, Val::Aggregate(vec![Val::Int(1), Val::Int(2)]));
    }

    #[test]
    fn vector_layouts() {
        let (mut m, p) = mem_with_block(32);
        let v = Type::vector(Type::I1, 10);
        let lanes: Vec<Val> = (0..10).map(|i| Val::bool(i % 3 == 0)).collect();
        m.store(p, &v, &Val::Vector(lanes.clone()), Access::write("store")).unwrap();
        assert_eq!(m.load(p, &Type::I16, Access::read("load")).unwrap(), Val::Int(0b10_0100_1001));
        assert_eq!(m.load(p, &v, Access::read("load")).unwrap(), Val::Vector(lanes));
        // <3 x f32> touches 12 bytes, though its size is 16.
        let v3 = Type::vector(Type::F32, 3);
        let val = Val::Vector(vec![Val::F32(1.0), Val::F32(2.0), Val::F32(3.0)]);
        m.store(p + 20, &v3, &val, Access::write("store")).unwrap();
        assert_eq!(m.load(p + 20, &v3, Access::read("load")).unwrap(), val);
    }

    #[test]
    fn bitcasts() {
        let v = bitcast(&Type::F64, &Type::I64, &Val::F64(1.0)).unwrap();
        assert_eq!(v, Val::Int(0x3ff0_0000_0000_0000));
        let v = bitcast(&Type::I64, &Type::vector(Type::I32, 2), &Val::Int(0x1_0000_0002)).unwrap();
        assert_eq!(v, Val::Vector(vec![Val::Int(2), Val::Int(1)]));
        let v = bitcast(
            &Type::vector(Type::I1, 8),
            &Type::I8,
            &Val::Vector((0..8).map(|i| Val::bool(i == 1)).collect()),
        )
        .unwrap();
        assert_eq!(v, Val::Int(2));
        assert!(bitcast(&Type::I32, &Type::I64, &Val::Int(0)).is_err());
    }
}
