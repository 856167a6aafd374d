//! Split mode of Enzyme's C API: `__enzyme_augmentfwd`, `__enzyme_reverse` and
//! `__enzyme_augmentsize`, lowered onto the split functions of reverse mode
//! (`__adc_split_<f>`, see `crate::reverse::calls`): the augmented forward call is the
//! split function's forward phase, the reverse call its reverse phase, and the tape is the
//! split function's frame.
//!
//! Argument lists, as Enzyme's (reverse-mode markers; unmarked floats are `enzyme_out`):
//!
//! ```c
//! tape_and_primal = __enzyme_augmentfwd((void*)f, [options], args...);
//! adjoints        = __enzyme_reverse((void*)f, [options], args..., [d_ret], [tape]);
//! size_t n        = __enzyme_augmentsize((void*)f, markers or args...);
//! ```
//!
//! - `__enzyme_augmentfwd` runs `f` with all its effects and returns `{tape, primal
//!   result}` (Enzyme's order; clang declares it as the struct the caller wrote): any
//!   prefix of that list may be declared (`void*` for the tape only, `void`), or an `sret`
//!   struct with those fields. With `enzyme_allocated` the tape is in caller memory and is
//!   not returned: the result is the primal result alone.
//! - `__enzyme_reverse` takes the same arguments again, the differential of the result
//!   when `f` returns a float, and the tape last (unless given by `enzyme_tape`); it
//!   accumulates into the shadows and returns the adjoints of the active arguments like
//!   `__enzyme_autodiff`. It frees the tape unless the tape is caller memory or the call
//!   says `enzyme_nofree` (the caller then frees an adc-allocated tape with `free`).
//! - `__enzyme_augmentsize` is the tape size in bytes, a compile-time constant that
//!   replaces the call. Its arguments may be the full argument list or one activity marker
//!   per parameter (`__enzyme_augmentsize((void*)f, enzyme_dup, enzyme_const)`).
//! - Options before the arguments: `enzyme_allocated, N` (the tape lives in N bytes of
//!   caller memory; N must be a compile-time constant at least the tape size),
//!   `enzyme_tape, p` (that memory, or the tape of the reverse call), `enzyme_nofree`.
//!
//! The tape has a fixed size for every function: loop caches that grow at run time live in
//! heap buffers that the tape points to (allocated by the augmented forward call, freed by
//! the reverse call), so caller memory only ever holds the fixed-size part.

use std::collections::HashMap;

use adc_ir::{
    CastOp, Constant, FuncAttrs, FuncId, Function, GlobalId, Inst, InstructionData, Module,
    ParamAttrs, Signature, Type, Value, ValueDef,
};

use super::{
    adapt_result, bad_call, decode_params, origin, plan_result, pointee_origin,
    remove_dead_operands, target_function, DecodedArg, Inserter, Marker, Origin, Pointee,
    MAX_LOOK_THROUGH,
};
use crate::callees::SignatureCache;
use crate::error::{AdError, Site};
use crate::request::{ArgActivity, DiffMode, DiffRequest, RetActivity, Synthesize};
use crate::reverse::SplitLayout;

/// The split-mode entry points (matched as substrings, like the other API names).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum SplitEntry {
    AugmentFwd,
    Reverse,
    AugmentSize,
}

impl SplitEntry {
    pub(super) fn from_name(name: &str) -> Option<SplitEntry> {
        if name.contains("__enzyme_augmentfwd") {
            Some(SplitEntry::AugmentFwd)
        } else if name.contains("__enzyme_augmentsize") {
            Some(SplitEntry::AugmentSize)
        } else if name.contains("__enzyme_reverse") {
            Some(SplitEntry::Reverse)
        } else {
            None
        }
    }

    fn api(self) -> &'static str {
        match self {
            SplitEntry::AugmentFwd => "__enzyme_augmentfwd",
            SplitEntry::Reverse => "__enzyme_reverse",
            SplitEntry::AugmentSize => "__enzyme_augmentsize",
        }
    }
}

