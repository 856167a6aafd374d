//! The whole-call flags of Enzyme's C++ API (`<enzyme/enzyme>`, Enzyme's or adc's own
//! `include/enzyme/`) and the tuple results its templates declare.
//!
//! `enzyme::autodiff<Mode, RetActivity>(f, args...)` expands to
//!
//! ```text
//! __enzyme_autodiff<R>(f, &enzyme_{const,active,dup}_return, [enzyme_const, &functor,]
//!                      &enzyme_{primal_return,noret}, marker, value, ..., enzyme_interleave,
//!                      shadow, ...)
//! ```
//!
//! - `enzyme_const_return` / `enzyme_active_return` / `enzyme_dup_return` set the activity
//!   of the result; `enzyme_primal_return` asks for the primal result too, `enzyme_noret`
//!   for none. They may stand anywhere in the argument list (as in Enzyme).
//! - After `enzyme_interleave` come the shadows (tangents) of the duplicated arguments, in
//!   order; before it, an unmarked argument takes the activity of the one before it.
//! - The declared result `R` is a tuple laid out like a C struct. In reverse mode it holds
//!   one slot per argument after the return-use flag (so a functor's `enzyme_const, &f`
//!   before it has none): the adjoint for an `Active<T>` argument (type `T`), a pointer
//!   sized slot for a `Duplicated` one (left zero), one byte for a `Const` one (`nodiff`).
//!   With `enzyme_primal_return` that tuple follows the primal result:
//!   `{primal, {slots}}` (a one-byte `nodiff` when the result is not active, as in
//!   Enzyme's header). In forward mode it is `{primal}`, `{tangent}` or
//!   `{primal, tangent}`, which is the derivative's own result.
//! - clang passes `R` as the ABI wants (a `float` for `tuple<tuple<float, nodiff>>`, an
//!   `sret` pointer for a large one), so the result is written into memory with that
//!   layout and read back as the declared type (or written through the `sret` pointer).
//!
//! Reverse mode with the primal result runs the split function (`__adc_split_<f>`): its
//! forward phase returns the primal result, its reverse phase the adjoints, with the tape
//! in a stack slot of the caller, so `f` runs once.

use adc_ir::{Constant, FuncAttrs, Function, InstructionData, Module, Type, Value};

use super::{origin, DecodedArg, DecodedCall, Inserter, Origin};
use crate::request::{ArgActivity, DiffMode, RetActivity};

/// A whole-call flag.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CallFlag {
    ConstReturn,
    ActiveReturn,
    DupReturn,
    PrimalReturn,
    NoReturn,
    Interleave,
}

impl CallFlag {
    pub(super) fn from_global_name(name: &str) -> Option<CallFlag> {
        Some(match name {
            "enzyme_const_return" => CallFlag::ConstReturn,
            "enzyme_active_return" => CallFlag::ActiveReturn,
            "enzyme_dup_return" => CallFlag::DupReturn,
            "enzyme_primal_return" => CallFlag::PrimalReturn,
            "enzyme_noret" => CallFlag::NoReturn,
            "enzyme_interleave" => CallFlag::Interleave,
            _ => return None,
        })
    }
}

/// The flags of one call, and its arguments with the flags taken out.
#[derive(Clone, Debug, Default)]
pub(super) struct CallFlags {
    /// The result's activity as a flag set it.
    pub ret: Option<CallFlag>,
    /// `enzyme_primal_return`.
    pub primal_return: bool,
    /// Where the return-use flag stood in `primals`: arguments decoded from values after
    /// it have tuple slots.
    return_flag_at: Option<usize>,
    /// The first parameter with a tuple slot, once located (`locate_slots`).
    pub slot_start: Option<usize>,
    /// The arguments before `enzyme_interleave` (all of them without it), flags removed.
    pub primals: Vec<Value>,
    /// The arguments after `enzyme_interleave`.
    pub shadows: Option<Vec<Value>>,
    /// Forward mode of a function with an `sret` parameter of this many bytes: the call's
    /// `sret` memory holds `[primal,] shadow` (Enzyme's layout).
    pub implicit_sret: Option<u64>,
}

