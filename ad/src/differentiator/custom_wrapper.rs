//! The derivative of a function with a registered custom rule (`crate::custom`) when it is
//! requested itself rather than called from differentiated code: a wrapper with the
//! signature `crate::request` fixes, calling the registered functions. The registrations
//! are read (and checked) by `crate::custom`; building functions from them is the
//! differentiator's business, as it decides which requests a registration serves.

use adc_ir::builder::FunctionBuilder;
use adc_ir::{
    Constant, FuncAttrs, FuncId, Function, InstructionData, Linkage, Module, Signature, Type, Value,
};

use crate::custom::{forward_result, pack, CustomDerivative, CustomGradient, Registrations};
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{is_float_like, ArgActivity, DiffMode, DiffRequest, RetActivity};

/// The derivative a top-level API call gets for a function with a registered rule: a
/// wrapper with the signature `crate::request` fixes for `request`, calling the
/// registered functions (reverse: augmented forward, then reverse seeded with 1.0).
pub(crate) fn top_level_wrapper(
    module: &mut Module,
    request: &DiffRequest,
    name: &str,
) -> Result<Option<FuncId>, AdError> {
    let registrations = Registrations::read(module)?;
    let primal = module.functions[request.function].signature.clone();
    let mut params = Vec::new();
    for (ty, activity) in primal.params.iter().zip(&request.args) {
        params.push(ty.clone());
        if activity.has_shadow() {
            params.push(ty.clone());
        }
    }
    let (ret, rule) = match request.mode {
        DiffMode::Reverse => {
            let Some(gradient) = registrations.gradient(request.function).cloned() else {
                return Ok(None);
            };
            let active: Vec<Type> = primal
                .params
                .iter()
                .zip(&request.args)
                .filter(|(_, a)| **a == ArgActivity::Active)
                .map(|(t, _)| t.clone())
                .collect();
            (pack(&active), Rule::Gradient(gradient))
        }
        DiffMode::Forward => {
            let Some(derivative) = registrations.derivative(request.function).cloned() else {
                return Ok(None);
            };
            let ret = match (request.ret, &primal.ret) {
                (_, None) => None,
                (RetActivity::Const, Some(r)) => Some(r.clone()),
                (RetActivity::Active, Some(r)) => Some(r.clone()),
                (RetActivity::Dup, Some(r)) => {
                    Some(Type::structure(vec![r.clone(), r.clone()], false))
                }
            };
            (ret, Rule::Derivative(derivative))
        }
    };
    let signatures: Vec<Signature> =
        module.functions.values().map(|f| f.signature.clone()).collect();
    let mut func = Function::new(name, Signature::new(params, ret));
    func.linkage = Linkage::Internal;
    {
        let sigs = |f: FuncId| signatures.get(f.as_u32() as usize).cloned();
        let mut b = FunctionBuilder::new(&mut func, &sigs);
        let entry = b.create_entry_block();
        b.switch_to_block(entry);
        let mut incoming = b.func.dfg.block_params(entry).to_vec().into_iter();
        // (value, shadow or tangent) per primal parameter.
        let mut pairs = Vec::new();
        for activity in &request.args {
            let value = incoming.next().expect("one parameter per argument");
            let shadow = if activity.has_shadow() { incoming.next() } else { None };
            pairs.push((value, shadow));
        }
        let call = |b: &mut FunctionBuilder, callee: FuncId, args: Vec<Value>| {
            b.ins(InstructionData::Call { callee, args, attrs: FuncAttrs::empty() }).1
        };
        let shadowed = |b: &mut FunctionBuilder, tangents: bool| {
            let mut args = Vec::new();
            for ((value, shadow), ty) in pairs.iter().zip(&primal.params) {
                args.push(*value);
                if ty.is_ptr() || (tangents && is_float_like(ty)) {
                    args.push(shadow.unwrap_or_else(|| b.constant(ty.clone(), Constant::Zero)));
                }
            }
            args
        };
        let returned = match rule {
            Rule::Gradient(gradient) => {
                let args = shadowed(&mut b, false);
                let out = call(&mut b, gradient.augmented, args);
                let tape = match (&gradient.tape, out) {
                    (Some(_), Some(out)) if gradient.returns_pair_of(&primal) => {
                        let data =
                            InstructionData::ExtractValue { aggregate: out, indices: vec![0] };
                        b.ins(data).1
                    }
                    (Some(_), out) => out,
                    (None, _) => None,
                };
                let mut args = shadowed(&mut b, false);
                if let Some(r) = primal.ret.as_ref().filter(|r| is_float_like(r)) {
                    let seed = if request.ret == RetActivity::Active { 1.0 } else { 0.0 };
                    args.push(float_splat(&mut b, r, seed));
                }
                args.extend(tape);
                let adjoints = call(&mut b, gradient.reverse, args);
                let float_args: Vec<ArgActivity> = primal
                    .params
                    .iter()
                    .zip(&request.args)
                    .filter(|(t, _)| is_float_like(t))
                    .map(|(_, a)| *a)
                    .collect();
                let mut kept = Vec::new();
                for (k, activity) in float_args.iter().enumerate() {
                    if *activity != ArgActivity::Active {
                        continue;
                    }
                    let Some(out) = adjoints else { break };
                    kept.push(if float_args.len() == 1 {
                        out
                    } else {
                        let data = InstructionData::ExtractValue {
                            aggregate: out,
                            indices: vec![k as u32],
                        };
                        b.ins(data).1.expect("extractvalue has a result")
                    });
                }
                match kept.len() {
                    0 => None,
                    1 => Some(kept[0]),
                    _ => {
                        let ty = b.func.signature.ret.clone().expect("a struct of adjoints");
                        let mut acc = b.constant(ty, Constant::Undef);
                        for (k, value) in kept.into_iter().enumerate() {
                            let data = InstructionData::InsertValue {
                                aggregate: acc,
                                value,
                                indices: vec![k as u32],
                            };
                            acc = b.ins(data).1.expect("insertvalue has a result");
                        }
                        Some(acc)
                    }
                }
            }
            Rule::Derivative(derivative) => {
                let args = shadowed(&mut b, true);
                let out = call(&mut b, derivative.forward, args);
                let pair = primal
                    .ret
                    .as_ref()
                    .is_some_and(|r| forward_result(&primal).is_some_and(|f| f != *r));
                match (request.ret, out) {
                    (_, None) => None,
                    (RetActivity::Dup, out) => out,
                    (_, Some(out)) if !pair => Some(out),
                    (RetActivity::Const, Some(out)) => {
                        let data =
                            InstructionData::ExtractValue { aggregate: out, indices: vec![0] };
                        b.ins(data).1
                    }
                    (RetActivity::Active, Some(out)) => {
                        let data =
                            InstructionData::ExtractValue { aggregate: out, indices: vec![1] };
                        b.ins(data).1
                    }
                }
            }
        };
        b.ins(InstructionData::Return { value: returned });
    }
    if let Err(diagnostics) = adc_ir::verify::verify_function(module, &func) {
        return Err(AdError::new(
            Site::function(&module.functions[request.function].name),
            AdErrorKind::Internal {
                what: format!(
                    "the wrapper of a registered derivative does not verify: {diagnostics}"
                ),
            },
        ));
    }
    Ok(Some(module.add_function(func)))
}