/// The split-mode entry point `call` calls, if any.
pub(super) fn entry_of(module: &Module, caller: FuncId, call: Inst) -> Option<SplitEntry> {
    match module.functions[caller].inst(call) {
        InstructionData::Call { callee, .. } => {
            module.functions.get(*callee).and_then(|f| SplitEntry::from_name(&f.name))
        }
        _ => None,
    }
}

/// The options that may precede the arguments.
#[derive(Default)]
struct TapeOptions {
    /// `enzyme_allocated, N`: the byte size of the caller's memory.
    allocated: Option<u64>,
    /// `enzyme_tape, p`.
    tape: Option<Value>,
    nofree: bool,
}

/// A decoded split-mode call.
struct SplitCallSite {
    entry: SplitEntry,
    function: FuncId,
    args: Vec<DecodedArg>,
    options: TapeOptions,
    /// `__enzyme_reverse`: the differential of the result.
    d_ret: Option<Value>,
    /// The tape: `enzyme_tape` or the trailing argument of `__enzyme_reverse`.
    tape: Option<Value>,
    sret: Option<Value>,
    request: DiffRequest,
}

/// Lowers one call to a split-mode entry point.
pub(super) fn lower_split_call(
    module: &mut Module,
    caller: FuncId,
    call: Inst,
    synth: &mut dyn Synthesize,
    signatures: &mut SignatureCache,
) -> Result<(), AdError> {
    let decoded = decode(module, caller, call)?;
    let api = decoded.entry.api();
    let split = synth.split_function(module, &decoded.request)?;
    let shadow_globals = match decoded.entry {
        SplitEntry::AugmentFwd => crate::activity::shadow_globals_of(module, decoded.function),
        _ => Vec::new(),
    };
    let func = &module.functions[caller];
    let site = Site::inst(module, func, call);
    let target = &module.functions[decoded.function];
    if let Some(size) = decoded.options.allocated {
        if size < split.frame_bytes {
            return Err(bad_call(
                api,
                site,
                format!(
                    "enzyme_allocated gives {size} bytes, but the tape of @{} needs {} bytes \
                     (use __enzyme_augmentsize)",
                    target.name, split.frame_bytes
                ),
            ));
        }
    }
    let layout = SplitLayout::new(&target.signature, &decoded.request);
    let params = target.signature.params.clone();
    let signatures = signatures.refresh(module);
    let api_ret = func.dfg.inst_result(call).map(|v| func.dfg.value_type(v).clone());
    let mut func = std::mem::take(&mut module.functions[caller]);
    let result = match decoded.entry {
        SplitEntry::AugmentSize => replace_with_size(&mut func, call, api_ret, split.frame_bytes),
        entry => {
            let emit = Emit { func: &mut func, signatures, call, api_ret };
            match entry {
                SplitEntry::AugmentFwd => {
                    emit.augmented_forward(&decoded, &params, &layout, split.id, &shadow_globals)
                }
                _ => emit.reverse(&decoded, &params, &layout, split.id),
            }
        }
    };
    module.functions[caller] = func;
    result.map_err(|reason| bad_call(api, site, reason))
}

