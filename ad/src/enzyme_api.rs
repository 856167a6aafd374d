//! Lowering of Enzyme's C API: every call to a function whose name contains
//! `__enzyme_autodiff` becomes a call to the synthesized reverse-mode derivative, and every
//! call to one whose name contains `__enzyme_fwddiff` a call to the forward-mode one.
//!
//! The argument list is decoded exactly as Enzyme does: the first argument is the function
//! to differentiate (a constant address, possibly cast); then, for each of its parameters,
//! an optional marker (a load of, or the address of, the global `enzyme_dup`,
//! `enzyme_dupnoneed`, `enzyme_const` or `enzyme_out`) followed by the value, and for
//! `enzyme_dup`/`enzyme_dupnoneed` the shadow pointer. Without a marker, integers are
//! constant, floats active and pointers duplicated. Markers reach us as loads of the marker
//! globals; the `metadata !"enzyme_dup"` form is rejected by the LLVM importer ("metadata
//! used as a value"), so it never reaches this module.
//!
//! Forward mode (`__enzyme_fwddiff`) differs in three ways. A duplicated float argument is
//! followed by its tangent (a value, not a pointer), and a pointer by its shadow, whose
//! pointee holds the input tangents and receives the output ones. Without a marker a float
//! is duplicated, as a pointer is: Enzyme's `whatType` (`enzyme/Enzyme/Utils.h`) classifies
//! floating-point types as `DUP_ARG` in `DerivativeMode::ForwardMode` and as `OUT_DIFF`
//! only in the reverse modes. `enzyme_out` has no meaning in forward mode and is an error.
//! The call returns the tangent of the primal result (Enzyme's default for `fwddiff`: the
//! primal result is not returned), adapted to the declared type as in reverse mode.
//!
//! The result is adapted to what the caller declared: the derivative returns the adjoints
//! of the active arguments (void, one float, or a struct of them, see
//! [`crate::request`]); clang may have declared an equivalent aggregate or vector of a
//! different shape (`<2 x float>` for a pair of floats), or an `sret` pointer for a large
//! struct. Leaves are matched in order, so any shape with the same float leaves works.
//!
//! Invariant: on error the module may already contain derivatives for earlier calls, but
//! the failing call itself is left untouched.

use std::collections::HashMap;

use adc_ir::{
    CastOp, Constant, DebugLoc, FuncId, Function, GlobalId, Inst, InstructionData, Module,
    ParamAttrs, Signature, Symbol, Type, Value, ValueDef,
};

use crate::callees::SignatureCache;
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{is_float_like, ArgActivity, DiffMode, DiffRequest, RetActivity, Synthesize};

/// The substring that identifies reverse-mode API entry points (`__enzyme_autodiff`,
/// `__enzyme_autodiff2`, `__enzyme_autodiff_pair`, ...).
pub const AUTODIFF_API: &str = "__enzyme_autodiff";

/// The substring that identifies forward-mode API entry points (`__enzyme_fwddiff`,
/// `__enzyme_fwddiff_pair`, ...).
pub const FWDDIFF_API: &str = "__enzyme_fwddiff";

/// The mode an API entry point named `name` asks for; `None` for other functions.
pub fn api_mode(name: &str) -> Option<DiffMode> {
    if name.contains(AUTODIFF_API) || split_api::SplitEntry::from_name(name).is_some() {
        Some(DiffMode::Reverse)
    } else if name.contains(FWDDIFF_API) {
        Some(DiffMode::Forward)
    } else {
        None
    }
}

/// The API's name in diagnostics.
fn api_name(mode: DiffMode) -> &'static str {
    match mode {
        DiffMode::Reverse => AUTODIFF_API,
        DiffMode::Forward => FWDDIFF_API,
    }
}

/// How deep look-through (casts, loads of locals) may go before giving up.
const MAX_LOOK_THROUGH: usize = 16;

/// An activity marker argument.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Marker {
    Dup,
    DupNoNeed,
    Const,
    Out,
    /// `enzyme_width, N`: vector forward mode (see `width.rs`).
    Width,
    /// `enzyme_dupv, stride, x, dx`: `N` shadows at a byte stride from `dx`.
    DupV,
}

impl Marker {
    /// The marker named by a global, `None` for a global that is not an Enzyme marker.
    /// `Err` for an Enzyme marker this lowering does not implement (`enzyme_width`, ...).
    fn from_global_name(name: &str) -> Option<Result<Marker, String>> {
        match name {
            "enzyme_dup" => Some(Ok(Marker::Dup)),
            "enzyme_dupnoneed" => Some(Ok(Marker::DupNoNeed)),
            "enzyme_const" => Some(Ok(Marker::Const)),
            "enzyme_out" => Some(Ok(Marker::Out)),
            "enzyme_width" => Some(Ok(Marker::Width)),
            "enzyme_dupv" => Some(Ok(Marker::DupV)),
            other if other.starts_with("enzyme_") => Some(Err(other.to_string())),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Marker::Dup => "enzyme_dup",
            Marker::DupNoNeed => "enzyme_dupnoneed",
            Marker::Const => "enzyme_const",
            Marker::Out => "enzyme_out",
            Marker::Width => "enzyme_width",
            Marker::DupV => "enzyme_dupv",
        }
    }
}

/// What a call argument turned out to be after looking through casts and loads.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Origin {
    Function(FuncId),
    Marker(Marker),
    /// A whole-call flag of the C++ API (`enzyme_dup_return`, `enzyme_interleave`, ...).
    Flag(cxx_api::CallFlag),
    /// A global named `enzyme_*` that is not a supported marker.
    UnsupportedMarker(String),
    Other,
}

/// One primal argument of the derivative call, and its shadow when duplicated.
#[derive(Clone, Debug)]
struct DecodedArg {
    value: Value,
    /// One shadow per lane of vector forward mode (one for `enzyme_dupv`: the base).
    shadows: Vec<Value>,
    /// `enzyme_dupv`'s byte stride between the shadows of consecutive lanes.
    stride: Option<Value>,
    activity: ArgActivity,
}

/// A decoded `__enzyme_autodiff` or `__enzyme_fwddiff` call site.
#[derive(Clone, Debug)]
struct DecodedCall {
    mode: DiffMode,
    function: FuncId,
    args: Vec<DecodedArg>,
    /// The pointer the caller expects the result to be written through (`sret`).
    sret: Option<Value>,
    request: DiffRequest,
    /// The C++ API's call flags (`enzyme_primal_return`, tuple slots, ...).
    flags: cxx_api::CallFlags,
}

