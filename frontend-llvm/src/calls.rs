//! Calls: direct (including varargs callees such as printf, with the callee's declared
//! signature), indirect through pointers, call-site attributes; intrinsics are handed to
//! `intrinsics.rs`, inline assembly to `inline_asm.rs`.

use adc_ir::{Constant, InstructionData as D, Signature, Symbol, Type};
use either::Either;
use llvm_ir::instruction::Call;
use llvm_ir::terminator::Invoke;
use llvm_ir::{Constant as C, Operand};

use crate::constants::global_name;
use crate::function::{FuncCtx, R};
use crate::globals::{func_attrs, is_expanded_intrinsic};

/// What a call and an invoke have in common: the callee, its type, the arguments, the
/// result's name and the call-site attributes.
struct CallSite<'a> {
    function_ty: &'a llvm_ir::TypeRef,
    callee: &'a Operand,
    arguments: &'a [(Operand, Vec<llvm_ir::function::ParameterAttribute>)],
    function_attributes: &'a [llvm_ir::function::FunctionAttribute],
    dest: Option<&'a llvm_ir::Name>,
}

impl<'a> FuncCtx<'_, 'a> {
    /// The signature a call site uses (its function type).
    pub(crate) fn call_signature(&self, call: &Call) -> R<Signature> {
        self.signature_of_type(&call.function_ty)
    }

    fn signature_of_type(&self, function_ty: &llvm_ir::TypeRef) -> R<Signature> {
        let llvm_ir::Type::FuncType { result_type, param_types, is_var_arg } = function_ty.as_ref()
        else {
            return Err("call through a non-function type".into());
        };
        let types = &self.m.llvm.types;
        let params =
            param_types.iter().map(|t| crate::types::convert(types, t)).collect::<R<Vec<_>>>()?;
        Ok(Signature {
            params,
            ret: crate::types::return_type(types, result_type)?,
            varargs: *is_var_arg,
        })
    }

    pub fn call(&mut self, call: &'a Call) -> R<()> {
        let callee = match &call.function {
            Either::Left(_) => return self.inline_asm(call),
            Either::Right(op) => op,
        };
        if let Some(name) = intrinsic_name(callee) {
            return self.intrinsic(&name, call);
        }
        self.call_site(CallSite {
            function_ty: &call.function_ty,
            callee,
            arguments: &call.arguments,
            function_attributes: &call.function_attributes,
            dest: call.dest.as_ref(),
        })
    }

    /// The call of an `invoke` (the caller then jumps to its normal destination; see
    /// `FuncCtx::invoke` for the unwind edge).
    pub fn invoke_call(&mut self, invoke: &'a Invoke) -> R<()> {
        let callee = match &invoke.function {
            Either::Left(_) => return Err("an invoke of inline assembly is not supported".into()),
            Either::Right(op) => op,
        };
        if let Some(name) = intrinsic_name(callee) {
            return Err(format!("an invoke of the intrinsic @{name} is not supported"));
        }
        let returns = self.signature_of_type(&invoke.function_ty)?.ret.is_some();
        self.call_site(CallSite {
            function_ty: &invoke.function_ty,
            callee,
            arguments: &invoke.arguments,
            function_attributes: &invoke.function_attributes,
            dest: returns.then_some(&invoke.result),
        })
    }

    fn call_site(&mut self, call: CallSite<'a>) -> R<()> {
        let sig = self.signature_of_type(call.function_ty)?;
        let mut args = Vec::with_capacity(call.arguments.len());
        for (op, _) in call.arguments {
            args.push(self.operand(op)?);
        }
        let attrs = func_attrs(call.function_attributes);
        let direct = match call.callee.as_constant() {
            Some(C::GlobalReference { name, .. }) => {
                match self.m.resolve_symbol(&global_name(name))? {
                    (Symbol::Func(f), 0) if self.m.module.functions[f].signature == sig => Some(f),
                    _ => None,
                }
            }
            _ => None,
        };
        let data = match direct {
            Some(callee) => D::Call { callee, args, attrs },
            // Also calls whose site type differs from the callee's declaration (K&R-style
            // declarations, `(void (*)(int))f` casts): the call site's type is what runs.
            None => {
                let callee = self.operand(call.callee)?;
                D::CallIndirect { sig: Box::new(sig), callee, args, attrs }
            }
        };
        let (_, result) = self.ins(data);
        if let Some(dest) = call.dest {
            let v = result.ok_or("call result of a void function")?;
            self.define(dest, v);
        }
        Ok(())
    }

    /// A call to a libm function (declared on first use), scalarized over vector lanes.
    pub fn libm_call(&mut self, name: &str, args: &[adc_ir::Value]) -> R<adc_ir::Value> {
        let ty = self.ty(args[0]);
        let lane = ty.lane_type().clone();
        let name = match lane {
            Type::F64 => name.to_string(),
            Type::F32 => format!("{name}f"),
            other => return Err(format!("{name} on {other}")),
        };
        let params: Vec<Type> = args.iter().map(|a| self.ty(*a).lane_type().clone()).collect();
        let attrs = adc_ir::FuncAttrs::NOUNWIND | adc_ir::FuncAttrs::WILLRETURN;
        let callee =
            self.m.declare(&name, Signature::new(params.clone(), Some(lane.clone())), attrs);
        if self.m.module.functions[callee].signature.params != params {
            return Err(format!("@{name} is declared with another signature"));
        }
        if !ty.is_vector() {
            return self.val(D::Call { callee, args: args.to_vec(), attrs });
        }
        let mut acc = self.constant(ty.clone(), Constant::Undef);
        for k in 0..ty.lanes() {
            let index = self.iconst(&Type::I32, i128::from(k));
            let mut lane_args = Vec::new();
            for a in args {
                let v = if self.ty(*a).is_vector() {
                    self.val(D::ExtractLane { vector: *a, index })?
                } else {
                    *a
                };
                lane_args.push(v);
            }
            let r = self.val(D::Call { callee, args: lane_args, attrs })?;
            acc = self.val(D::InsertLane { vector: acc, value: r, index })?;
        }
        Ok(acc)
    }
}

/// The name of an intrinsic adc expands itself, when `callee` refers to one.
fn intrinsic_name(callee: &Operand) -> Option<String> {
    let Some(C::GlobalReference { name, .. }) = callee.as_constant() else { return None };
    let name = global_name(name);
    is_expanded_intrinsic(&name).then_some(name)
}