fn decode(module: &Module, caller: FuncId, call: Inst) -> Result<SplitCallSite, AdError> {
    let func = &module.functions[caller];
    let site = || Site::inst(module, func, call);
    let InstructionData::Call { callee, args, .. } = func.inst(call) else {
        return Err(bad_call("__enzyme_augmentfwd", site(), "not a direct call".into()));
    };
    let api_fn = &module.functions[*callee];
    let entry = SplitEntry::from_name(&api_fn.name).ok_or_else(|| {
        bad_call("__enzyme_augmentfwd", site(), format!("@{} is not split mode", api_fn.name))
    })?;
    let api = entry.api();
    let has_sret = api_fn.param_attrs.first().is_some_and(|a| a.contains(ParamAttrs::SRET))
        && !args.is_empty();
    let (sret, args) = if has_sret { (Some(args[0]), &args[1..]) } else { (None, &args[..]) };
    let Some(&fn_arg) = args.first() else {
        return Err(bad_call(api, site(), "no function to differentiate was passed".into()));
    };
    let function = target_function(module, func, &site, api, DiffMode::Reverse, fn_arg)?;
    let target = &module.functions[function];
    let mut rest = args[1..].iter().copied().peekable();
    let leading = parse_options(module, func, &site, api, &mut rest)?;
    let remaining: Vec<Value> = rest.clone().collect();
    let decoded = if entry == SplitEntry::AugmentSize && all_markers(module, func, &remaining) {
        rest.by_ref().for_each(drop);
        markers_only(module, func, &site, function, &remaining)?
    } else {
        decode_params(module, func, &site, api, false, 1, function, &mut rest, &mut None, 0)?
    };
    // Enzyme also takes the options after the arguments.
    let trailing = parse_options(module, func, &site, api, &mut rest)?;
    let options = TapeOptions {
        allocated: leading.allocated.or(trailing.allocated),
        tape: leading.tape.or(trailing.tape),
        nofree: leading.nofree || trailing.nofree,
    };
    let ret = match &target.signature.ret {
        Some(ty) if ty.is_float() => RetActivity::Active,
        _ => RetActivity::Const,
    };
    let mut d_ret = None;
    let mut tape = options.tape;
    if entry == SplitEntry::Reverse {
        if ret == RetActivity::Active {
            d_ret = Some(rest.next().ok_or_else(|| {
                bad_call(
                    api,
                    site(),
                    format!(
                        "the differential of @{}'s result ({}) is missing after the arguments",
                        target.name,
                        target.signature.ret.as_ref().map_or(String::new(), |t| t.to_string())
                    ),
                )
            })?);
        }
        if tape.is_none() {
            tape = Some(rest.next().ok_or_else(|| {
                bad_call(api, site(), "the tape is missing after the arguments".into())
            })?);
        }
    }
    if options.allocated.is_some() && options.tape.is_none() {
        return Err(bad_call(
            api,
            site(),
            "enzyme_allocated needs the memory too: add `enzyme_tape, pointer`".into(),
        ));
    }
    if entry == SplitEntry::AugmentFwd && options.tape.is_some() && options.allocated.is_none() {
        return Err(bad_call(
            api,
            site(),
            "enzyme_tape in an augmented forward call needs `enzyme_allocated, size` before it"
                .into(),
        ));
    }
    if let Some(extra) = rest.next() {
        return Err(bad_call(
            api,
            site(),
            format!(
                "too many arguments: `{}` and {} more are left over after @{}'s {} parameters",
                super::value_text(module, func, extra),
                rest.count(),
                target.name,
                target.signature.params.len()
            ),
        ));
    }
    for (value, what) in [(d_ret, "differential of the result"), (tape, "tape")] {
        let Some(value) = value else { continue };
        let ty = func.dfg.value_type(value);
        let expected = if what == "tape" {
            Type::PTR
        } else {
            target.signature.ret.clone().unwrap_or(Type::PTR)
        };
        if !super::converts_to(ty, &expected) {
            return Err(bad_call(api, site(), format!("the {what} has type {ty}, not {expected}")));
        }
    }
    // A split function is shared by every caller with the same activity: `dupnoneed`
    // shadows behave as `dup` there.
    let activities = decoded
        .iter()
        .map(|a| if a.activity == ArgActivity::DupNoNeed { ArgActivity::Dup } else { a.activity })
        .collect();
    let request = DiffRequest::reverse(function, activities, ret);
    Ok(SplitCallSite { entry, function, args: decoded, options, d_ret, tape, sret, request })
}