impl CallFlags {
    /// Takes the flags out of `args` (the API call's arguments after the function).
    pub fn split(module: &Module, func: &Function, args: &[Value]) -> CallFlags {
        let mut flags = CallFlags::default();
        for &arg in args {
            let flag = match origin(module, func, arg) {
                Origin::Flag(flag) => flag,
                _ => {
                    match flags.shadows.as_mut() {
                        Some(shadows) => shadows.push(arg),
                        None => flags.primals.push(arg),
                    }
                    continue;
                }
            };
            match flag {
                CallFlag::ConstReturn | CallFlag::ActiveReturn | CallFlag::DupReturn => {
                    flags.ret = Some(flag)
                }
                CallFlag::PrimalReturn | CallFlag::NoReturn => {
                    flags.primal_return |= flag == CallFlag::PrimalReturn;
                    flags.return_flag_at.get_or_insert(flags.primals.len());
                }
                CallFlag::Interleave => {
                    flags.shadows.get_or_insert_with(Vec::new);
                }
            }
        }
        flags
    }

    /// Finds the first parameter whose value came after the return-use flag.
    pub fn locate_slots(&mut self, primals: &[Value], decoded: &[DecodedArg]) {
        let Some(flag_at) = self.return_flag_at else { return };
        let mut cursor = 0;
        let mut start = decoded.len();
        for (index, arg) in decoded.iter().enumerate() {
            let Some(found) = primals[cursor..].iter().position(|v| *v == arg.value) else {
                break;
            };
            cursor += found;
            if cursor >= flag_at {
                start = index;
                break;
            }
            cursor += 1;
        }
        self.slot_start = Some(start);
    }

    /// Whether anything of the C++ API shapes the result.
    fn shapes_result(&self) -> bool {
        self.ret.is_some() || self.return_flag_at.is_some()
    }

    /// The result's activity: `default` unless a flag says otherwise.
    pub fn ret_activity(
        &self,
        mode: DiffMode,
        default: RetActivity,
        target: &Function,
    ) -> Result<RetActivity, String> {
        let forward = mode == DiffMode::Forward;
        let activity = match self.ret {
            None => default,
            Some(CallFlag::ConstReturn) => RetActivity::Const,
            Some(CallFlag::ActiveReturn | CallFlag::DupReturn) if default == RetActivity::Const => {
                let ty = target.signature.ret.as_ref().map_or("void".into(), |t| t.to_string());
                return Err(format!(
                    "an active or duplicated result was asked for, but @{} returns {ty}, which \
                     carries no derivative",
                    target.name
                ));
            }
            Some(CallFlag::DupReturn) if !forward => {
                return Err("enzyme_dup_return is forward mode only; reverse mode takes \
                            enzyme_active_return or enzyme_const_return"
                    .into())
            }
            Some(_) => RetActivity::Active,
        };
        // Forward mode returns the primal result with a constant result as it is.
        Ok(match activity {
            RetActivity::Active if forward && self.primal_return => RetActivity::Dup,
            other => other,
        })
    }
}

/// The primal and shadow pointers of an implicit `sret` parameter (see
/// `CallFlags::implicit_sret`): the call's memory holds the shadow, after the primal when
/// the primal result is wanted; otherwise the primal goes to a stack slot.
pub(super) fn sret_result_memory(
    ins: &mut Inserter,
    flags: &CallFlags,
    memory: Value,
    size: u64,
) -> Result<[Value; 2], String> {
    if !flags.primal_return {
        let primal = entry_slot(ins, size.max(1))?;
        return Ok([primal, memory]);
    }
    let offset = ins.constant(&Type::I64, Constant::Int(u128::from(size)))?;
    let shadow = ins.value(InstructionData::PtrAdd {
        flags: adc_ir::InstFlags::empty(),
        ptr: memory,
        offset,
    })?;
    Ok([memory, shadow])
}

