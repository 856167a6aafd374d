//! Float vectors as 128-bit SIMD values (`F64X2`, `F32X4`; see `abi.rs` for which vectors
//! have a SIMD form), and the conversions between the SIMD form and the lane form.
//!
//! Lowered chunk by chunk: `fadd fsub fmul fdiv fminnum fmaxnum`, `fneg fabs sqrt floor
//! ceil trunc roundeven freeze`, `fma`, `select` on a scalar condition or on an `fcmp` of
//! vectors with the same chunks, `extractlane`/`insertlane` at constant indices,
//! `shuffle` (byte shuffles of at most two source chunks, else lane by lane into a new
//! vector), and `bitcast` between SIMD vectors. Constants, memory, block parameters,
//! aggregates and calls between SIMD-ABI functions move the chunks as they are
//! (`lower.rs`). Every other operation on such a vector returns `None` here, and
//! `lower.rs` runs the per-lane code on the unpacked lanes and packs the result: slower,
//! never different.

use adc_ir::{BinaryOp, FloatCC, InstructionData as D, Type, UnaryOp, ValueDef};
use cranelift_codegen::ir::{self, condcodes, types, Endianness, InstBuilder, MemFlagsData};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::Module as ClModule;

use crate::abi::{self, Leaf};
use crate::lower::{Lower, R};

/// Converts the leaves of a `ty` value from lane form to SIMD form.
pub(crate) fn pack(b: &mut FunctionBuilder, ty: &Type, lanes: &[ir::Value]) -> R<Vec<ir::Value>> {
    let mut next = lanes.iter().copied();
    let mut take = || next.next().ok_or_else(|| format!("too few lanes for {ty}"));
    let mut out = Vec::new();
    for leaf in abi::leaves(ty, true)? {
        match leaf {
            Leaf::Scalar(_) => out.push(take()?),
            Leaf::Chunk(chunk) => {
                let mut lanes = Vec::new();
                for _ in 0..chunk.lane_count() {
                    lanes.push(take()?);
                }
                out.push(vector_of(b, chunk, &lanes));
            }
        }
    }
    Ok(out)
}

/// Converts the leaves of a `ty` value from SIMD form to lane form.
pub(crate) fn unpack(
    b: &mut FunctionBuilder,
    ty: &Type,
    leaves: &[ir::Value],
) -> R<Vec<ir::Value>> {
    let layout = abi::leaves(ty, true)?;
    if layout.len() != leaves.len() {
        return Err(format!("{} leaves for {ty}, expected {}", leaves.len(), layout.len()));
    }
    let mut out = Vec::new();
    for (leaf, v) in layout.iter().zip(leaves) {
        match leaf {
            Leaf::Scalar(_) => out.push(*v),
            Leaf::Chunk(chunk) => {
                for k in 0..chunk.lane_count() {
                    out.push(lane_of(b, *v, k));
                }
            }
        }
    }
    Ok(out)
}

/// Lane `pos` of chunk `c`, looking through the `insertlane`s and `splat`s that built it:
/// Cranelift does not fold `extractlane` of `insertlane`, and packing lanes (the fallback,
/// clang's splats through lane 0 of an undefined vector) builds chunks that way.
fn lane_of(b: &mut FunctionBuilder, c: ir::Value, pos: u32) -> ir::Value {
    let mut v = c;
    while let ir::ValueDef::Result(inst, _) = b.func.dfg.value_def(v) {
        match b.func.dfg.insts[inst] {
            ir::InstructionData::TernaryImm8 { opcode: ir::Opcode::Insertlane, args, imm } => {
                if u32::from(imm) == pos {
                    return args[1];
                }
                v = args[0];
            }
            ir::InstructionData::Unary { opcode: ir::Opcode::Splat, arg } => return arg,
            _ => break,
        }
    }
    b.ins().extractlane(c, pos as u8)
}

/// A `chunk` vector of the given lanes.
fn vector_of(b: &mut FunctionBuilder, chunk: ir::Type, lanes: &[ir::Value]) -> ir::Value {
    let mut v = b.ins().splat(chunk, lanes[0]);
    for (k, lane) in lanes.iter().enumerate().skip(1) {
        if *lane != lanes[0] {
            v = b.ins().insertlane(v, *lane, k as u8);
        }
    }
    v
}

fn little() -> MemFlagsData {
    let mut flags = MemFlagsData::new();
    flags.set_endianness(Endianness::Little);
    flags
}