/// Consumes `enzyme_allocated, N`, `enzyme_tape, p` and `enzyme_nofree` at the front.
fn parse_options(
    module: &Module,
    func: &Function,
    site: &dyn Fn() -> Site,
    api: &str,
    rest: &mut std::iter::Peekable<impl Iterator<Item = Value>>,
) -> Result<TapeOptions, AdError> {
    let mut options = TapeOptions::default();
    while let Some(&next) = rest.peek() {
        let Origin::UnsupportedMarker(name) = origin(module, func, next) else { break };
        let mut operand = |what: &str| {
            rest.next();
            rest.next().ok_or_else(|| {
                bad_call(api, site(), format!("{name} at the end of the arguments without {what}"))
            })
        };
        match name.as_str() {
            "enzyme_allocated" => {
                let size = operand("a size")?;
                let bytes = constant_int(module, func, size).ok_or_else(|| {
                    bad_call(
                        api,
                        site(),
                        format!(
                            "the size after enzyme_allocated, `{}`, is not a compile-time \
                             constant (use __enzyme_augmentsize or a literal)",
                            super::value_text(module, func, size)
                        ),
                    )
                })?;
                options.allocated = Some(bytes);
            }
            "enzyme_tape" => options.tape = Some(operand("a pointer")?),
            "enzyme_nofree" => {
                rest.next();
                options.nofree = true;
            }
            _ => break,
        }
    }
    Ok(options)
}

fn all_markers(module: &Module, func: &Function, args: &[Value]) -> bool {
    !args.is_empty() && args.iter().all(|a| matches!(origin(module, func, *a), Origin::Marker(_)))
}

/// `__enzyme_augmentsize((void*)f, enzyme_dup, enzyme_const, ...)`: one marker per
/// parameter and no values.
fn markers_only(
    module: &Module,
    func: &Function,
    site: &dyn Fn() -> Site,
    function: FuncId,
    args: &[Value],
) -> Result<Vec<DecodedArg>, AdError> {
    let api = SplitEntry::AugmentSize.api();
    let target = &module.functions[function];
    let params = &target.signature.params;
    if args.len() != params.len() {
        return Err(bad_call(
            api,
            site(),
            format!(
                "{} markers for the {} parameters of @{} (give one marker per parameter, or \
                 the full argument list)",
                args.len(),
                params.len(),
                target.name
            ),
        ));
    }
    let mut decoded = Vec::new();
    for ((index, arg), ty) in args.iter().enumerate().zip(params) {
        let Origin::Marker(marker) = origin(module, func, *arg) else { unreachable!() };
        let activity = match marker {
            Marker::Const => ArgActivity::Const,
            Marker::Out if ty.lane_type().is_float() => ArgActivity::Active,
            Marker::Dup | Marker::DupNoNeed if ty.is_ptr() => ArgActivity::Dup,
            _ => {
                return Err(bad_call(
                    api,
                    site(),
                    format!(
                        "parameter {index} ({ty}) of @{}: {} does not fit its type",
                        target.name,
                        marker.name()
                    ),
                ))
            }
        };
        decoded.push(DecodedArg { value: *arg, shadows: Vec::new(), stride: None, activity });
    }
    Ok(decoded)
}

/// The integer `value` is known to be at compile time: a constant, possibly cast or kept in
/// a local written once (-O0). Also reads `enzyme_width`'s N.
pub(super) fn constant_int(module: &Module, func: &Function, value: Value) -> Option<u64> {
    let mut value = value;
    for _ in 0..MAX_LOOK_THROUGH {
        let ValueDef::Result(inst) = func.dfg.value_def(value) else { return None };
        match func.inst(inst) {
            InstructionData::Const { value: Constant::Int(v), .. } => {
                return u64::try_from(*v).ok()
            }
            InstructionData::Const { value: Constant::Zero, .. } => return Some(0),
            InstructionData::Cast {
                op: CastOp::Sext | CastOp::Zext | CastOp::Trunc | CastOp::Bitcast,
                arg,
                ..
            } => value = *arg,
            InstructionData::Load { ptr, .. } => match pointee_origin(module, func, *ptr) {
                Pointee::StoredValue(stored) => value = stored,
                _ => return None,
            },
            _ => return None,
        }
    }
    None
}