/// Where each value of the result goes: byte offsets into the declared tuple.
struct Placement {
    parts: Vec<(Value, u64)>,
    /// The tuple's byte size.
    size: u64,
}

/// Writes `parts` into a tuple of `size` bytes and reads it back as the declared type (or
/// writes it through `sret`). Slots no part covers are zero.
fn emit_through_memory(
    ins: &mut Inserter,
    placement: Placement,
    declared: Option<&Type>,
    sret: Option<Value>,
) -> Result<Option<Value>, String> {
    let store = |ins: &mut Inserter, base: Value, value: Value, offset: u64| {
        let offset = ins.constant(&Type::I64, Constant::Int(u128::from(offset)))?;
        let at = ins.value(InstructionData::PtrAdd {
            flags: adc_ir::InstFlags::empty(),
            ptr: base,
            offset,
        })?;
        ins.ins(InstructionData::Store { value, ptr: at, align: 1, volatile: false });
        Ok::<(), String>(())
    };
    if let Some(ptr) = sret {
        for (value, offset) in placement.parts {
            store(ins, ptr, value, offset)?;
        }
        return Ok(None);
    }
    let Some(declared) = declared else { return Ok(None) };
    if let [(value, 0)] = placement.parts[..] {
        if ins.func.dfg.value_type(value) == declared {
            return Ok(Some(value));
        }
    }
    let bytes = placement.size.max(declared.size()).max(1);
    let slot = entry_slot(ins, bytes)?;
    let zero = ins.constant(declared, Constant::Zero)?;
    ins.ins(InstructionData::Store { value: zero, ptr: slot, align: 1, volatile: false });
    for (value, offset) in placement.parts {
        store(ins, slot, value, offset)?;
    }
    let loaded = ins.value(InstructionData::Load {
        ty: declared.clone(),
        ptr: slot,
        align: 1,
        volatile: false,
    })?;
    Ok(Some(loaded))
}

/// A stack slot of `bytes` bytes in the caller's entry block (a call inside a loop must not
/// grow the stack).
fn entry_slot(ins: &mut Inserter, bytes: u64) -> Result<Value, String> {
    let entry = ins.func.entry_block().ok_or("internal: a caller without an entry block")?;
    let first = ins.func.layout.first_inst(entry).ok_or("internal: an empty entry block")?;
    let before = std::mem::replace(&mut ins.before, first);
    let slot = ins.value(InstructionData::Alloca {
        ty: Type::array(Type::I8, bytes),
        count: None,
        align: 16,
    });
    ins.before = before;
    slot
}

/// The reverse-mode tuple `{[primal,] {slots}}`: the offset of the slots' tuple, the
/// offsets of the slots of the active arguments (in argument order, `None` for one before
/// the slots), and the whole size.
fn reverse_tuple(
    decoded: &DecodedCall,
    params: &[Type],
    primal: Option<&Type>,
) -> (u64, Vec<Option<u64>>, u64) {
    let start = decoded.flags.slot_start.unwrap_or(0);
    let mut fields = Vec::new();
    let mut active_slots = Vec::new();
    for (index, (arg, ty)) in decoded.args.iter().zip(params).enumerate() {
        let slot = match arg.activity {
            ArgActivity::Active => ty.clone(),
            ArgActivity::Dup | ArgActivity::DupNoNeed => Type::PTR,
            ArgActivity::Const => Type::I8,
        };
        if index < start {
            if arg.activity == ArgActivity::Active {
                active_slots.push(None);
            }
            continue;
        }
        if arg.activity == ArgActivity::Active {
            active_slots.push(Some(fields.len() as u64));
        }
        fields.push(slot);
    }
    let inner = Type::structure(fields, false);
    let offsets: Vec<Option<u64>> =
        active_slots.iter().map(|s| s.and_then(|i| inner.element_offset(i))).collect();
    match primal {
        None => (0, offsets, inner.size()),
        Some(p) => {
            let outer = Type::structure(vec![p.clone(), inner], false);
            let at = outer.element_offset(1).unwrap_or(0);
            (at, offsets, outer.size())
        }
    }
}