/// What the lowering did, for statistics and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweringReport {
    /// Call sites replaced, in module order.
    pub calls_lowered: usize,
    /// Distinct requests (a derivative is synthesized once per request).
    pub requests: Vec<DiffRequest>,
    /// The derivative functions `__enzyme_autodiff`/`__enzyme_fwddiff` calls now call,
    /// once each (split-mode entry points not included).
    pub derivatives: Vec<FuncId>,
    /// Where the tapes of a GPU module live (`crate::reverse::gpu_tapes`).
    pub device_tapes: crate::reverse::gpu_tapes::DeviceTapes,
}

/// Replaces every `__enzyme_autodiff*` and `__enzyme_fwddiff*` call in `module` by a call
/// to the derivative that `synth` produces. Stops at the first malformed call or synthesis failure.
pub fn lower_enzyme_calls(
    module: &mut Module,
    synth: &mut dyn Synthesize,
) -> Result<LoweringReport, AdError> {
    let mut report = LoweringReport::default();
    retyped_calls::make_retyped_api_calls_direct(module);
    let mut calls = find_api_calls(module);
    if let Some(&(caller, call)) = calls.first() {
        // Malformed custom-derivative registrations are reported even where unused, at
        // the first API call (globals have no source line).
        crate::custom::Registrations::read(module).map_err(|e| {
            AdError::new(Site::inst(module, &module.functions[caller], call), e.kind)
        })?;
    }
    iteration_count::check_calls(module)?;
    // `__enzyme_augmentsize` first: its constant may size an `enzyme_allocated` tape.
    calls.sort_by_key(|(caller, call)| {
        split_api::entry_of(module, *caller, *call) != Some(split_api::SplitEntry::AugmentSize)
    });
    let differentiated = calls.iter().filter_map(|(c, i)| decode_call(module, *c, *i).ok());
    let differentiated_again = nesting::reached_from(module, differentiated.map(|d| d.function));
    let mut pending: std::collections::VecDeque<(FuncId, Inst)> = calls.into();
    // Innermost first (see `nesting.rs`); when every pending call waits for another one (a
    // cycle), they are lowered anyway and synthesis reports what it cannot differentiate.
    let mut deferred_in_a_row = 0;
    let mut signatures = SignatureCache::default();
    // Functions from this index on were created by the synthesis of the last request.
    let mut synthesized_from = module.functions.len();
    while let Some((caller, call)) = pending.pop_front() {
        iteration_count::raise_in_new_functions(module, synthesized_from);
        synthesized_from = module.functions.len();
        if split_api::entry_of(module, caller, call).is_some() {
            split_api::lower_split_call(module, caller, call, synth, &mut signatures)?;
            report.calls_lowered += 1;
            continue;
        }
        let decoded = decode_call(module, caller, call)?;
        if deferred_in_a_row <= pending.len() && nesting::reaches_api_call(module, decoded.function)
        {
            pending.push_back((caller, call));
            deferred_in_a_row += 1;
            continue;
        }
        deferred_in_a_row = 0;
        if decoded.flags.primal_return && decoded.mode == DiffMode::Reverse {
            lower_with_primal(module, caller, call, &decoded, synth, &mut signatures)?;
            report.calls_lowered += 1;
            if !report.requests.contains(&decoded.request) {
                report.requests.push(decoded.request);
            }
            continue;
        }
        nesting::inline_inner_derivatives(module, decoded.function, &report.derivatives)?;
        let derivative = if differentiated_again.contains(&caller) {
            synth.derivative_to_differentiate_again(module, &decoded.request)?
        } else {
            synth.derivative(module, &decoded.request)?
        };
        let shadow_globals = match decoded.mode {
            DiffMode::Reverse => crate::activity::shadow_globals_of(module, decoded.function),
            DiffMode::Forward => Vec::new(),
        };
        let site = Site::inst(module, &module.functions[caller], call);
        let signatures = signatures.refresh(module);
        let api_ret = call_result_type(module, caller, call);
        let mut func = std::mem::take(&mut module.functions[caller]);
        let target = (derivative, shadow_globals.as_slice());
        let result = replace_call(&mut func, signatures, call, &decoded, target, api_ret);
        module.functions[caller] = func;
        result.map_err(|reason| bad_call(api_name(decoded.mode), site, reason))?;
        report.calls_lowered += 1;
        if !report.derivatives.contains(&derivative) {
            report.derivatives.push(derivative);
        }
        if !report.requests.contains(&decoded.request) {
            report.requests.push(decoded.request);
        }
    }
    iteration_count::raise_in_new_functions(module, synthesized_from);
    iteration_count::lower_remaining(module);
    if report.calls_lowered > 0 {
        define_marker_globals(module);
    }
    // GPU modules: tapes in local memory (or on the device heap, opt-in), no `realloc`.
    let space = synth.device_tape_space();
    report.device_tapes = crate::reverse::gpu_tapes::place_device_tapes(module, space)?;
    Ok(report)
}

/// Reverse mode with the primal result (`enzyme_primal_return`): through the split
/// function (see `cxx_api`).
fn lower_with_primal(
    module: &mut Module,
    caller: FuncId,
    call: Inst,
    decoded: &DecodedCall,
    synth: &mut dyn Synthesize,
    signatures: &mut SignatureCache,
) -> Result<(), AdError> {
    let split = synth.split_function(module, &decoded.request)?;
    let shadow_globals = crate::activity::shadow_globals_of(module, decoded.function);
    let site = Site::inst(module, &module.functions[caller], call);
    let signatures = signatures.refresh(module);
    let target_sig = module.functions[decoded.function].signature.clone();
    let api_ret = call_result_type(module, caller, call);
    let mut func = std::mem::take(&mut module.functions[caller]);
    let loc = func.dfg.debug_locs[call].clone();
    let old_args = func.inst(call).args();
    let mut ins = Inserter { func: &mut func, signatures, before: call, loc };
    let result = ins.zero_shadow_globals(&shadow_globals).and_then(|()| {
        cxx_api::emit_with_primal(
            &mut ins,
            decoded,
            &target_sig.params,
            target_sig.ret.as_ref(),
            split,
            api_ret.as_ref(),
        )
    });
    if result.is_ok() {
        func.layout.remove_inst(call);
        remove_dead_operands(&mut func, old_args);
    }
    module.functions[caller] = func;
    result.map_err(|reason| bad_call(AUTODIFF_API, site, reason))
}

/// Gives the marker globals that are only declared (`extern int enzyme_dup;` in the C++
/// headers) a weak zero definition: a load of a marker may outlive its API call (clang
/// -O0 copies argument tuples through locals), and nothing else defines them.
fn define_marker_globals(module: &mut Module) {
    for global in module.globals.values_mut() {
        let marker = Marker::from_global_name(&global.name).is_some()
            || cxx_api::CallFlag::from_global_name(&global.name).is_some();
        if marker && global.init.is_none() && global.ty.is_int() {
            global.init = Some(Constant::Zero);
            global.linkage = adc_ir::Linkage::Weak;
        }
    }
}