fn replace_with_size(
    func: &mut Function,
    call: Inst,
    api_ret: Option<Type>,
    bytes: u64,
) -> Result<(), String> {
    let Some(ty) = api_ret.filter(|t| t.is_int()) else {
        return Err("the call must be declared to return an integer (the size in bytes)".into());
    };
    let old_args = func.inst(call).args();
    let value = Constant::int(&ty, i128::from(bytes));
    func.dfg.insts[call] = InstructionData::Const { ty, value };
    remove_dead_operands(func, old_args);
    Ok(())
}

/// Emits the split function call in place of the API call.
struct Emit<'a> {
    func: &'a mut Function,
    signatures: &'a HashMap<FuncId, Signature>,
    call: Inst,
    api_ret: Option<Type>,
}

impl Emit<'_> {
    fn inserter(&mut self) -> Inserter<'_> {
        let loc = self.func.dfg.debug_locs[self.call].clone();
        Inserter { func: self.func, signatures: self.signatures, before: self.call, loc }
    }

    /// The arguments of the split function up to (not including) the frame and phase.
    fn leading_args(
        ins: &mut Inserter,
        site: &SplitCallSite,
        params: &[Type],
        layout: &SplitLayout,
    ) -> Result<Vec<Value>, String> {
        let mut args = Vec::new();
        for (arg, ty) in site.args.iter().zip(params) {
            args.push(ins.convert(arg.value, ty)?);
            // Split mode has width 1: at most one shadow.
            for shadow in &arg.shadows {
                args.push(ins.convert(*shadow, ty)?);
            }
        }
        if layout.takes_d_ret {
            let ty = layout.ret.clone().ok_or("internal: an active result without a type")?;
            let d = match site.d_ret {
                Some(d) => ins.convert(d, &ty)?,
                None => ins.constant(&ty, Constant::Zero)?,
            };
            args.push(d);
        }
        Ok(args)
    }

    fn finish(self, old_args: Vec<Value>, replacement: Option<Value>) {
        if let (Some(old), Some(new)) = (self.func.dfg.inst_result(self.call), replacement) {
            self.func.dfg.replace_uses(old, new);
        }
        self.func.layout.remove_inst(self.call);
        remove_dead_operands(self.func, old_args);
    }

    fn augmented_forward(
        mut self,
        site: &SplitCallSite,
        params: &[Type],
        layout: &SplitLayout,
        split: FuncId,
        shadow_globals: &[(GlobalId, u64)],
    ) -> Result<(), String> {
        let old_args = self.func.inst(self.call).args();
        let api_ret = self.api_ret.clone();
        let mut ins = self.inserter();
        // Check the declared result before emitting anything.
        let mut fields: Vec<Type> = Vec::new();
        if site.options.allocated.is_none() {
            fields.push(Type::PTR);
        }
        fields.extend(layout.ret.clone());
        let declared = declared_fields(api_ret.as_ref(), site.sret.is_some(), &fields)?;
        ins.zero_shadow_globals(shadow_globals)?;
        let mut args = Self::leading_args(&mut ins, site, params, layout)?;
        let frame_in = match (site.options.allocated, site.tape) {
            (Some(_), Some(tape)) => tape,
            _ => ins.constant(&Type::PTR, Constant::Int(0))?,
        };
        // No arena: a call from user code is the root of its tree (see `reverse::arena`).
        args.push(ins.constant(&Type::PTR, Constant::Int(0))?);
        args.push(frame_in);
        args.push(ins.constant(&Type::I1, Constant::Int(0))?);
        let out =
            ins.value(InstructionData::Call { callee: split, args, attrs: FuncAttrs::empty() })?;
        let mut values = Vec::new();
        if site.options.allocated.is_none() {
            values.push(extract(&mut ins, out, layout.frame_index())?);
        }
        if layout.ret.is_some() {
            values.push(extract(&mut ins, out, layout.ret_index())?);
        }
        let replacement = match (site.sret, api_ret) {
            (Some(ptr), _) => {
                let ty = Type::structure(fields.clone(), false);
                for (index, value) in values.iter().enumerate() {
                    let offset = ty.element_offset(index as u64).unwrap_or(0);
                    let offset = ins.constant(&Type::I64, Constant::Int(u128::from(offset)))?;
                    let at = ins.value(InstructionData::PtrAdd {
                        flags: adc_ir::InstFlags::empty(),
                        ptr,
                        offset,
                    })?;
                    let align = fields[index].align() as u32;
                    ins.ins(InstructionData::Store {
                        value: *value,
                        ptr: at,
                        align,
                        volatile: false,
                    });
                }
                None
            }
            (None, None) => None,
            (None, Some(ty)) if declared == 1 && !matches!(ty, Type::Struct(_)) => Some(values[0]),
            (None, Some(ty)) => {
                let mut acc = ins.constant(&ty, Constant::Undef)?;
                for (index, value) in values.iter().take(declared).enumerate() {
                    acc = ins.value(InstructionData::InsertValue {
                        aggregate: acc,
                        value: *value,
                        indices: vec![index as u32],
                    })?;
                }
                Some(acc)
            }
        };
        self.finish(old_args, replacement);
        Ok(())
    }

    fn reverse(
        mut self,
        site: &SplitCallSite,
        params: &[Type],
        layout: &SplitLayout,
        split: FuncId,
    ) -> Result<(), String> {
        let old_args = self.func.inst(self.call).args();
        let adjoint_types: Vec<Type> = site
            .args
            .iter()
            .zip(params)
            .filter(|(a, _)| a.activity == ArgActivity::Active)
            .map(|(_, t)| t.clone())
            .collect();
        let adjoints_ty = match adjoint_types.len() {
            0 => None,
            1 => Some(adjoint_types[0].clone()),
            _ => Some(Type::structure(adjoint_types.clone(), false)),
        };
        let what = format!("the adjoints of {} active argument(s)", adjoint_types.len());
        let plan = plan_result(adjoints_ty.as_ref(), self.api_ret.as_ref(), site.sret, &what)?;
        let mut ins = self.inserter();
        let mut args = Self::leading_args(&mut ins, site, params, layout)?;
        let tape = site.tape.ok_or("internal: a reverse call without a tape")?;
        if site.options.nofree {
            // The reverse phase frees only frames whose ownership flag is set.
            let zero = ins.constant(&Type::I64, Constant::Int(0))?;
            ins.ins(InstructionData::Store { value: zero, ptr: tape, align: 8, volatile: false });
        }
        args.push(ins.constant(&Type::PTR, Constant::Int(0))?);
        args.push(tape);
        args.push(ins.constant(&Type::I1, Constant::Int(1))?);
        let out =
            ins.value(InstructionData::Call { callee: split, args, attrs: FuncAttrs::empty() })?;
        let mut adjoints = Vec::new();
        for k in 0..adjoint_types.len() {
            adjoints.push(extract(&mut ins, out, layout.adjoint_index(k))?);
        }
        let result = match &adjoints_ty {
            None => None,
            Some(_) if adjoints.len() == 1 => Some(adjoints[0]),
            Some(ty) => {
                let mut acc = ins.constant(ty, Constant::Undef)?;
                for (index, value) in adjoints.iter().enumerate() {
                    acc = ins.value(InstructionData::InsertValue {
                        aggregate: acc,
                        value: *value,
                        indices: vec![index as u32],
                    })?;
                }
                Some(acc)
            }
        };
        let adapted = adapt_result(&mut ins, result, plan)?;
        self.finish(old_args, adapted);
        Ok(())
    }
}

