//! Lowering of Enzyme's C API: every call to a function whose name contains
//! `__enzyme_autodiff` becomes a call to the synthesized reverse-mode derivative.
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
//! The result is adapted to what the caller declared: the derivative returns the adjoints
//! of the active arguments (void, one float, or a struct of them, see
//! [`crate::request`]); clang may have declared an equivalent aggregate or vector of a
//! different shape (`<2 x float>` for a pair of floats), or an `sret` pointer for a large
//! struct. Leaves are matched in order, so any shape with the same float leaves works.
//!
//! Invariant: on error the module may already contain derivatives for earlier calls, but
//! the failing call itself is left untouched.

use adc_ir::{
    CastOp, Constant, DebugLoc, FuncId, Function, Inst, InstructionData, Module, ParamAttrs,
    Signature, Symbol, Type, Value, ValueDef,
};

use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{ArgActivity, DiffRequest, RetActivity, Synthesize};

/// The substring that identifies reverse-mode API entry points (`__enzyme_autodiff`,
/// `__enzyme_autodiff2`, `__enzyme_autodiff_pair`, ...).
pub const AUTODIFF_API: &str = "__enzyme_autodiff";

/// How deep look-through (casts, loads of locals) may go before giving up.
const MAX_LOOK_THROUGH: usize = 16;

/// An activity marker argument.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Marker {
    Dup,
    DupNoNeed,
    Const,
    Out,
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
        }
    }
}

/// What a call argument turned out to be after looking through casts and loads.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Origin {
    Function(FuncId),
    Marker(Marker),
    /// A global named `enzyme_*` that is not a supported marker.
    UnsupportedMarker(String),
    Other,
}

/// One primal argument of the derivative call, and its shadow when duplicated.
#[derive(Clone, Debug)]
struct DecodedArg {
    value: Value,
    shadow: Option<Value>,
    activity: ArgActivity,
}

/// A decoded `__enzyme_autodiff` call site.
#[derive(Clone, Debug)]
struct DecodedCall {
    function: FuncId,
    args: Vec<DecodedArg>,
    /// The pointer the caller expects the result to be written through (`sret`).
    sret: Option<Value>,
    request: DiffRequest,
}

/// What the lowering did, for statistics and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoweringReport {
    /// Call sites replaced, in module order.
    pub calls_lowered: usize,
    /// Distinct requests (a derivative is synthesized once per request).
    pub requests: Vec<DiffRequest>,
}

/// Replaces every `__enzyme_autodiff*` call in `module` by a call to the derivative that
/// `synth` produces. Stops at the first malformed call or synthesis failure.
pub fn lower_enzyme_calls(
    module: &mut Module,
    synth: &mut dyn Synthesize,
) -> Result<LoweringReport, AdError> {
    let mut report = LoweringReport::default();
    for (caller, call) in find_api_calls(module) {
        let decoded = decode_call(module, caller, call)?;
        let derivative = synth.derivative(module, &decoded.request)?;
        let site = Site::inst(module, &module.functions[caller], call);
        let signatures: Vec<Signature> =
            module.functions.values().map(|f| f.signature.clone()).collect();
        let api_ret = call_result_type(module, caller, call);
        let mut func = std::mem::take(&mut module.functions[caller]);
        let result = replace_call(&mut func, &signatures, call, &decoded, derivative, api_ret);
        module.functions[caller] = func;
        result.map_err(|reason| bad_call(site, reason))?;
        report.calls_lowered += 1;
        if !report.requests.contains(&decoded.request) {
            report.requests.push(decoded.request);
        }
    }
    Ok(report)
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
    module.functions.get(id).is_some_and(|f| f.name.contains(AUTODIFF_API))
}

fn call_result_type(module: &Module, caller: FuncId, call: Inst) -> Option<Type> {
    let func = &module.functions[caller];
    func.dfg.inst_result(call).map(|v| func.dfg.value_type(v).clone())
}