/// Whether the C++ tuple layout decides this call's result (rather than the C API's
/// leaf matching, `plan_result`).
pub(super) fn applies(decoded: &DecodedCall) -> bool {
    decoded.flags.shapes_result()
}

/// The result of a derivative call (`plain` reverse or forward derivative) placed into
/// the declared tuple.
pub(super) fn adapt_cxx_result(
    ins: &mut Inserter,
    decoded: &DecodedCall,
    params: &[Type],
    result: Option<Value>,
    declared: Option<&Type>,
) -> Result<Option<Value>, String> {
    let placement = match decoded.mode {
        DiffMode::Forward => {
            let shows = decoded.request.ret != RetActivity::Const || decoded.flags.primal_return;
            match result.filter(|_| shows) {
                Some(value) => {
                    let size = ins.func.dfg.value_type(value).size();
                    Placement { parts: vec![(value, 0)], size }
                }
                None => Placement { parts: Vec::new(), size: 0 },
            }
        }
        DiffMode::Reverse => {
            let (base, offsets, size) = reverse_tuple(decoded, params, None);
            let adjoints = split_adjoints(ins, result, offsets.len())?;
            let parts = adjoints
                .into_iter()
                .zip(offsets)
                .filter_map(|(value, offset)| offset.map(|o| (value, base + o)))
                .collect();
            Placement { parts, size }
        }
    };
    emit_through_memory(ins, placement, declared, decoded.sret)
}

/// The adjoints a derivative returns: none, one value, or a struct of `count`.
fn split_adjoints(
    ins: &mut Inserter,
    result: Option<Value>,
    count: usize,
) -> Result<Vec<Value>, String> {
    match (result, count) {
        (_, 0) => Ok(Vec::new()),
        (Some(value), 1) => Ok(vec![value]),
        (Some(value), n) => (0..n as u32)
            .map(|k| {
                ins.value(InstructionData::ExtractValue { aggregate: value, indices: vec![k] })
            })
            .collect(),
        (None, _) => Err("internal: the derivative returns no adjoints".into()),
    }
}