/// Every laid-out call to an API entry point, in module order.
fn find_api_calls(module: &Module) -> Vec<(FuncId, Inst)> {
    let mut calls = Vec::new();
    for (id, func) in module.functions.iter() {
        for (_, inst) in func.layout.insts() {
            if let InstructionData::Call { callee, .. } = func.inst(inst) {
                if is_api_function(module, *callee) {
                    calls.push((id, inst));
                }
            }
        }
    }
    calls
}

fn is_api_function(module: &Module, id: FuncId) -> bool {
    module.functions.get(id).is_some_and(|f| api_mode(&f.name).is_some())
}

fn call_result_type(module: &Module, caller: FuncId, call: Inst) -> Option<Type> {
    let func = &module.functions[caller];
    func.dfg.inst_result(call).map(|v| func.dfg.value_type(v).clone())
}

fn bad_call(api: &str, site: Site, reason: String) -> AdError {
    AdError::new(site, AdErrorKind::BadApiCall { api: api.to_string(), reason })
}

/// Looks through casts, loads of marker globals and locals written once, to what an
/// argument stands for.
fn origin(module: &Module, func: &Function, value: Value) -> Origin {
    let mut value = value;
    for _ in 0..MAX_LOOK_THROUGH {
        let ValueDef::Result(inst) = func.dfg.value_def(value) else {
            return Origin::Other;
        };
        match func.inst(inst) {
            InstructionData::Const { value: Constant::Address { symbol, offset: 0 }, .. } => {
                return symbol_origin(module, *symbol);
            }
            InstructionData::Cast {
                op: CastOp::Bitcast | CastOp::Ptrtoint | CastOp::Inttoptr | CastOp::Addrspacecast,
                arg,
                ..
            } => value = *arg,
            InstructionData::Load { ty, ptr, .. }
                if local_address(func, *ptr).is_some_and(|(base, offset)| {
                    value_in_local(func, base, offset, ty, 0).is_some()
                }) =>
            {
                let (base, offset) = local_address(func, *ptr).unwrap_or((*ptr, 0));
                match value_in_local(func, base, offset, ty, 0) {
                    Some(stored) => value = stored,
                    None => return Origin::Other,
                }
            }
            InstructionData::Load { ptr, .. } => match pointee_origin(module, func, *ptr) {
                Pointee::Marker(origin) => return origin,
                Pointee::StoredValue(stored) => value = stored,
                Pointee::Unknown => return Origin::Other,
            },
            // clang -O0 builds the C++ API's argument tuples in locals and loads them whole.
            InstructionData::ExtractValue { aggregate, indices } => {
                match field_of_local(func, *aggregate, indices) {
                    Some(stored) => value = stored,
                    None => return Origin::Other,
                }
            }
            _ => return Origin::Other,
        }
    }
    Origin::Other
}

/// The value stored into the field `indices` of a local aggregate that `aggregate` loads
/// whole (see [`value_in_local`]).
fn field_of_local(func: &Function, aggregate: Value, indices: &[u32]) -> Option<Value> {
    let ValueDef::Result(load) = func.dfg.value_def(aggregate) else { return None };
    let InstructionData::Load { ty, ptr, .. } = func.inst(load) else { return None };
    let (base, at) = local_address(func, *ptr)?;
    let mut offset = at;
    let mut field_ty = ty.clone();
    for index in indices {
        offset += field_ty.element_offset(u64::from(*index))?;
        field_ty = field_ty.element_type(u64::from(*index))?.clone();
    }
    value_in_local(func, base, offset, &field_ty, 0)
}

/// The value of type `ty` that a load at `offset` in the local `base` reads, when exactly
/// one store writes those bytes and the local does not escape: that store's value, or,
/// when it stores a wider copy loaded from another local (clang -O0 copies tuples as
/// `i64`s), the same bytes of that local.
fn value_in_local(
    func: &Function,
    base: Value,
    offset: u64,
    ty: &Type,
    depth: usize,
) -> Option<Value> {
    if depth > MAX_LOOK_THROUGH {
        return None;
    }
    let end = offset + ty.size();
    // The one write that covers the bytes: (stored value or copied-from pointer, start, end).
    let mut found: Option<(Value, bool, u64, u64)> = None;
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        let mut uses = Vec::new();
        data.for_each_arg(|a| uses.push(a));
        let in_base = |v: Value| local_address(func, v).filter(|(b, _)| *b == base);
        if !uses.iter().any(|a| in_base(*a).is_some()) {
            continue;
        }
        let write = match data {
            InstructionData::Load { .. } | InstructionData::PtrAdd { .. } => None,
            // Storing the local's own address lets it escape; storing another pointer is a
            // write like any other.
            InstructionData::Store { value, ptr, .. } if in_base(*value).is_none() => {
                let (_, at) = in_base(*ptr)?;
                Some((*value, false, at, at + func.dfg.value_type(*value).size()))
            }
            InstructionData::MemCopy { dst, src, len, .. } if in_base(*src).is_none() => {
                let (_, at) = in_base(*dst)?;
                Some((*src, true, at, at + constant_u64(func, *len)?))
            }
            InstructionData::MemCopy { dst, .. } if in_base(*dst).is_none() => None,
            // Anything else (a call, the address stored away) may write the bytes.
            _ => return None,
        };
        if let Some((source, copy, at, write_end)) = write {
            if at < end
                && write_end > offset
                && found.replace((source, copy, at, write_end)).is_some()
            {
                return None;
            }
        }
    }
    let (source, copy, at, write_end) = found?;
    if !copy && at == offset && func.dfg.value_type(source) == ty {
        return Some(source);
    }
    if at > offset || write_end < end {
        return None;
    }
    let from = if copy {
        source
    } else {
        let ValueDef::Result(load) = func.dfg.value_def(source) else { return None };
        let InstructionData::Load { ptr, .. } = func.inst(load) else { return None };
        *ptr
    };
    let (other, other_at) = local_address(func, from)?;
    value_in_local(func, other, other_at + (offset - at), ty, depth + 1)
}