/// Where one lane of a shuffle's result comes from.
#[derive(Clone, Copy, PartialEq)]
enum LaneSource {
    /// An undefined or out-of-range lane: zero, as in the interpreter.
    Zero,
    /// Lane `pos` of a SIMD chunk.
    Chunk(ir::Value, u32),
    /// A scalar leaf (a source vector in lane form).
    Scalar(ir::Value),
}

impl<M: ClModule> Lower<'_, '_, M> {
    /// The chunk type of `v` when it is kept in SIMD form.
    fn chunked(&self, v: adc_ir::Value) -> Option<ir::Type> {
        abi::simd_chunk(self.ty(v)).filter(|_| self.simd)
    }

    /// The SIMD lowering of a per-lane operation, or `None` when it has none and must go
    /// lane by lane.
    pub(crate) fn simd_inst(
        &mut self,
        data: &D,
        result: Option<&Type>,
    ) -> R<Option<Vec<ir::Value>>> {
        if !self.simd {
            return Ok(None);
        }
        Ok(match data {
            D::Unary { op, arg, .. } if self.chunked(*arg).is_some() => {
                let x = self.machine(*arg)?;
                let mut out = Vec::new();
                for c in x {
                    let ins = self.b.ins();
                    out.push(match op {
                        UnaryOp::Fneg => ins.fneg(c),
                        UnaryOp::Fabs => ins.fabs(c),
                        UnaryOp::Sqrt => ins.sqrt(c),
                        UnaryOp::Floor => ins.floor(c),
                        UnaryOp::Ceil => ins.ceil(c),
                        UnaryOp::Ftrunc => ins.trunc(c),
                        UnaryOp::Roundeven => ins.nearest(c),
                        UnaryOp::Freeze => c,
                        _ => return Ok(None),
                    });
                }
                Some(out)
            }
            D::Binary { op, args, .. } if self.chunked(args[0]).is_some() => {
                let (a, b) = (self.machine(args[0])?, self.machine(args[1])?);
                let mut out = Vec::new();
                for (x, y) in a.into_iter().zip(b) {
                    out.push(match op {
                        BinaryOp::Fadd => self.b.ins().fadd(x, y),
                        BinaryOp::Fsub => self.b.ins().fsub(x, y),
                        BinaryOp::Fmul => self.b.ins().fmul(x, y),
                        BinaryOp::Fdiv => self.b.ins().fdiv(x, y),
                        BinaryOp::Fminnum => self.fminmax_chunk(x, y, false),
                        BinaryOp::Fmaxnum => self.fminmax_chunk(x, y, true),
                        _ => return Ok(None),
                    });
                }
                Some(out)
            }
            D::Fma { args, .. } if self.chunked(args[0]).is_some() => {
                let (a, b, c) =
                    (self.machine(args[0])?, self.machine(args[1])?, self.machine(args[2])?);
                let mut out = Vec::new();
                for k in 0..a.len() {
                    out.push(self.b.ins().fma(a[k], b[k], c[k]));
                }
                Some(out)
            }
            D::Select { args, .. } => self.select(args)?,
            D::ExtractLane { vector, index } => {
                match (self.chunked(*vector), self.const_int(*index)) {
                    (Some(chunk), Some(k)) => {
                        let chunks = self.machine(*vector)?;
                        let per = u128::from(chunk.lane_count());
                        Some(vec![match chunks.get((k / per) as usize) {
                            Some(c) => self.b.ins().extractlane(*c, (k % per) as u8),
                            None => self.zero(chunk.lane_type()),
                        }])
                    }
                    _ => None,
                }
            }
            D::InsertLane { vector, value, index } => {
                match (self.chunked(*vector), self.const_int(*index)) {
                    (Some(chunk), Some(k)) => {
                        let mut chunks = self.machine(*vector)?;
                        let x = self.one(*value)?;
                        let per = u128::from(chunk.lane_count());
                        if let Some(c) = chunks.get_mut((k / per) as usize) {
                            *c = self.b.ins().insertlane(*c, x, (k % per) as u8);
                        }
                        Some(chunks)
                    }
                    _ => None,
                }
            }
            D::Shuffle { args, mask } => match result.and_then(abi::simd_chunk) {
                Some(chunk) => Some(self.shuffle(chunk, *args, mask)?),
                None => None,
            },
            D::Cast { op: adc_ir::CastOp::Bitcast, arg, ty } => {
                match (self.chunked(*arg), abi::simd_chunk(ty)) {
                    (Some(_), Some(to)) => {
                        let from = self.machine(*arg)?;
                        let mut out = Vec::new();
                        for c in from {
                            out.push(self.b.ins().bitcast(to, little(), c));
                        }
                        Some(out)
                    }
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// IEEE minNum/maxNum on chunks, as `ops::fminmax` does per lane: a NaN operand yields
    /// the other one.
    fn fminmax_chunk(&mut self, a: ir::Value, b: ir::Value, max: bool) -> ir::Value {
        use condcodes::FloatCC as F;
        let chunk = self.b.func.dfg.value_type(a);
        let m = if max { self.b.ins().fmax(a, b) } else { self.b.ins().fmin(a, b) };
        let a_nan = self.b.ins().fcmp(F::Unordered, a, a);
        let a_nan = self.b.ins().bitcast(chunk, little(), a_nan);
        let b_nan = self.b.ins().fcmp(F::Unordered, b, b);
        let b_nan = self.b.ins().bitcast(chunk, little(), b_nan);
        let r = self.b.ins().bitselect(b_nan, a, m);
        self.b.ins().bitselect(a_nan, b, r)
    }

    /// `select` on a scalar condition picks whole leaves, whatever the type; on a vector
    /// condition that is an `fcmp` of vectors with the same chunks, each chunk is a
    /// `bitselect` on the compared chunks' mask.
    fn select(&mut self, args: &[adc_ir::Value; 3]) -> R<Option<Vec<ir::Value>>> {
        let (a, b) = (self.machine(args[1])?, self.machine(args[2])?);
        if self.ty(args[0]).is_scalar() {
            let c = self.one(args[0])?;
            let mut out = Vec::new();
            for (x, y) in a.into_iter().zip(b) {
                out.push(self.b.ins().select(c, x, y));
            }
            return Ok(Some(out));
        }
        let Some(chunk) = self.chunked(args[1]) else { return Ok(None) };
        let ValueDef::Result(def) = self.func.dfg.value_def(args[0]) else { return Ok(None) };
        let D::Fcmp { cond, args: compared, .. } = &self.func.dfg.insts[def] else {
            return Ok(None);
        };
        if self.chunked(compared[0]) != Some(chunk) {
            return Ok(None);
        }
        let (x, y) = (self.machine(compared[0])?, self.machine(compared[1])?);
        let mut out = Vec::new();
        for k in 0..a.len() {
            out.push(match self.fcmp_mask(*cond, x[k], y[k]) {
                Some(mask) => {
                    let mask = self.b.ins().bitcast(chunk, little(), mask);
                    self.b.ins().bitselect(mask, a[k], b[k])
                }
                None if *cond == FloatCC::True => a[k],
                None => b[k],
            });
        }
        Ok(Some(out))
    }

    /// The all-ones/all-zeros lane mask of a vector `fcmp`; `None` for the constant
    /// conditions `false` and `true`. x86-64 has no single compare for `one` and `ueq`:
    /// they combine two.
    fn fcmp_mask(&mut self, cc: FloatCC, x: ir::Value, y: ir::Value) -> Option<ir::Value> {
        use condcodes::FloatCC as F;
        let single = match cc {
            FloatCC::Oeq => F::Equal,
            FloatCC::Ogt => F::GreaterThan,
            FloatCC::Oge => F::GreaterThanOrEqual,
            FloatCC::Olt => F::LessThan,
            FloatCC::Ole => F::LessThanOrEqual,
            FloatCC::Ord => F::Ordered,
            FloatCC::Uno => F::Unordered,
            FloatCC::Une => F::NotEqual,
            FloatCC::Ugt => F::UnorderedOrGreaterThan,
            FloatCC::Uge => F::UnorderedOrGreaterThanOrEqual,
            FloatCC::Ult => F::UnorderedOrLessThan,
            FloatCC::Ule => F::UnorderedOrLessThanOrEqual,
            FloatCC::One => {
                let ordered = self.b.ins().fcmp(F::Ordered, x, y);
                let ne = self.b.ins().fcmp(F::NotEqual, x, y);
                return Some(self.b.ins().band(ordered, ne));
            }
            FloatCC::Ueq => {
                let unordered = self.b.ins().fcmp(F::Unordered, x, y);
                let eq = self.b.ins().fcmp(F::Equal, x, y);
                return Some(self.b.ins().bor(unordered, eq));
            }
            FloatCC::False | FloatCC::True => return None,
        };
        Some(self.b.ins().fcmp(single, x, y))
    }

    /// A shuffle whose result has a SIMD form: each result chunk is one byte shuffle when
    /// its lanes come from at most two source chunks (zero lanes count as a zero chunk),
    /// else it is built lane by lane.
    fn shuffle(
        &mut self,
        chunk: ir::Type,
        args: [adc_ir::Value; 2],
        mask: &[Option<u32>],
    ) -> R<Vec<ir::Value>> {
        let mut sources = Vec::new();
        for arg in args {
            match self.chunked(arg) {
                Some(c) => {
                    for v in self.machine(arg)? {
                        for pos in 0..c.lane_count() {
                            sources.push(LaneSource::Chunk(v, pos));
                        }
                    }
                }
                None => {
                    for v in self.get(arg)? {
                        sources.push(LaneSource::Scalar(v));
                    }
                }
            }
        }
        let lanes: Vec<LaneSource> = mask
            .iter()
            .map(|m| m.and_then(|k| sources.get(k as usize).copied()).unwrap_or(LaneSource::Zero))
            .collect();
        let per = chunk.lane_count() as usize;
        let first = lanes.first().copied().unwrap_or(LaneSource::Zero);
        if first != LaneSource::Zero && lanes.iter().all(|l| *l == first) {
            // A splat (clang's insertelement + zero-mask shuffle): one broadcast of the
            // scalar, which Cranelift then finds without the vector it was inserted into.
            let x = match first {
                LaneSource::Chunk(c, pos) => lane_of(&mut self.b, c, pos),
                LaneSource::Scalar(v) => v,
                LaneSource::Zero => self.zero(chunk.lane_type()),
            };
            let v = self.b.ins().splat(chunk, x);
            return Ok(vec![v; lanes.len() / per]);
        }
        let mut out = Vec::new();
        for group in lanes.chunks(per) {
            let v = match self.byte_shuffle(chunk, group) {
                Some(v) => v,
                None => {
                    let mut scalars = Vec::new();
                    for lane in group {
                        scalars.push(match *lane {
                            LaneSource::Zero => self.zero(chunk.lane_type()),
                            LaneSource::Chunk(c, pos) => lane_of(&mut self.b, c, pos),
                            LaneSource::Scalar(v) => v,
                        });
                    }
                    vector_of(&mut self.b, chunk, &scalars)
                }
            };
            out.push(v);
        }
        Ok(out)
    }

    /// One result chunk as a byte shuffle of at most two chunks of the same type, if its
    /// lanes allow.
    fn byte_shuffle(&mut self, chunk: ir::Type, group: &[LaneSource]) -> Option<ir::Value> {
        let mut operands: Vec<ir::Value> = Vec::new();
        let mut zero_needed = false;
        for lane in group {
            match lane {
                LaneSource::Scalar(_) => return None,
                LaneSource::Zero => zero_needed = true,
                LaneSource::Chunk(c, _) => {
                    if self.b.func.dfg.value_type(*c) != chunk {
                        return None;
                    }
                    if !operands.contains(c) {
                        operands.push(*c);
                    }
                }
            }
        }
        if operands.len() + usize::from(zero_needed) > 2 {
            return None;
        }
        if let [c] = operands[..] {
            // One chunk, lanes in place: the chunk itself.
            let in_place = group.iter().enumerate().all(
                |(k, l)| matches!(l, LaneSource::Chunk(v, pos) if *v == c && *pos as usize == k),
            );
            if in_place {
                return Some(c);
            }
        }
        let zero = if zero_needed {
            let c = self.b.func.dfg.constants.insert(ir::ConstantData::from(&[0u8; 16][..]));
            Some(self.b.ins().vconst(chunk, c))
        } else {
            None
        };
        let first = operands.first().copied().or(zero)?;
        let second = operands.get(1).copied().or(zero).unwrap_or(first);
        let lane_bytes = 16 / group.len() as u8;
        let mut bytes = Vec::new();
        for lane in group {
            let (base, pos) = match *lane {
                LaneSource::Chunk(c, pos) if c == first => (0u8, pos as u8),
                LaneSource::Chunk(_, pos) => (16, pos as u8),
                // The zero chunk is `first` only when no lane reads a source chunk.
                _ if zero == Some(first) => (0, 0),
                _ => (16, 0),
            };
            for byte in 0..lane_bytes {
                bytes.push(base + pos * lane_bytes + byte);
            }
        }
        let immediate = self.b.func.dfg.immediates.push(ir::ConstantData::from(bytes));
        let a = self.b.ins().bitcast(types::I8X16, little(), first);
        let b = self.b.ins().bitcast(types::I8X16, little(), second);
        let shuffled = self.b.ins().shuffle(a, b, immediate);
        Some(self.b.ins().bitcast(chunk, little(), shuffled))
    }
}

#[cfg(test)]
mod tests {
    //! The lowering's choices, read off the Cranelift IR (the filetests check the values).

    use adc_ir::text::parse_module;
    use cranelift_object::{ObjectBuilder, ObjectModule};

    use crate::BackendOptions;

    /// The Cranelift IR text of every function of `source`.
    fn clif(source: &str, simd: bool) -> Vec<(String, String)> {
        let module = parse_module(source).expect("test module parses");
        let isa = crate::host_isa(true).expect("host ISA");
        let builder =
            ObjectBuilder::new(isa, "t", cranelift_module::default_libcall_names()).unwrap();
        let mut cm = ObjectModule::new(builder);
        let mut out = Vec::new();
        let options = BackendOptions { simd, ..BackendOptions::default() };
        crate::module::build_inspecting(&module, &mut cm, true, &options, &mut |name, f| {
            out.push((name.to_string(), f.display().to_string()))
        })
        .expect("module compiles");
        out
    }

    fn body<'a>(functions: &'a [(String, String)], name: &str) -> &'a str {
        &functions.iter().find(|(n, _)| n == name).expect("function lowered").1
    }

    const KERNEL: &str = r#"
func @axpy8(%x: ptr, %y: ptr) {
^entry:
  %vx = load <8 x f64>, %x, align 8
  %vy = load <8 x f64>, %y, align 8
  %r = fma <8 x f64> %vx, %vx, %vy
  %c = fcmp olt <8 x f64> %r, %vy
  %s = select <8 x f64> %c, %r, %vy
  store %s, %y, align 8
  ret
}

func internal @inner(%a: <4 x f32>) -> <4 x f32> {
^entry:
  %r = fadd <4 x f32> %a, %a
  ret %r
}

func @outer(%a: <4 x f32>) -> <4 x f32> {
^entry:
  %r = call @inner(%a)
  ret %r
}

func @odd(%a: <3 x f32>) -> <3 x f32> {
^entry:
  %r = fadd <3 x f32> %a, %a
  ret %r
}
"#;

    #[test]
    fn eight_doubles_are_four_chunks() {
        let functions = clif(KERNEL, true);
        let axpy = body(&functions, "axpy8");
        assert_eq!(axpy.matches("load.f64x2").count(), 8, "{axpy}");
        assert_eq!(axpy.matches("= fma ").count(), 4, "{axpy}");
        assert_eq!(axpy.matches("= bitselect ").count(), 4, "{axpy}");
        assert_eq!(axpy.matches("store ").count(), 4, "{axpy}");
        // The lane-form fcmp (its i1 lanes unused) is dead code Cranelift removed.
        assert!(!axpy.contains("extractlane"), "no lane form in {axpy}");
    }

    #[test]
    fn internal_functions_take_chunks_and_external_ones_lanes() {
        let functions = clif(KERNEL, true);
        let inner = body(&functions, "inner");
        assert!(inner.contains("(f32x4) -> f32x4"), "{inner}");
        let outer = body(&functions, "outer");
        assert!(outer.contains("(f32, f32, f32, f32) -> f32, f32, f32, f32"), "{outer}");
        assert!(outer.contains("fn0(v"), "{outer}");
    }

    #[test]
    fn odd_sizes_and_the_switch_stay_in_lane_form() {
        let odd = clif(KERNEL, true);
        assert!(!body(&odd, "odd").contains("x4"), "{}", body(&odd, "odd"));
        let off = clif(KERNEL, false);
        for (name, text) in &off {
            assert!(!text.contains("f64x2") && !text.contains("f32x4"), "{name}: {text}");
        }
        assert_eq!(body(&off, "axpy8").matches("= fma ").count(), 8);
    }
}