/// Reverse mode with the primal result: the split function's forward phase, then its
/// reverse phase seeded with 1.0 for an active result, the tape in a stack slot.
pub(super) fn emit_with_primal(
    ins: &mut Inserter,
    decoded: &DecodedCall,
    params: &[Type],
    primal_ret: Option<&Type>,
    split: crate::request::SplitFunction,
    declared: Option<&Type>,
) -> Result<(), String> {
    let layout = crate::reverse::SplitLayout::new(
        &adc_ir::Signature::new(params.to_vec(), primal_ret.cloned()),
        &decoded.request,
    );
    let mut common = Vec::new();
    for (arg, ty) in decoded.args.iter().zip(params) {
        common.push(ins.convert(arg.value, ty)?);
        for shadow in &arg.shadows {
            common.push(ins.convert(*shadow, ty)?);
        }
    }
    let frame = entry_slot(ins, split.frame_bytes.max(8))?;
    let null = ins.constant(&Type::PTR, Constant::Int(0))?;
    let phase_call = |ins: &mut Inserter, reverse: bool| -> Result<Value, String> {
        let mut args = common.clone();
        if layout.takes_d_ret {
            let ty = layout.ret.clone().ok_or("internal: an active result without a type")?;
            let seed = if reverse { seed_one(&ty)? } else { Constant::Zero };
            args.push(ins.constant(&ty, seed)?);
        }
        args.push(null);
        args.push(frame);
        args.push(ins.constant(&Type::I1, Constant::Int(u128::from(reverse)))?);
        ins.value(InstructionData::Call { callee: split.id, args, attrs: FuncAttrs::empty() })
    };
    let forward_out = phase_call(ins, false)?;
    let reverse_out = phase_call(ins, true)?;
    let active_result = decoded.request.ret == RetActivity::Active;
    let primal_slot = if active_result { primal_ret.cloned() } else { Some(Type::I8) };
    let (base, offsets, size) = reverse_tuple(decoded, params, primal_slot.as_ref());
    let mut parts = Vec::new();
    if active_result && layout.ret.is_some() {
        let primal = ins.value(InstructionData::ExtractValue {
            aggregate: forward_out,
            indices: vec![layout.ret_index()],
        })?;
        parts.push((primal, 0));
    }
    for (k, offset) in offsets.into_iter().enumerate() {
        let Some(offset) = offset else { continue };
        let adjoint = ins.value(InstructionData::ExtractValue {
            aggregate: reverse_out,
            indices: vec![layout.adjoint_index(k)],
        })?;
        parts.push((adjoint, base + offset));
    }
    emit_through_memory(ins, Placement { parts, size }, declared, decoded.sret)?.map_or(
        Ok(()),
        |value| {
            let old = ins.func.dfg.inst_result(ins.before);
            match old {
                Some(old) => {
                    ins.func.dfg.replace_uses(old, value);
                    Ok(())
                }
                None => Ok(()),
            }
        },
    )
}