/// A function that only calls `function` with its own arguments and returns the result:
/// split mode of a function with a registered rule is split mode of this wrapper, whose
/// reverse synthesis turns the call into the registered augmented forward and reverse
/// calls (the registered tape is kept in the wrapper's split-mode tape).
pub(crate) fn call_wrapper(module: &mut Module, function: FuncId, name: &str) -> FuncId {
    let signature = module.functions[function].signature.clone();
    let mut func = Function::new(name, signature.clone());
    func.linkage = Linkage::Internal;
    func.param_attrs = module.functions[function].param_attrs.clone();
    let sigs = |f: FuncId| (f == function).then(|| signature.clone());
    let mut b = FunctionBuilder::new(&mut func, &sigs);
    let entry = b.create_entry_block();
    b.switch_to_block(entry);
    let args = b.func.dfg.block_params(entry).to_vec();
    let call = InstructionData::Call { callee: function, args, attrs: FuncAttrs::empty() };
    let result = b.ins(call).1;
    b.ins(InstructionData::Return { value: result });
    module.add_function(func)
}

enum Rule {
    Gradient(CustomGradient),
    Derivative(CustomDerivative),
}

/// `value` in every lane of a float scalar or vector type.
fn float_splat(b: &mut FunctionBuilder, ty: &Type, value: f64) -> Value {
    let bits = |t: &Type| {
        if *t == Type::F32 {
            u64::from((value as f32).to_bits())
        } else {
            value.to_bits()
        }
    };
    match ty {
        Type::Vector(elem, lanes) => {
            let lane = Constant::Float(bits(elem));
            b.constant(ty.clone(), Constant::Elements(vec![lane; *lanes as usize]))
        }
        _ => b.constant(ty.clone(), Constant::Float(bits(ty))),
    }
}