fn extract(ins: &mut Inserter, aggregate: Value, index: u32) -> Result<Value, String> {
    ins.value(InstructionData::ExtractValue { aggregate, indices: vec![index] })
}

/// How many of `fields` (the tape, the primal result) the declared result holds: it must
/// be a prefix of them, as a struct or as the first field alone.
fn declared_fields(declared: Option<&Type>, sret: bool, fields: &[Type]) -> Result<usize, String> {
    let describe = || {
        let names: Vec<String> = fields.iter().map(|t| t.to_string()).collect();
        format!("{{{}}}", names.join(", "))
    };
    if sret {
        return Ok(fields.len());
    }
    let Some(declared) = declared else { return Ok(0) };
    // Nothing to return (the tape in caller memory, a void f): whatever the call is
    // declared to return is left undefined, as Enzyme does.
    if fields.is_empty() {
        return Ok(0);
    }
    let fits = |a: &Type, b: &Type| a == b || (a.is_ptr() && b.is_ptr());
    let count = match declared {
        Type::Struct(s) => {
            let ok = s.fields.len() <= fields.len()
                && s.fields.iter().zip(fields).all(|(a, b)| fits(a, b));
            ok.then_some(s.fields.len())
        }
        other => fields.first().filter(|first| fits(other, first)).map(|_| 1),
    };
    count.ok_or_else(|| {
        format!(
            "the call is declared to return {declared}, which is not a prefix of what it \
             returns: {} (the tape, then the primal result)",
            describe()
        )
    })
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;

    use crate::{lower_enzyme_calls, Differentiator};

    /// `f(x, y) = x·x·y`; `@run` splits it: augmented forward, then reverse seeded with
    /// `d`, returning `df/dx` (the tape lives in caller memory when `@run_allocated` runs).
    const SPLIT: &str = "
declare @__enzyme_augmentfwd(ptr, ...) -> {ptr, f64}
declare @__enzyme_augmentfwd_alloc(ptr, ...) -> f64
declare @__enzyme_reverse(ptr, ...) -> {f64, f64}
declare @__enzyme_augmentsize(ptr, ...) -> i64
declare @malloc(i64) -> ptr
global @enzyme_out: i32, align 4 = 0
global @enzyme_allocated: i32, align 4 = 0
global @enzyme_tape: i32, align 4 = 0
func @f(%x: f64, %y: f64) -> f64 noinline {
^entry:
  %xx = fmul f64 %x, %x
  %r = fmul f64 %xx, %y
  ret %r
}
func @run(%x: f64, %y: f64, %d: f64) -> f64 {
^entry:
  %fp = const ptr @f
  %aug = call @__enzyme_augmentfwd(%fp, %x, %y)
  %tape = extractvalue {ptr, f64} %aug, 0
  %adj = call @__enzyme_reverse(%fp, %x, %y, %d, %tape)
  %dx = extractvalue {f64, f64} %adj, 0
  ret %dx
}
func @size() -> i64 {
^entry:
  %fp = const ptr @f
  %m = const ptr @enzyme_out
  %out = load i32, %m, align 4
  %n = call @__enzyme_augmentsize(%fp, %out, %out)
  ret %n
}
func @run_allocated(%x: f64, %y: f64) -> f64 {
^entry:
  %fp = const ptr @f
  %m = const ptr @enzyme_out
  %out = load i32, %m, align 4
  %n = call @__enzyme_augmentsize(%fp, %out, %out)
  %mem = call @malloc(%n)
  %am = const ptr @enzyme_allocated
  %alloc = load i32, %am, align 4
  %tm = const ptr @enzyme_tape
  %tape = load i32, %tm, align 4
  %p = call @__enzyme_augmentfwd_alloc(%fp, %alloc, %n, %tape, %mem, %x, %y)
  %one = const f64 1.0
  %adj = call @__enzyme_reverse(%fp, %alloc, %n, %tape, %mem, %x, %y, %one)
  %dy = extractvalue {f64, f64} %adj, 1
  %sum = fadd f64 %p, %dy
  ret %sum
}
";

    fn call(module: &adc_ir::Module, name: &str, args: &[Val]) -> Option<Val> {
        let mut interp = Interpreter::new(module).unwrap();
        interp.call(module.function_by_name(name).unwrap(), args).unwrap()
    }

    #[test]
    fn augmented_forward_and_reverse_share_the_tape() {
        let mut module = parse_module(SPLIT).unwrap();
        let report = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap();
        assert_eq!(report.calls_lowered, 6);
        adc_ir::verify::verify_module(&module).unwrap();
        // df/dx = 2xy, scaled by d.
        let dx = call(&module, "run", &[Val::F64(1.5), Val::F64(2.0), Val::F64(0.5)]);
        assert_eq!(dx, Some(Val::F64(0.5 * 2.0 * 1.5 * 2.0)));
        // f(x, y) + df/dy = x²y + x², with the tape in caller memory.
        let sum = call(&module, "run_allocated", &[Val::F64(3.0), Val::F64(2.0)]);
        assert_eq!(sum, Some(Val::F64(18.0 + 9.0)));
        let Some(Val::Int(size)) = call(&module, "size", &[]) else { panic!("an integer") };
        assert!(size >= 8, "the frame holds at least its ownership flag: {size}");
    }

    /// Enzyme's allocatedtape: the options after the arguments, and a `void*` result
    /// declared where nothing is returned (the tape is caller memory, `f` is void).
    #[test]
    fn options_may_follow_the_arguments() {
        let text = "
declare @__enzyme_augmentfwd(ptr, ...) -> ptr
declare @__enzyme_reverse(ptr, ...)
global @enzyme_dup: i32, align 4 = 0
global @enzyme_allocated: i32, align 4 = 0
global @enzyme_tape: i32, align 4 = 0
func @f(%x: ptr) noinline {
^entry:
  %v = load f64, %x, align 8
  %s = fmul f64 %v, %v
  store %s, %x, align 8
  ret
}
func @run(%x: ptr, %dx: ptr) {
^entry:
  %fp = const ptr @f
  %dm = const ptr @enzyme_dup
  %dup = load i32, %dm, align 4
  %am = const ptr @enzyme_allocated
  %alloc = load i32, %am, align 4
  %tm = const ptr @enzyme_tape
  %tape = load i32, %tm, align 4
  %n = const i64 4096
  %mem = alloca [4096 x i8], align 16
  %ignored = call @__enzyme_augmentfwd(%fp, %dup, %x, %dx, %alloc, %n, %tape, %mem)
  call @__enzyme_reverse(%fp, %dup, %x, %dx, %alloc, %n, %tape, %mem)
  ret
}
";
        let mut module = parse_module(text).unwrap();
        let report = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap();
        assert_eq!(report.calls_lowered, 2);
        adc_ir::verify::verify_module(&module).unwrap();
        let mut interp = Interpreter::new(&module).unwrap();
        let x = interp.alloc(&adc_ir::Type::F64, &[Val::F64(3.0)]).unwrap();
        let dx = interp.alloc(&adc_ir::Type::F64, &[Val::F64(1.0)]).unwrap();
        interp.call(module.function_by_name("run").unwrap(), &[x.clone(), dx.clone()]).unwrap();
        // x <- x^2, and the adjoint of the overwritten x flows back: dx <- 2x * dx.
        assert_eq!(interp.read(&x, &adc_ir::Type::F64, 1).unwrap(), vec![Val::F64(9.0)]);
        assert_eq!(interp.read(&dx, &adc_ir::Type::F64, 1).unwrap(), vec![Val::F64(6.0)]);
    }

    #[test]
    fn a_tape_smaller_than_the_frame_is_an_error() {
        let text = SPLIT
            .replace("%mem = call @malloc(%n)", "%n4 = const i64 4\n  %mem = call @malloc(%n4)")
            .replace(
                "@__enzyme_augmentfwd_alloc(%fp, %alloc, %n, %tape",
                "@__enzyme_augmentfwd_alloc(%fp, %alloc, %n4, %tape",
            );
        let mut module = parse_module(&text).unwrap();
        let err = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap_err();
        assert!(err.to_string().contains("enzyme_allocated gives 4 bytes"), "{err}");
    }

    #[test]
    fn a_missing_tape_is_an_error() {
        let text = SPLIT.replace("(%fp, %x, %y, %d, %tape)", "(%fp, %x, %y, %d)");
        let mut module = parse_module(&text).unwrap();
        let err = lower_enzyme_calls(&mut module, &mut Differentiator::default()).unwrap_err();
        assert!(err.to_string().contains("the tape is missing"), "{err}");
    }
}