fn constant_u64(func: &Function, value: Value) -> Option<u64> {
    let ValueDef::Result(inst) = func.dfg.value_def(value) else { return None };
    match func.inst(inst) {
        InstructionData::Const { value: Constant::Int(n), .. } => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// A pointer into a local: the `alloca` and a constant byte offset.
fn local_address(func: &Function, ptr: Value) -> Option<(Value, u64)> {
    let mut ptr = ptr;
    let mut offset = 0u64;
    for _ in 0..MAX_LOOK_THROUGH {
        let ValueDef::Result(inst) = func.dfg.value_def(ptr) else { return None };
        match func.inst(inst) {
            InstructionData::Alloca { .. } => return Some((ptr, offset)),
            InstructionData::PtrAdd { ptr: base, offset: by, .. } => {
                let ValueDef::Result(c) = func.dfg.value_def(*by) else { return None };
                let InstructionData::Const { value: Constant::Int(n), .. } = func.inst(c) else {
                    return None;
                };
                offset = offset.checked_add(u64::try_from(*n).ok()?)?;
                ptr = *base;
            }
            InstructionData::Cast { op: CastOp::Bitcast | CastOp::Addrspacecast, arg, .. } => {
                ptr = *arg
            }
            _ => return None,
        }
    }
    None
}

fn symbol_origin(module: &Module, symbol: Symbol) -> Origin {
    match symbol {
        Symbol::Func(f) => Origin::Function(f),
        Symbol::Global(g) => match Marker::from_global_name(&module.globals[g].name) {
            _ if cxx_api::CallFlag::from_global_name(&module.globals[g].name).is_some() => {
                cxx_api::CallFlag::from_global_name(&module.globals[g].name)
                    .map_or(Origin::Other, Origin::Flag)
            }
            Some(Ok(marker)) => Origin::Marker(marker),
            Some(Err(name)) => Origin::UnsupportedMarker(name),
            None => Origin::Other,
        },
    }
}

/// What a load reads.
enum Pointee {
    /// The load reads a marker global: the loaded value is the marker.
    Marker(Origin),
    /// The load reads a local written exactly once (clang -O0 temporaries).
    StoredValue(Value),
    Unknown,
}

fn pointee_origin(module: &Module, func: &Function, ptr: Value) -> Pointee {
    let mut ptr = ptr;
    for _ in 0..MAX_LOOK_THROUGH {
        let ValueDef::Result(inst) = func.dfg.value_def(ptr) else {
            return Pointee::Unknown;
        };
        match func.inst(inst) {
            InstructionData::Const {
                value: Constant::Address { symbol: symbol @ Symbol::Global(_), offset: 0 },
                ..
            } => {
                return match symbol_origin(module, *symbol) {
                    Origin::Other => Pointee::Unknown,
                    marker => Pointee::Marker(marker),
                };
            }
            InstructionData::Cast { op: CastOp::Bitcast | CastOp::Addrspacecast, arg, .. } => {
                ptr = *arg
            }
            InstructionData::Alloca { .. } => {
                return single_store(func, ptr).map_or(Pointee::Unknown, Pointee::StoredValue);
            }
            _ => return Pointee::Unknown,
        }
    }
    Pointee::Unknown
}

/// The value stored to `slot` when the only uses of `slot` are loads and exactly one store
/// into it (so every load sees that value, or reads uninitialized memory).
fn single_store(func: &Function, slot: Value) -> Option<Value> {
    let mut stored = None;
    for (_, inst) in func.layout.insts() {
        let data = func.inst(inst);
        match data {
            InstructionData::Load { .. } => {}
            InstructionData::Store { value, ptr, .. } if *ptr == slot && *value != slot => {
                if stored.replace(*value).is_some() {
                    return None;
                }
                continue;
            }
            _ => {}
        }
        let mut uses_slot = false;
        data.for_each_arg(|a| uses_slot |= a == slot);
        if uses_slot && !matches!(data, InstructionData::Load { .. }) {
            return None;
        }
    }
    stored
}

/// Decodes the argument list of one API call against the differentiated function's
/// signature, and builds the request.
fn decode_call(module: &Module, caller: FuncId, call: Inst) -> Result<DecodedCall, AdError> {
    let func = &module.functions[caller];
    let site = || Site::inst(module, func, call);
    let InstructionData::Call { callee: api, args, .. } = func.inst(call) else {
        return Err(bad_call(AUTODIFF_API, site(), "not a direct call".to_string()));
    };
    let api_fn = &module.functions[*api];
    let Some(mode) = api_mode(&api_fn.name) else {
        return Err(bad_call(
            AUTODIFF_API,
            site(),
            format!("@{} is not an API entry point", api_fn.name),
        ));
    };
    let api_name = api_name(mode);
    let forward = mode == DiffMode::Forward;
    let has_sret = api_fn.param_attrs.first().is_some_and(|a| a.contains(ParamAttrs::SRET))
        && !args.is_empty();
    let (sret, args) = if has_sret { (Some(args[0]), &args[1..]) } else { (None, &args[..]) };
    let Some(&fn_arg) = args.first() else {
        return Err(bad_call(
            api_name,
            site(),
            "no function to differentiate was passed".to_string(),
        ));
    };
    let function = target_function(module, func, &site, api_name, mode, fn_arg)?;
    let target = &module.functions[function];
    let params = &target.signature.params;
    let mut flags = cxx_api::CallFlags::split(module, func, &args[1..]);
    let primals = std::mem::take(&mut flags.primals);
    let mut rest = primals.iter().copied().peekable();
    let width = width::take_width(module, func, mode, &mut rest)
        .map_err(|reason| bad_call(api_name, site(), reason))?;
    let mut interleaved = flags.shadows.take().map(std::collections::VecDeque::from);
    // Enzyme's rule for a function returning an aggregate through `sret` in forward mode:
    // the call does not pass that parameter; the result and its shadow live in the
    // call's own `sret` memory (see `cxx_api`).
    let implicit_sret = match (forward, sret, target.param_attrs.first(), target.sret_size) {
        (true, Some(ptr), Some(attrs), Some(size))
            if attrs.contains(ParamAttrs::SRET) && flags.ret.is_some() =>
        {
            Some((ptr, u64::from(size)))
        }
        _ => None,
    };
    let mut decoded = decode_params(
        module,
        func,
        &site,
        api_name,
        forward,
        width,
        function,
        &mut rest,
        &mut interleaved,
        usize::from(implicit_sret.is_some()),
    )?;
    let sret = match implicit_sret {
        Some((ptr, size)) => {
            decoded.insert(
                0,
                DecodedArg {
                    value: ptr,
                    shadows: vec![ptr],
                    stride: None,
                    activity: ArgActivity::Dup,
                },
            );
            flags.implicit_sret = Some(size);
            None
        }
        None => sret,
    };
    if let Some(extra) = interleaved.as_mut().and_then(|s| s.pop_front()) {
        return Err(bad_call(
            api_name,
            site(),
            format!(
                "too many shadows after enzyme_interleave: `{}` has no duplicated parameter \
                 of @{} left to shadow",
                value_text(module, func, extra),
                target.name
            ),
        ));
    }
    flags.locate_slots(&primals, &decoded);
    if let Some(extra) = rest.next() {
        return Err(bad_call(
            api_name,
            site(),
            format!(
                "too many arguments: @{} has {}; `{}` and {} after it are left over",
                target.name,
                count_of(params.len(), "parameter"),
                value_text(module, func, extra),
                count_of(rest.count(), "more argument")
            ),
        ));
    }
    let default_ret = match &target.signature.ret {
        Some(ty) if ty.is_float() => RetActivity::Active,
        // Forward mode returns the tangent of any all-float result (a struct of doubles).
        Some(ty) if forward && leaves_of(ty).is_some_and(|l| !l.is_empty()) => RetActivity::Active,
        _ => RetActivity::Const,
    };
    let ret = match flags.implicit_sret {
        // The result is the duplicated `sret` parameter.
        Some(_) => RetActivity::Const,
        None => flags
            .ret_activity(mode, default_ret, target)
            .map_err(|reason| bad_call(api_name, site(), reason))?,
    };
    let mut args: Vec<ArgActivity> = decoded.iter().map(|a| a.activity).collect();
    if flags.primal_return && mode == DiffMode::Reverse {
        // Lowered through the split function, which is shared per activity.
        for a in &mut args {
            if *a == ArgActivity::DupNoNeed {
                *a = ArgActivity::Dup;
            }
        }
    }
    let request = DiffRequest { function, mode, args, ret, width };
    Ok(DecodedCall { mode, function, args: decoded, sret, request, flags })
}

/// The function an API call differentiates (its first argument), checked to be
/// differentiable: defined here (or covered by a registered custom derivative) and not
/// variadic.
fn target_function(
    module: &Module,
    func: &Function,
    site: &dyn Fn() -> Site,
    api_name: &str,
    mode: DiffMode,
    fn_arg: Value,
) -> Result<FuncId, AdError> {
    let function = match origin(module, func, fn_arg) {
        Origin::Function(f) if is_api_function(module, f) => {
            return Err(bad_call(
                api_name,
                site(),
                "cannot differentiate the API function itself".into(),
            ))
        }
        Origin::Function(f) => f,
        _ => {
            return Err(bad_call(
                api_name,
                site(),
                format!(
                    "the first argument `{}` is not a known function (expected the address of \
                     a function defined in this module)",
                    value_text(module, func, fn_arg)
                ),
            ))
        }
    };
    let target = &module.functions[function];
    if target.is_declaration() && !crate::custom::replaces_synthesis(module, function, mode) {
        return Err(bad_call(
            api_name,
            site(),
            format!(
                "@{} is only declared here (defined elsewhere); its body must be in this \
                 module to be differentiated: pass the bitcode file that defines it too \
                 (`adc build main.bc other.bc -o out.o` links them)",
                target.name
            ),
        ));
    }
    if target.signature.varargs {
        return Err(bad_call(
            api_name,
            site(),
            format!("@{} takes variable arguments, which cannot be differentiated", target.name),
        ));
    }
    Ok(function)
}

/// Decodes the markers, values and shadows of the differentiated function's parameters
/// from `rest`, leaving what follows them (the caller decides whether extra arguments are
/// an error or, in split mode, the differential return and the tape).
#[allow(clippy::too_many_arguments)] // the call site's context, passed through as it is
fn decode_params(
    module: &Module,
    func: &Function,
    site: &dyn Fn() -> Site,
    api_name: &str,
    forward: bool,
    width: u32,
    function: FuncId,
    rest: &mut std::iter::Peekable<impl Iterator<Item = Value>>,
    interleaved: &mut Option<std::collections::VecDeque<Value>>,
    skip: usize,
) -> Result<Vec<DecodedArg>, AdError> {
    let target = &module.functions[function];
    let params = &target.signature.params;
    let mut decoded = Vec::with_capacity(params.len());
    // After `enzyme_interleave` an unmarked argument takes the previous one's activity
    // (Enzyme's rule; the first defaults to duplicated).
    let mut previous = ArgActivity::Dup;
    for (index, param_ty) in params.iter().enumerate().skip(skip) {
        let describe =
            |what: &str| format!("parameter {index} ({param_ty}) of @{}: {what}", target.name);
        let Some(first) = rest.next() else {
            return Err(bad_call(
                api_name,
                site(),
                format!(
                    "too few arguments: @{} has {}, the call stops before parameter {index} \
                     ({param_ty})",
                    target.name,
                    count_of(params.len(), "parameter")
                ),
            ));
        };
        let (marker, value) = match origin(module, func, first) {
            Origin::Marker(Marker::Width) => {
                return Err(bad_call(
                    api_name,
                    site(),
                    describe(
                        "enzyme_width must come right after the function, before its arguments",
                    ),
                ))
            }
            Origin::Marker(Marker::DupV) => {
                let stride = width::take_stride(module, func, rest)
                    .map_err(|reason| bad_call(api_name, site(), describe(&reason)))?;
                let value = rest.next();
                let base = rest.next();
                let (Some(value), Some(base)) = (value, base) else {
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe("enzyme_dupv, stride: the argument list ends before the value and its shadow"),
                    ));
                };
                if !param_ty.is_ptr() || !func.dfg.value_type(base).is_ptr() {
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe(
                            "enzyme_dupv needs a pointer parameter and a pointer to its shadows",
                        ),
                    ));
                }
                decoded.push(DecodedArg {
                    value,
                    shadows: vec![base],
                    stride: Some(stride),
                    activity: ArgActivity::Dup,
                });
                continue;
            }
            Origin::Marker(marker) => match rest.next() {
                Some(value) => (Some(marker), value),
                None => {
                    return Err(bad_call(
                        api_name,
                        site(),
                        format!(
                            "{} at the end of the argument list without a value",
                            marker.name()
                        ),
                    ))
                }
            },
            Origin::UnsupportedMarker(name) => {
                return Err(bad_call(
                    api_name,
                    site(),
                    format!("the marker {name} is not supported"),
                ))
            }
            _ => (None, first),
        };
        if let Origin::Marker(second) = origin(module, func, value) {
            return Err(bad_call(
                api_name,
                site(),
                describe(&format!(
                    "marker {} follows {} where a value was expected",
                    second.name(),
                    marker.map_or("another marker", Marker::name)
                )),
            ));
        }
        let value_ty = func.dfg.value_type(value);
        let activity = match marker {
            Some(Marker::Out) if forward => {
                return Err(bad_call(
                    api_name,
                    site(),
                    describe(
                        "enzyme_out is a reverse-mode marker; forward mode takes enzyme_dup \
                         (the value, then its tangent) or enzyme_const",
                    ),
                ))
            }
            Some(Marker::Const) => ArgActivity::Const,
            Some(Marker::Out) => ArgActivity::Active,
            Some(Marker::Dup) => ArgActivity::Dup,
            Some(Marker::DupNoNeed) => ArgActivity::DupNoNeed,
            // Both are consumed with their operands before a value is read.
            Some(marker @ (Marker::Width | Marker::DupV)) => {
                return Err(bad_call(
                    api_name,
                    site(),
                    describe(&format!("{} where a value was expected", marker.name())),
                ))
            }
            None if interleaved.is_some() => previous,
            None if param_ty.is_ptr() => ArgActivity::Dup,
            // Forward mode: an unmarked float is followed by its tangent (see the module
            // comment for Enzyme's rule).
            None if is_float_like(param_ty) && forward => ArgActivity::Dup,
            None if is_float_like(param_ty) => ArgActivity::Active,
            None => ArgActivity::Const,
        };
        if !converts_to(value_ty, param_ty) {
            return Err(bad_call(
                api_name,
                site(),
                describe(&format!("the call passes a value of type {value_ty}")),
            ));
        }
        if activity == ArgActivity::Active && !is_float_like(param_ty) {
            return Err(bad_call(
                api_name,
                site(),
                describe("enzyme_out needs a floating-point parameter"),
            ));
        }
        let shadows = if activity.has_shadow() {
            let marker_name = marker.map_or("enzyme_dup", Marker::name);
            // Forward mode passes a float's tangent by value; everything else duplicated is
            // a pointer with a shadow pointer.
            let by_value = forward && is_float_like(param_ty);
            if !param_ty.is_ptr() && !by_value {
                let needs = if forward {
                    "a pointer or floating-point parameter in forward mode"
                } else {
                    "a pointer parameter in reverse mode"
                };
                return Err(bad_call(
                    api_name,
                    site(),
                    describe(&format!("{marker_name} needs {needs}")),
                ));
            }
            let mut shadows = Vec::new();
            for lane in 0..width {
                let next = match interleaved.as_mut() {
                    Some(queue) => queue.pop_front(),
                    None => rest.next(),
                };
                let Some(shadow) = next else {
                    let what = if by_value { "tangent" } else { "shadow" };
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe(&width::missing_shadow(what, lane, width)),
                    ));
                };
                let shadow_ty = func.dfg.value_type(shadow);
                if let Origin::Marker(m) = origin(module, func, shadow) {
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe(&format!(
                            "duplicated, but a marker ({}) stands where its {} should",
                            m.name(),
                            if by_value { "tangent" } else { "shadow" }
                        )),
                    ));
                }
                if by_value && !converts_to(shadow_ty, param_ty) {
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe(&format!("its tangent has type {shadow_ty}, not {param_ty}")),
                    ));
                }
                if !by_value && !shadow_ty.is_ptr() {
                    return Err(bad_call(
                        api_name,
                        site(),
                        describe(&format!("its shadow has type {shadow_ty}, not a pointer")),
                    ));
                }
                shadows.push(shadow);
            }
            shadows
        } else {
            Vec::new()
        };
        previous = activity;
        decoded.push(DecodedArg { value, shadows, stride: None, activity });
    }
    Ok(decoded)
}