/// 1.0 of a float type (the seed of an active result).
fn seed_one(ty: &Type) -> Result<Constant, String> {
    match ty {
        Type::F32 => Ok(Constant::Float(u64::from(1.0f32.to_bits()))),
        Type::F64 => Ok(Constant::Float(1.0f64.to_bits())),
        other => Err(format!(
            "the primal result together with the adjoints of a result of type {other} (only \
             f32 and f64 results are seeded here)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;

    use crate::{lower_enzyme_calls, Differentiator};

    /// `f(c, x, y) = c·x·y` through the calls `enzyme::autodiff` expands to: a constant
    /// then two active arguments (per-argument slots `{nodiff, double, double}`), with and
    /// without the primal result, and forward mode with `{primal, tangent}`.
    const CALLS: &str = "
declare @__enzyme_autodiff(ptr, ...) -> {i8, f64, f64}
declare @__enzyme_autodiff_primal(ptr, ...) -> {f64, {i8, f64, f64}}
declare @__enzyme_fwddiff(ptr, ...) -> {f64, f64}
declare @__enzyme_autodiff_void(ptr, ...)
global @enzyme_const: i32, align 4
global @enzyme_out: i32, align 4
global @enzyme_dup: i32, align 4
global @enzyme_interleave: i32, align 4
global @enzyme_active_return: i32, align 4
global @enzyme_dup_return: i32, align 4
global @enzyme_noret: i32, align 4
global @enzyme_primal_return: i32, align 4
func @f(%c: f64, %x: f64, %y: f64) -> f64 noinline {
^entry:
  %cx = fmul f64 %c, %x
  %r = fmul f64 %cx, %y
  ret %r
}
func @square(%x: f64) -> f64 noinline {
^entry:
  %r = fmul f64 %x, %x
  ret %r
}
func @reverse(%c: f64, %x: f64, %y: f64) -> f64 {
^entry:
  %fp = const ptr @f
  %ret = const ptr @enzyme_active_return
  %use = const ptr @enzyme_noret
  %cm = const ptr @enzyme_const
  %const = load i32, %cm, align 4
  %om = const ptr @enzyme_out
  %out = load i32, %om, align 4
  %im = const ptr @enzyme_interleave
  %il = load i32, %im, align 4
  %t = call @__enzyme_autodiff(%fp, %ret, %use, %const, %c, %out, %x, %out, %y, %il)
  %dx = extractvalue {i8, f64, f64} %t, 1
  %dy = extractvalue {i8, f64, f64} %t, 2
  %ten = const f64 10.0
  %s = fmul f64 %dx, %ten
  %r = fadd f64 %s, %dy
  ret %r
}
func @with_primal(%c: f64, %x: f64, %y: f64) -> f64 {
^entry:
  %fp = const ptr @f
  %ret = const ptr @enzyme_active_return
  %use = const ptr @enzyme_primal_return
  %cm = const ptr @enzyme_const
  %const = load i32, %cm, align 4
  %om = const ptr @enzyme_out
  %out = load i32, %om, align 4
  %im = const ptr @enzyme_interleave
  %il = load i32, %im, align 4
  %t = call @__enzyme_autodiff_primal(%fp, %ret, %use, %const, %c, %out, %x, %out, %y, %il)
  %p = extractvalue {f64, {i8, f64, f64}} %t, 0
  %dy = extractvalue {f64, {i8, f64, f64}} %t, 1, 2
  %hundred = const f64 100.0
  %s = fmul f64 %p, %hundred
  %r = fadd f64 %s, %dy
  ret %r
}
func @forward(%x: f64, %dx: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %ret = const ptr @enzyme_dup_return
  %use = const ptr @enzyme_primal_return
  %dm = const ptr @enzyme_dup
  %dup = load i32, %dm, align 4
  %im = const ptr @enzyme_interleave
  %il = load i32, %im, align 4
  %t = call @__enzyme_fwddiff(%fp, %ret, %use, %dup, %x, %il, %dx)
  %p = extractvalue {f64, f64} %t, 0
  %d = extractvalue {f64, f64} %t, 1
  %hundred = const f64 100.0
  %s = fmul f64 %p, %hundred
  %r = fadd f64 %s, %d
  ret %r
}
func @adjoints_dropped(%x: f64) {
^entry:
  %fp = const ptr @square
  call @__enzyme_autodiff_void(%fp, %x)
  ret
}
";

    fn run(module: &adc_ir::Module, name: &str, args: &[f64]) -> f64 {
        let mut interp = Interpreter::new(module).unwrap();
        let args: Vec<Val> = args.iter().map(|a| Val::F64(*a)).collect();
        match interp.call(module.function_by_name(name).unwrap(), &args).unwrap() {
            Some(Val::F64(v)) => v,
            other => panic!("{name} returned {other:?}"),
        }
    }

    #[test]
    fn tuple_results_follow_the_headers_layout() {
        let mut module = parse_module(CALLS).unwrap();
        let report = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap();
        assert_eq!(report.calls_lowered, 4);
        adc_ir::verify::verify_module(&module).unwrap();
        // df/dx = c·y = 10, df/dy = c·x = 6 (c = 2, x = 3, y = 5), in slots 1 and 2.
        assert_eq!(run(&module, "reverse", &[2.0, 3.0, 5.0]), 10.0 * 10.0 + 6.0);
        // The primal result 30 before the slots.
        assert_eq!(run(&module, "with_primal", &[2.0, 3.0, 5.0]), 30.0 * 100.0 + 6.0);
        // {x², 2x·dx} at x = 3, dx = 0.5.
        assert_eq!(run(&module, "forward", &[3.0, 0.5]), 9.0 * 100.0 + 3.0);
    }

    #[test]
    fn a_return_flag_for_a_void_function_is_an_error() {
        let text = CALLS
            .replace("%fp = const ptr @square\n  %ret", "%fp = const ptr @sink\n  %ret")
            + "func @sink(%x: f64) noinline {\n^entry:\n  ret\n}\n";
        let mut module = parse_module(&text).unwrap();
        let err = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap_err();
        assert!(err.to_string().contains("@sink returns void"), "{err}");
    }
}