fn bad_call(site: Site, reason: String) -> AdError {
    AdError::new(site, AdErrorKind::BadApiCall { api: AUTODIFF_API.to_string(), reason })
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
            InstructionData::Load { ptr, .. } => match pointee_origin(module, func, *ptr) {
                Pointee::Marker(origin) => return origin,
                Pointee::StoredValue(stored) => value = stored,
                Pointee::Unknown => return Origin::Other,
            },
            _ => return Origin::Other,
        }
    }
    Origin::Other
}

fn symbol_origin(module: &Module, symbol: Symbol) -> Origin {
    match symbol {
        Symbol::Func(f) => Origin::Function(f),
        Symbol::Global(g) => match Marker::from_global_name(&module.globals[g].name) {
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
        return Err(bad_call(site(), "not a direct call".to_string()));
    };
    let api_fn = &module.functions[*api];
    let has_sret = api_fn.param_attrs.first().is_some_and(|a| a.contains(ParamAttrs::SRET))
        && !args.is_empty();
    let (sret, args) = if has_sret { (Some(args[0]), &args[1..]) } else { (None, &args[..]) };
    let Some(&fn_arg) = args.first() else {
        return Err(bad_call(site(), "no function to differentiate was passed".to_string()));
    };
    let function = match origin(module, func, fn_arg) {
        Origin::Function(f) if is_api_function(module, f) => {
            return Err(bad_call(site(), "cannot differentiate the API function itself".into()))
        }
        Origin::Function(f) => f,
        _ => {
            return Err(bad_call(
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
    if target.is_declaration() {
        return Err(bad_call(
            site(),
            format!(
                "@{} is only declared here (defined elsewhere); its body must be in this \
                 module to be differentiated",
                target.name
            ),
        ));
    }
    if target.signature.varargs {
        return Err(bad_call(
            site(),
            format!("@{} takes variable arguments, which cannot be differentiated", target.name),
        ));
    }
    let params = &target.signature.params;
    let mut rest = args[1..].iter().copied().peekable();
    let mut decoded = Vec::with_capacity(params.len());
    for (index, param_ty) in params.iter().enumerate() {
        let describe =
            |what: &str| format!("parameter {index} ({param_ty}) of @{}: {what}", target.name);
        let Some(first) = rest.next() else {
            return Err(bad_call(
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
            Origin::Marker(marker) => match rest.next() {
                Some(value) => (Some(marker), value),
                None => {
                    return Err(bad_call(
                        site(),
                        format!(
                            "{} at the end of the argument list without a value",
                            marker.name()
                        ),
                    ))
                }
            },
            Origin::UnsupportedMarker(name) => {
                return Err(bad_call(site(), format!("the marker {name} is not supported")))
            }
            _ => (None, first),
        };
        if let Origin::Marker(second) = origin(module, func, value) {
            return Err(bad_call(
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
            Some(Marker::Const) => ArgActivity::Const,
            Some(Marker::Out) => ArgActivity::Active,
            Some(Marker::Dup) => ArgActivity::Dup,
            Some(Marker::DupNoNeed) => ArgActivity::DupNoNeed,
            None if param_ty.is_ptr() => ArgActivity::Dup,
            None if is_float_like(param_ty) => ArgActivity::Active,
            None => ArgActivity::Const,
        };
        if !converts_to(value_ty, param_ty) {
            return Err(bad_call(
                site(),
                describe(&format!("the call passes a value of type {value_ty}")),
            ));
        }
        if activity == ArgActivity::Active && !is_float_like(param_ty) {
            return Err(bad_call(site(), describe("enzyme_out needs a floating-point parameter")));
        }
        let shadow = if activity.has_shadow() {
            if !param_ty.is_ptr() {
                return Err(bad_call(
                    site(),
                    describe(&format!(
                        "{} needs a pointer parameter in reverse mode",
                        marker.map_or("enzyme_dup", Marker::name)
                    )),
                ));
            }
            let Some(shadow) = rest.next() else {
                return Err(bad_call(
                    site(),
                    describe("duplicated, but the argument list ends before its shadow"),
                ));
            };
            let shadow_ty = func.dfg.value_type(shadow);
            if let Origin::Marker(m) = origin(module, func, shadow) {
                return Err(bad_call(
                    site(),
                    describe(&format!(
                        "duplicated, but a marker ({}) stands where its shadow should",
                        m.name()
                    )),
                ));
            }
            if !shadow_ty.is_ptr() {
                return Err(bad_call(
                    site(),
                    describe(&format!("its shadow has type {shadow_ty}, not a pointer")),
                ));
            }
            Some(shadow)
        } else {
            None
        };
        decoded.push(DecodedArg { value, shadow, activity });
    }
    if let Some(extra) = rest.next() {
        return Err(bad_call(
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
    let ret = match &target.signature.ret {
        Some(ty) if ty.is_float() => RetActivity::Active,
        _ => RetActivity::Const,
    };
    let request = DiffRequest::reverse(function, decoded.iter().map(|a| a.activity).collect(), ret);
    Ok(DecodedCall { function, args: decoded, sret, request })
}

/// `1 parameter`, `2 parameters`.
fn count_of(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Float scalars and vectors of them: what can be active by value.
fn is_float_like(ty: &Type) -> bool {
    ty.lane_type().is_float()
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
    signatures: &'a [Signature],
    before: Inst,
    loc: Option<DebugLoc>,
}

impl Inserter<'_> {
    fn ins(&mut self, data: InstructionData) -> (Inst, Option<Value>) {
        let signatures = self.signatures;
        let ty =
            self.func.dfg.result_type(&data, &|f| signatures.get(f.as_u32() as usize).cloned());
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
fn replace_call(
    func: &mut Function,
    signatures: &[Signature],
    call: Inst,
    decoded: &DecodedCall,
    derivative: FuncId,
    api_ret: Option<Type>,
) -> Result<(), String> {
    let target_sig = signatures
        .get(decoded.function.as_u32() as usize)
        .ok_or("internal: the differentiated function vanished")?
        .clone();
    let derivative_sig = signatures
        .get(derivative.as_u32() as usize)
        .cloned()
        .ok_or_else(|| "internal: synthesis returned an unknown function".to_string())?;
    let arg_count: usize = decoded.args.iter().map(|a| 1 + usize::from(a.shadow.is_some())).sum();
    if arg_count != derivative_sig.params.len() {
        return Err(format!(
            "internal: the derivative takes {} parameters, the request implies {arg_count}",
            derivative_sig.params.len()
        ));
    }
    let active = decoded.args.iter().filter(|a| a.activity == ArgActivity::Active).count();
    let plan = plan_result(derivative_sig.ret.as_ref(), api_ret.as_ref(), decoded.sret, active)?;
    let loc = func.dfg.debug_locs[call].clone();
    let old_args = func.inst(call).args();
    let mut ins = Inserter { func, signatures, before: call, loc };
    let mut args = Vec::new();
    for (arg, param_ty) in decoded.args.iter().zip(&target_sig.params) {
        args.push(ins.convert(arg.value, param_ty)?);
        if let Some(shadow) = arg.shadow {
            args.push(shadow);
        }
    }
    let (_, result) = ins.ins(InstructionData::Call {
        callee: derivative,
        args,
        attrs: adc_ir::FuncAttrs::empty(),
    });
    let adapted = adapt_result(&mut ins, result, plan)?;
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
    active: usize,
) -> Result<ResultPlan, String> {
    let Some(from) = derivative_ret else {
        if sret.is_some() {
            return Err("the call expects its result through an sret pointer, but no argument \
                        is active"
                .into());
        }
        return Ok(api_ret.map_or(ResultPlan::Nothing, |ty| ResultPlan::Zero(ty.clone())));
    };
    let from_leaves =
        leaves_of(from).ok_or("internal: the derivative returns something other than floats")?;
    if let Some(ptr) = sret {
        return Ok(ResultPlan::Sret { ptr, from: from.clone() });
    }
    let Some(declared) = api_ret else {
        return Err(format!(
            "the call is declared to return void, which cannot hold the adjoints of {active} \
             active argument(s); declare a return type of {from}"
        ));
    };
    if declared == from {
        return Ok(ResultPlan::Same);
    }
    let to_leaves = leaves_of(declared).unwrap_or_default();
    let same_leaves = to_leaves.len() == from_leaves.len()
        && to_leaves.iter().zip(&from_leaves).all(|(a, b)| a.3 == b.3);
    if !same_leaves {
        return Err(format!(
            "the call is declared to return {declared}, which cannot hold the adjoints of the \
             active arguments ({from})"
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

#[cfg(test)]
mod tests {
    use adc_ir::builder::FunctionBuilder;
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::{parse_module, print_module};
    use adc_ir::{BinaryOp, Linkage};

    use super::*;

    /// A stand-in for synthesis with a recognisable result: the adjoint of the k-th active
    /// argument is `(k + 1) * value`, and the first shadow gets 7.0 stored into it. It
    /// follows the derivative signature of `crate::request` exactly.
    #[derive(Default)]
    struct ScaledAdjoints {
        requests: Vec<DiffRequest>,
    }

    impl Synthesize for ScaledAdjoints {
        fn derivative(
            &mut self,
            module: &mut Module,
            request: &DiffRequest,
        ) -> Result<FuncId, AdError> {
            self.requests.push(request.clone());
            let primal = module.functions[request.function].signature.clone();
            let mut params = Vec::new();
            let mut active_types = Vec::new();
            for (ty, activity) in primal.params.iter().zip(&request.args) {
                params.push(ty.clone());
                if activity.has_shadow() {
                    params.push(ty.clone());
                }
                if *activity == ArgActivity::Active {
                    active_types.push(ty.clone());
                }
            }
            let ret = match active_types.len() {
                0 => None,
                1 => Some(active_types[0].clone()),
                _ => Some(Type::structure(active_types.clone(), false)),
            };
            let name =
                format!("d_{}_{}", module.functions[request.function].name, self.requests.len());
            let mut func = Function::new(name, Signature::new(params, ret.clone()));
            func.linkage = Linkage::Internal;
            let signatures: Vec<Signature> =
                module.functions.values().map(|f| f.signature.clone()).collect();
            let sigs = |f: FuncId| signatures.get(f.as_u32() as usize).cloned();
            let mut b = FunctionBuilder::new(&mut func, &sigs);
            let entry = b.create_entry_block();
            b.switch_to_block(entry);
            let values = b.func.dfg.block_params(entry).to_vec();
            let mut next = values.iter().copied();
            let mut adjoints = Vec::new();
            let mut stored = false;
            for activity in &request.args {
                let value = next.next().expect("primal parameter");
                if activity.has_shadow() {
                    let shadow = next.next().expect("shadow parameter");
                    if !stored {
                        let seven = b.f64const(7.0);
                        b.store(seven, shadow, 8);
                        stored = true;
                    }
                }
                if *activity == ArgActivity::Active {
                    let ty = b.func.dfg.value_type(value).clone();
                    let k = (adjoints.len() + 1) as f64;
                    let scale = if ty == Type::F32 {
                        b.constant(Type::F32, Constant::f32(k as f32))
                    } else {
                        b.f64const(k)
                    };
                    adjoints.push(b.binary(BinaryOp::Fmul, value, scale));
                }
            }
            let result = match (adjoints.len(), ret) {
                (0, _) => None,
                (1, _) => Some(adjoints[0]),
                (_, Some(ty)) => {
                    let mut agg = b.constant(ty, Constant::Undef);
                    for (i, a) in adjoints.iter().enumerate() {
                        let (_, v) = b.ins(InstructionData::InsertValue {
                            aggregate: agg,
                            value: *a,
                            indices: vec![i as u32],
                        });
                        agg = v.expect("insertvalue result");
                    }
                    Some(agg)
                }
                _ => unreachable!("several adjoints always have a struct type"),
            };
            b.ret(result);
            Ok(module.add_function(func))
        }
    }

    const PRELUDE: &str = "
global @enzyme_dup: i32, align 4 = 0
global @enzyme_dupnoneed: i32, align 4 = 0
global @enzyme_const: i32, align 4 = 0
global @enzyme_out: i32, align 4 = 0
global @enzyme_width: i32, align 4 = 0
declare @__enzyme_autodiff(ptr, ...) -> f64
declare @__enzyme_autodiff_pair(ptr, ...) -> {f64, f64}
declare @__enzyme_autodiff_fpair(ptr, ...) -> <2 x f32>
declare @__enzyme_autodiff_triple(ptr sret, ptr, ...)
declare @external(f64) -> f64
func @square(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  ret %y
}
func @scale(%p: ptr, %n: i32) -> f64 {
^entry:
  %x = load f64, %p, align 8
  ret %x
}
func @mul(%a: f64, %b: f64) -> f64 {
^entry:
  %y = fmul f64 %a, %b
  ret %y
}
func @fmul(%a: f32, %b: f32) -> f32 {
^entry:
  %y = fmul f32 %a, %b
  ret %y
}
func @mul3(%a: f64, %b: f64, %c: f64) -> f64 {
^entry:
  %y = fmul f64 %a, %b
  %z = fmul f64 %y, %c
  ret %z
}
";

    fn lower(caller: &str) -> (Module, Result<LoweringReport, AdError>, ScaledAdjoints) {
        let text = format!("{PRELUDE}{caller}");
        let mut module = parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
        let mut synth = ScaledAdjoints::default();
        let result = lower_enzyme_calls(&mut module, &mut synth);
        if result.is_ok() {
            adc_ir::verify::verify_module(&module)
                .unwrap_or_else(|d| panic!("{d}\n{}", print_module(&module)));
        }
        (module, result, synth)
    }

    fn run(module: &Module, name: &str, args: &[Val]) -> Option<Val> {
        let mut interp = Interpreter::new(module).expect("interpreter");
        let func = module.function_by_name(name).expect("function");
        interp.call(func, args).unwrap_or_else(|e| panic!("{}", e.message()))
    }

    fn error_of(caller: &str) -> String {
        let (_, result, _) = lower(caller);
        let err = result.expect_err("the call is malformed");
        assert!(matches!(err.kind, AdErrorKind::BadApiCall { .. }), "{err}");
        assert!(err.site.inst.as_deref().is_some_and(|i| i.contains("__enzyme_autodiff")), "{err}");
        err.to_string()
    }

    #[test]
    fn a_float_argument_is_active_by_default() {
        let (module, result, synth) = lower(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
        );
        assert_eq!(result.expect("lowered").calls_lowered, 1);
        assert_eq!(synth.requests[0].args, [ArgActivity::Active]);
        assert_eq!(synth.requests[0].ret, RetActivity::Active);
        assert_eq!(run(&module, "g", &[Val::F64(3.0)]), Some(Val::F64(3.0)));
        let text = print_module(&module);
        assert!(!text.contains("call @__enzyme_autodiff("), "{text}");
    }

    #[test]
    fn markers_pick_activities_and_shadows_are_passed() {
        let (module, result, synth) = lower(
            "func @g(%x: ptr, %dx: ptr, %n: i32) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %const_addr = const ptr @enzyme_const
  %const = load i32, %const_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup, %x, %dx, %const, %n)
  ret %r
}",
        );
        result.expect("lowered");
        assert_eq!(synth.requests[0].args, [ArgActivity::Dup, ArgActivity::Const]);
        let text = print_module(&module);
        assert!(!text.contains("@enzyme_dup\n"), "dead marker loads are removed:\n{text}");
        let mut interp = Interpreter::new(&module).expect("interpreter");
        let x = interp.alloc(&Type::F64, &[Val::F64(1.0)]).expect("alloc");
        let dx = interp.alloc(&Type::F64, &[Val::F64(0.0)]).expect("alloc");
        let g = module.function_by_name("g").expect("g");
        let r = interp.call(g, &[x, dx.clone(), Val::Int(4)]).expect("runs");
        // No active argument: the declared double result is defined as zero.
        assert_eq!(r, Some(Val::F64(0.0)));
        assert_eq!(interp.read(&dx, &Type::F64, 1).expect("read"), [Val::F64(7.0)]);
    }

    #[test]
    fn markers_through_a_local_slot_and_casts_are_found() {
        // What clang -O0 leaves when the marker and the function go through locals.
        let (_, result, synth) = lower(
            "func @g(%x: ptr, %dx: ptr, %n: i32) -> f64 {
^entry:
  %slot = alloca i32, align 4
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  store %dup, %slot, align 4
  %dup2 = load i32, %slot, align 4
  %fslot = alloca ptr, align 8
  %fp = const ptr @scale
  %fi = ptrtoint %fp to i64
  %fp2 = inttoptr %fi to ptr
  store %fp2, %fslot, align 8
  %fp3 = load ptr, %fslot, align 8
  %r = call @__enzyme_autodiff(%fp3, %dup2, %x, %dx, %n)
  ret %r
}",
        );
        result.expect("lowered");
        assert_eq!(synth.requests[0].args, [ArgActivity::Dup, ArgActivity::Const]);
    }

    #[test]
    fn a_pair_of_adjoints_is_returned_as_declared() {
        let (module, result, synth) = lower(
            "func @g(%a: f64, %b: f64) -> {f64, f64} {
^entry:
  %fp = const ptr @mul
  %out_addr = const ptr @enzyme_out
  %out = load i32, %out_addr, align 4
  %r = call @__enzyme_autodiff_pair(%fp, %out, %a, %b)
  ret %r
}",
        );
        result.expect("lowered");
        assert_eq!(synth.requests[0].args, [ArgActivity::Active, ArgActivity::Active]);
        assert_eq!(
            run(&module, "g", &[Val::F64(2.0), Val::F64(5.0)]),
            Some(Val::Aggregate(vec![Val::F64(2.0), Val::F64(10.0)]))
        );
    }

    #[test]
    fn promoted_floats_are_narrowed_and_repacked_into_a_vector() {
        let (module, result, _) = lower(
            "func @g(%a: f64, %b: f64) -> <2 x f32> {
^entry:
  %fp = const ptr @fmul
  %r = call @__enzyme_autodiff_fpair(%fp, %a, %b)
  ret %r
}",
        );
        result.expect("lowered");
        assert_eq!(
            run(&module, "g", &[Val::F64(1.5), Val::F64(3.0)]),
            Some(Val::Vector(vec![Val::F32(1.5), Val::F32(6.0)]))
        );
    }

    #[test]
    fn three_adjoints_are_stored_through_the_sret_pointer() {
        let (module, result, _) = lower(
            "func @g(%a: f64, %b: f64, %c: f64) -> f64 {
^entry:
  %out = alloca {f64, f64, f64}, align 8
  %fp = const ptr @mul3
  call @__enzyme_autodiff_triple(%out, %fp, %a, %b, %c)
  %eight = const i64 16
  %p = ptradd ptr %out, %eight
  %z = load f64, %p, align 8
  %x = load f64, %out, align 8
  %s = fadd f64 %x, %z
  ret %s
}",
        );
        result.expect("lowered");
        // a * 1 + c * 3
        assert_eq!(
            run(&module, "g", &[Val::F64(2.0), Val::F64(5.0), Val::F64(7.0)]),
            Some(Val::F64(23.0))
        );
    }

    #[test]
    fn a_marker_at_the_end_is_an_error() {
        let err = error_of(
            "func @g(%x: ptr) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup)
  ret %r
}",
        );
        assert!(err.contains("enzyme_dup at the end of the argument list"), "{err}");
    }

    #[test]
    fn dup_without_a_shadow_is_an_error() {
        let err = error_of(
            "func @g(%x: ptr) -> f64 {
^entry:
  %fp = const ptr @scale
  %dup_addr = const ptr @enzyme_dup
  %dup = load i32, %dup_addr, align 4
  %r = call @__enzyme_autodiff(%fp, %dup, %x)
  ret %r
}",
        );
        assert!(err.contains("ends before its shadow"), "{err}");
    }

    #[test]
    fn a_shadow_that_is_not_a_pointer_is_an_error() {
        let err = error_of(
            "func @g(%x: ptr, %n: i32) -> f64 {
^entry:
  %fp = const ptr @scale
  %r = call @__enzyme_autodiff(%fp, %x, %n, %n)
  ret %r
}",
        );
        assert!(err.contains("its shadow has type i32, not a pointer"), "{err}");
    }

    #[test]
    fn argument_counts_are_checked() {
        let too_many = error_of(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %x, %x)
  ret %r
}",
        );
        assert!(too_many.contains("too many arguments"), "{too_many}");
        let too_few = error_of(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
        );
        assert!(too_few.contains("too few arguments"), "{too_few}");
    }

    #[test]
    fn argument_types_are_checked() {
        let err = error_of(
            "func @g(%n: i64) -> f64 {
^entry:
  %fp = const ptr @square
  %r = call @__enzyme_autodiff(%fp, %n)
  ret %r
}",
        );
        assert!(err.contains("passes a value of type i64"), "{err}");
    }

    #[test]
    fn the_function_must_be_known_and_defined() {
        let unknown = error_of(
            "func @g(%f: ptr, %x: f64) -> f64 {
^entry:
  %r = call @__enzyme_autodiff(%f, %x)
  ret %r
}",
        );
        assert!(unknown.contains("is not a known function"), "{unknown}");
        let declared = error_of(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @external
  %r = call @__enzyme_autodiff(%fp, %x)
  ret %r
}",
        );
        assert!(declared.contains("@external is only declared here"), "{declared}");
    }

    #[test]
    fn two_markers_in_a_row_and_unknown_markers_are_errors() {
        let err = error_of(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %a = const ptr @enzyme_const
  %m1 = load i32, %a, align 4
  %b = const ptr @enzyme_out
  %m2 = load i32, %b, align 4
  %r = call @__enzyme_autodiff(%fp, %m1, %m2, %x)
  ret %r
}",
        );
        assert!(err.contains("marker enzyme_out follows enzyme_const"), "{err}");
        let err = error_of(
            "func @g(%x: f64) -> f64 {
^entry:
  %fp = const ptr @square
  %a = const ptr @enzyme_width
  %w = load i32, %a, align 4
  %r = call @__enzyme_autodiff(%fp, %w, %x)
  ret %r
}",
        );
        assert!(err.contains("enzyme_width is not supported"), "{err}");
    }

    #[test]
    fn too_many_adjoints_for_the_declared_result_is_an_error() {
        let err = error_of(
            "func @g(%a: f64, %b: f64) -> f64 {
^entry:
  %fp = const ptr @mul
  %r = call @__enzyme_autodiff(%fp, %a, %b)
  ret %r
}",
        );
        assert!(err.contains("declared to return f64"), "{err}");
    }
}