/// `1 parameter`, `2 parameters`.
fn count_of(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Whether an argument of type `from` may be passed for a parameter of type `to`: equal
/// types, or the C default argument promotions a variadic call applies (`float` to
/// `double`, `char`/`short`/`_Bool` to `int`), which the lowering undoes.
fn converts_to(from: &Type, to: &Type) -> bool {
    from == to
        || (*from == Type::F64 && *to == Type::F32)
        || (*from == Type::I32 && matches!(to, Type::I1 | Type::I8 | Type::I16))
        || (from.is_ptr() && to.is_ptr())
}

fn value_text(module: &Module, func: &Function, value: Value) -> String {
    match func.dfg.value_def(value) {
        ValueDef::Result(inst) => {
            adc_ir::text::FunctionPrinter::new(module, func).inst_to_string(inst)
        }
        ValueDef::Param(..) => match func.dfg.value_name(value) {
            Some(name) => format!("%{name}"),
            None => format!("{value}"),
        },
    }
}

/// Inserts instructions before a fixed instruction, with its debug location.
struct Inserter<'a> {
    func: &'a mut Function,
    signatures: &'a HashMap<FuncId, Signature>,
    before: Inst,
    loc: Option<DebugLoc>,
}

impl Inserter<'_> {
    fn ins(&mut self, data: InstructionData) -> (Inst, Option<Value>) {
        let signatures = self.signatures;
        let ty = self.func.dfg.result_type(&data, &|f| signatures.get(&f).cloned());
        let inst = self.func.dfg.make_inst(data, ty);
        self.func.layout.insert_inst_before(inst, self.before);
        self.func.dfg.debug_locs[inst] = self.loc.clone();
        (inst, self.func.dfg.inst_result(inst))
    }

    fn value(&mut self, data: InstructionData) -> Result<Value, String> {
        let (inst, value) = self.ins(data);
        value.ok_or_else(|| format!("internal: {inst} has no result"))
    }

    /// Undoes a default argument promotion (see [`converts_to`]).
    fn convert(&mut self, value: Value, to: &Type) -> Result<Value, String> {
        let from = self.func.dfg.value_type(value).clone();
        if from == *to || (from.is_ptr() && to.is_ptr()) {
            return Ok(value);
        }
        let op = if from.is_float() { CastOp::Fptrunc } else { CastOp::Trunc };
        self.value(InstructionData::Cast { op, arg: value, ty: to.clone() })
    }

    fn constant(&mut self, ty: &Type, value: Constant) -> Result<Value, String> {
        self.value(InstructionData::Const { ty: ty.clone(), value })
    }

    /// Zeroes the shadow globals a derivative called from user code reaches: it starts a
    /// differentiation, with no adjoint left in them from an earlier one. The call site
    /// does it, not the derivative, which other derivatives call too (a callee's
    /// derivative that zeroed them would wipe the adjoints its caller's reverse pass had
    /// already left there).
    fn zero_shadow_globals(&mut self, globals: &[(GlobalId, u64)]) -> Result<(), String> {
        for &(global, bytes) in globals {
            let address = Constant::Address { symbol: Symbol::Global(global), offset: 0 };
            let dst = self.constant(&Type::PTR, address)?;
            let byte = self.constant(&Type::I8, Constant::Int(0))?;
            let len = self.constant(&Type::I64, Constant::Int(u128::from(bytes)))?;
            self.ins(InstructionData::MemSet { dst, byte, len, volatile: false });
        }
        Ok(())
    }
}

/// One float leaf of an aggregate or vector value: the index path to it, its vector lane,
/// its byte offset and its type.
type Leaf = (Vec<u32>, Option<u32>, u64, Type);

/// The scalar leaves of a type in memory order, with their byte offsets; `None` when the
/// type holds something other than floats (adjoints are always floats).
fn float_leaves(ty: &Type, base: u64, out: &mut Vec<Leaf>, path: &mut Vec<u32>) -> bool {
    match ty {
        Type::F32 | Type::F64 => {
            out.push((path.clone(), None, base, ty.clone()));
            true
        }
        Type::Vector(elem, lanes) if elem.is_float() => {
            for lane in 0..*lanes {
                out.push((
                    path.clone(),
                    Some(lane),
                    base + u64::from(lane) * elem.size(),
                    (**elem).clone(),
                ));
            }
            true
        }
        Type::Struct(_) | Type::Array(..) => {
            let count = match ty {
                Type::Struct(s) => s.fields.len() as u64,
                Type::Array(_, n) => *n,
                _ => 0,
            };
            for index in 0..count {
                let (Some(elem), Some(offset)) = (ty.element_type(index), ty.element_offset(index))
                else {
                    return false;
                };
                path.push(index as u32);
                let ok = float_leaves(elem, base + offset, out, path);
                path.pop();
                if !ok {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

/// The float leaves of `ty`; `None` when it holds anything but floats.
fn leaves_of(ty: &Type) -> Option<Vec<Leaf>> {
    let mut out = Vec::new();
    float_leaves(ty, 0, &mut out, &mut Vec::new()).then_some(out)
}

/// Reads one leaf out of `value` (an aggregate or vector holding it).
fn read_leaf(ins: &mut Inserter, value: Value, leaf: &Leaf) -> Result<Value, String> {
    let (path, lane, _, _) = leaf;
    let mut current = value;
    if !path.is_empty() {
        current =
            ins.value(InstructionData::ExtractValue { aggregate: current, indices: path.clone() })?;
    }
    if let Some(lane) = lane {
        let index = ins.constant(&Type::I32, Constant::Int(u128::from(*lane)))?;
        current = ins.value(InstructionData::ExtractLane { vector: current, index })?;
    }
    Ok(current)
}

/// Builds a value of type `ty` from its leaves (in [`leaves_of`] order).
fn build_from_leaves(
    ins: &mut Inserter,
    ty: &Type,
    layout: &[Leaf],
    leaves: &[Value],
) -> Result<Value, String> {
    if layout.len() == 1 && layout[0].0.is_empty() && layout[0].1.is_none() {
        return Ok(leaves[0]);
    }
    let mut aggregate = ins.constant(ty, Constant::Undef)?;
    // Vectors nested in aggregates are assembled lane by lane, then inserted whole.
    let mut k = 0;
    while k < layout.len() {
        let (path, lane, _, _) = &layout[k];
        match lane {
            None => {
                aggregate = ins.value(InstructionData::InsertValue {
                    aggregate,
                    value: leaves[k],
                    indices: path.clone(),
                })?;
                k += 1;
            }
            Some(_) => {
                let vec_ty = path_type(ty, path).ok_or("internal: bad leaf path")?;
                let mut vector = ins.constant(&vec_ty, Constant::Undef)?;
                while k < layout.len() && layout[k].0 == *path && layout[k].1.is_some() {
                    let lane = layout[k].1.unwrap_or(0);
                    let index = ins.constant(&Type::I32, Constant::Int(u128::from(lane)))?;
                    vector =
                        ins.value(InstructionData::InsertLane { vector, value: leaves[k], index })?;
                    k += 1;
                }
                if path.is_empty() {
                    aggregate = vector;
                } else {
                    aggregate = ins.value(InstructionData::InsertValue {
                        aggregate,
                        value: vector,
                        indices: path.clone(),
                    })?;
                }
            }
        }
    }
    Ok(aggregate)
}

fn path_type(ty: &Type, path: &[u32]) -> Option<Type> {
    let mut t = ty.clone();
    for index in path {
        t = t.element_type(u64::from(*index))?.clone();
    }
    Some(t)
}

/// Replaces `call` by a call to `derivative` and adapts its result.
/// Replaces an API call with a call of `derivative`, zeroing the shadow globals
/// `derivative` reaches first (see [`Inserter::zero_shadow_globals`]).
fn replace_call(
    func: &mut Function,
    signatures: &HashMap<FuncId, Signature>,
    call: Inst,
    decoded: &DecodedCall,
    (derivative, shadow_globals): (FuncId, &[(GlobalId, u64)]),
    api_ret: Option<Type>,
) -> Result<(), String> {
    let target_sig = signatures
        .get(&decoded.function)
        .ok_or("internal: the differentiated function vanished")?
        .clone();
    let derivative_sig = signatures
        .get(&derivative)
        .cloned()
        .ok_or_else(|| "internal: synthesis returned an unknown function".to_string())?;
    let width = decoded.request.width as usize;
    let arg_count: usize =
        decoded.args.iter().map(|a| 1 + if a.activity.has_shadow() { width } else { 0 }).sum();
    if arg_count != derivative_sig.params.len() {
        return Err(format!(
            "internal: the derivative takes {} parameters, the request implies {arg_count}",
            derivative_sig.params.len()
        ));
    }
    let plan = match decoded.mode {
        _ if cxx_api::applies(decoded) => ResultPlan::Nothing,
        DiffMode::Reverse => {
            let active = decoded.args.iter().filter(|a| a.activity == ArgActivity::Active).count();
            let what = format!("the adjoints of {active} active argument(s)");
            plan_result(derivative_sig.ret.as_ref(), api_ret.as_ref(), decoded.sret, &what)?
        }
        // A forward derivative with a constant return gives back the primal's result (void,
        // an integer): the call's declared result then carries no tangent, as for a reverse
        // call without active arguments.
        DiffMode::Forward if decoded.request.ret == RetActivity::Const => {
            plan_result(None, api_ret.as_ref(), decoded.sret, "the tangent of the result")?
        }
        DiffMode::Forward => plan_result(
            derivative_sig.ret.as_ref(),
            api_ret.as_ref(),
            decoded.sret,
            "the tangent of the result",
        )?,
    };
    let loc = func.dfg.debug_locs[call].clone();
    let old_args = func.inst(call).args();
    let mut ins = Inserter { func, signatures, before: call, loc };
    ins.zero_shadow_globals(shadow_globals)?;
    let mut args = Vec::new();
    for (index, (arg, param_ty)) in decoded.args.iter().zip(&target_sig.params).enumerate() {
        if let (0, Some(size)) = (index, decoded.flags.implicit_sret) {
            args.extend(cxx_api::sret_result_memory(&mut ins, &decoded.flags, arg.value, size)?);
            continue;
        }
        args.push(ins.convert(arg.value, param_ty)?);
        if let Some(stride) = arg.stride {
            args.extend(width::strided_shadows(&mut ins, arg.shadows[0], stride, width)?);
        }
        for shadow in arg.shadows.iter().filter(|_| arg.stride.is_none()) {
            // A forward-mode tangent of a `float` arrives promoted to `double`.
            args.push(ins.convert(*shadow, param_ty)?);
        }
    }
    let (_, result) = ins.ins(InstructionData::Call {
        callee: derivative,
        args,
        attrs: adc_ir::FuncAttrs::empty(),
    });
    let adapted = if cxx_api::applies(decoded) {
        cxx_api::adapt_cxx_result(&mut ins, decoded, &target_sig.params, result, api_ret.as_ref())?
    } else {
        adapt_result(&mut ins, result, plan)?
    };
    let func = ins.func;
    if let (Some(old), Some(new)) = (func.dfg.inst_result(call), adapted) {
        func.dfg.replace_uses(old, new);
    }
    func.layout.remove_inst(call);
    remove_dead_operands(func, old_args);
    Ok(())
}

/// How the derivative's result becomes what the call site declared.
enum ResultPlan {
    /// Nothing is declared and nothing is returned.
    Nothing,
    /// No active argument: the declared result carries nothing. Enzyme leaves it
    /// undefined; adc defines it as zero.
    Zero(Type),
    /// The declared type is the derivative's.
    Same,
    /// Same float leaves in the same order, different shape (`<2 x float>`).
    Repack { from: Type, to: Type },
    /// Stored leaf by leaf through the `sret` pointer, at the derivative struct's offsets.
    Sret { ptr: Value, from: Type },
}

/// Decides how to adapt the result, before anything is changed, so that a mismatch leaves
/// the call untouched.
fn plan_result(
    derivative_ret: Option<&Type>,
    api_ret: Option<&Type>,
    sret: Option<Value>,
    what: &str,
) -> Result<ResultPlan, String> {
    let Some(from) = derivative_ret else {
        if sret.is_some() {
            return Err(format!(
                "the call expects its result through an sret pointer, but there is nothing \
                 to return ({what} is empty)"
            ));
        }
        return Ok(api_ret.map_or(ResultPlan::Nothing, |ty| ResultPlan::Zero(ty.clone())));
    };
    let from_leaves =
        leaves_of(from).ok_or("internal: the derivative returns something other than floats")?;
    if let Some(ptr) = sret {
        return Ok(ResultPlan::Sret { ptr, from: from.clone() });
    }
    // Declared `void`: the caller wants the shadows' accumulations only, and the
    // returned adjoints are dropped (as Enzyme does).
    let Some(declared) = api_ret else { return Ok(ResultPlan::Nothing) };
    if declared == from {
        return Ok(ResultPlan::Same);
    }
    let to_leaves = leaves_of(declared).unwrap_or_default();
    let same_leaves = to_leaves.len() == from_leaves.len()
        && to_leaves.iter().zip(&from_leaves).all(|(a, b)| a.3 == b.3);
    if !same_leaves {
        return Err(format!(
            "the call is declared to return {declared}, which cannot hold {what} ({from})"
        ));
    }
    Ok(ResultPlan::Repack { from: from.clone(), to: declared.clone() })
}

/// Emits the adaptation `plan` of the derivative call's `result`.
fn adapt_result(
    ins: &mut Inserter,
    result: Option<Value>,
    plan: ResultPlan,
) -> Result<Option<Value>, String> {
    let need = || "internal: the derivative call has no result".to_string();
    match plan {
        ResultPlan::Nothing => Ok(None),
        ResultPlan::Zero(ty) => Ok(Some(ins.constant(&ty, Constant::Zero)?)),
        ResultPlan::Same => Ok(Some(result.ok_or_else(need)?)),
        ResultPlan::Sret { ptr, from } => {
            let result = result.ok_or_else(need)?;
            for leaf in leaves_of(&from).unwrap_or_default() {
                let value = read_leaf(ins, result, &leaf)?;
                let offset = ins.constant(&Type::I64, Constant::Int(u128::from(leaf.2)))?;
                let at = ins.value(InstructionData::PtrAdd {
                    flags: adc_ir::InstFlags::empty(),
                    ptr,
                    offset,
                })?;
                let align = leaf.3.size() as u32;
                ins.ins(InstructionData::Store { value, ptr: at, align, volatile: false });
            }
            Ok(None)
        }
        ResultPlan::Repack { from, to } => {
            let result = result.ok_or_else(need)?;
            let mut leaves = Vec::new();
            for leaf in leaves_of(&from).unwrap_or_default() {
                leaves.push(read_leaf(ins, result, &leaf)?);
            }
            let layout = leaves_of(&to).unwrap_or_default();
            Ok(Some(build_from_leaves(ins, &to, &layout, &leaves)?))
        }
    }
}

/// Removes the marker loads, casts and constants that only fed the replaced call.
fn remove_dead_operands(func: &mut Function, operands: Vec<Value>) {
    let mut work = operands;
    while let Some(value) = work.pop() {
        let ValueDef::Result(inst) = func.dfg.value_def(value) else { continue };
        if func.layout.inst_block(inst).is_none() {
            continue;
        }
        let removable = matches!(
            func.inst(inst),
            InstructionData::Const { .. }
                | InstructionData::Cast { .. }
                | InstructionData::Load { volatile: false, .. }
        );
        if !removable || is_used(func, value) {
            continue;
        }
        work.extend(func.inst(inst).args());
        func.layout.remove_inst(inst);
    }
}

fn is_used(func: &Function, value: Value) -> bool {
    func.layout.insts().any(|(_, inst)| {
        let mut used = false;
        func.inst(inst).for_each_arg(|a| used |= a == value);
        used
    })
}

mod cxx_api;
mod iteration_count;
mod nesting;
mod retyped_calls;
mod scalar_copy;
mod specialize;
mod split_api;
#[cfg(test)]
mod tests;
mod width;

pub use scalar_copy::{scalarize_differentiated_functions, ScalarCopyOptions, ScalarCopyReport};
pub use specialize::{specialize_function_arguments, SpecializeReport, TOGGLES};
