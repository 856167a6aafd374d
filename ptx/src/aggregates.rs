//! Takes aggregates out of registers in linked libdevice code, since PTX registers hold
//! scalars only: an `extractvalue` of an `insertvalue` chain becomes the inserted value,
//! and a function that returns a struct (libdevice's `__internal_trig_reduction_slowpathd`
//! returns `{double, i32}`) writes its fields through a new trailing pointer parameter
//! instead, into a stack slot its callers read the fields from.

use adc_ir::{
    Constant, FuncId, Function, Inst, InstFlags, InstructionData as I, Module, Type, Value,
    ValueDef,
};

fn field_offsets(ty: &Type) -> Vec<u64> {
    match ty {
        Type::Struct(s) => s.field_offsets(),
        _ => Vec::new(),
    }
}

/// The value inserted at field `index` of `aggregate`, following an `insertvalue` chain.
fn inserted_field(f: &Function, mut aggregate: Value, index: u32) -> Option<Value> {
    loop {
        let ValueDef::Result(inst) = f.dfg.value_def(aggregate) else { return None };
        match &f.dfg.insts[inst] {
            I::InsertValue { aggregate: rest, value, indices } if indices.len() == 1 => {
                if indices[0] == index {
                    return Some(*value);
                }
                aggregate = *rest;
            }
            _ => return None,
        }
    }
}

/// Replaces every `extractvalue` of an `insertvalue` chain in `f` by the inserted value.
fn fold_extracts(f: &mut Function) {
    let insts: Vec<Inst> = f.layout.insts().map(|(_, i)| i).collect();
    for inst in insts {
        let I::ExtractValue { aggregate, indices } = &f.dfg.insts[inst] else { continue };
        let ([index], Some(result)) = (indices.as_slice(), f.dfg.inst_result(inst)) else {
            continue;
        };
        if let Some(value) = inserted_field(f, *aggregate, *index) {
            f.dfg.replace_uses(result, value);
            f.layout.remove_inst(inst);
        }
    }
}

/// Removes `insertvalue`s and aggregate constants whose result nothing laid out uses.
fn remove_dead_inserts(f: &mut Function) {
    loop {
        let mut used = std::collections::HashSet::new();
        for (_, inst) in f.layout.insts() {
            f.dfg.insts[inst].for_each_arg(|v| {
                used.insert(v);
            });
        }
        let dead: Vec<Inst> = f
            .layout
            .insts()
            .map(|(_, i)| i)
            .filter(|i| match &f.dfg.insts[*i] {
                I::InsertValue { .. } => true,
                I::Const { ty, .. } => matches!(ty, Type::Struct(_) | Type::Array(..)),
                _ => false,
            })
            .filter(|i| f.dfg.inst_result(*i).is_none_or(|r| !used.contains(&r)))
            .collect();
        if dead.is_empty() {
            return;
        }
        for inst in dead {
            f.layout.remove_inst(inst);
        }
    }
}

/// Inserts `data` before `before` and returns its result.
fn insert(f: &mut Function, before: Inst, data: I, ty: Option<Type>) -> Option<Value> {
    let inst = f.dfg.make_inst(data, ty);
    f.layout.insert_inst_before(inst, before);
    f.dfg.inst_result(inst)
}

/// `base + offset` inserted before `before`.
fn field_address(f: &mut Function, before: Inst, base: Value, offset: u64) -> Value {
    let offset = insert(
        f,
        before,
        I::Const { ty: Type::I64, value: Constant::Int(offset.into()) },
        Some(Type::I64),
    )
    .expect("const has a result");
    insert(f, before, I::PtrAdd { flags: InstFlags::empty(), ptr: base, offset }, Some(Type::PTR))
        .expect("ptradd has a result")
}

/// Rewrites `callee` (returning the struct `ty`) to store its fields through a trailing
/// pointer parameter.
fn return_through_pointer(f: &mut Function, ty: &Type) {
    let offsets = field_offsets(ty);
    let Some(entry) = f.entry_block() else { return };
    let out = f.dfg.append_block_param(entry, Type::PTR);
    f.signature.params.push(Type::PTR);
    f.signature.ret = None;
    let rets: Vec<(Inst, Value)> = f
        .layout
        .insts()
        .filter_map(|(_, i)| match f.dfg.insts[i] {
            I::Return { value: Some(v) } => Some((i, v)),
            _ => None,
        })
        .collect();
    for (ret, value) in rets {
        for (index, offset) in offsets.iter().enumerate() {
            // An undefined field needs no store.
            let Some(field) = inserted_field(f, value, index as u32) else { continue };
            let align = f.dfg.value_type(field).align() as u32;
            let at = field_address(f, ret, out, *offset);
            insert(f, ret, I::Store { value: field, ptr: at, align, volatile: false }, None);
        }
        f.dfg.insts[ret] = I::Return { value: None };
    }
}

/// Rewrites the calls of `callee` in `f` (which now returns `ty` through a pointer).
fn call_through_pointer(f: &mut Function, callee: FuncId, ty: &Type) {
    let calls: Vec<Inst> = f
        .layout
        .insts()
        .map(|(_, i)| i)
        .filter(|i| matches!(&f.dfg.insts[*i], I::Call { callee: c, .. } if *c == callee))
        .collect();
    let offsets = field_offsets(ty);
    for call in calls {
        let I::Call { args, attrs, .. } = f.dfg.insts[call].clone() else { continue };
        let old = f.dfg.inst_result(call);
        let slot = insert(
            f,
            call,
            I::Alloca { ty: ty.clone(), count: None, align: ty.align() as u32 },
            Some(Type::PTR),
        )
        .expect("alloca has a result");
        let mut args = args;
        args.push(slot);
        let new_call = f.dfg.make_inst(I::Call { callee, args, attrs }, None);
        f.layout.insert_inst_before(new_call, call);
        let Some(old) = old else {
            f.layout.remove_inst(call);
            continue;
        };
        let extracts: Vec<(Inst, u32)> = f
            .layout
            .insts()
            .filter_map(|(_, i)| match &f.dfg.insts[i] {
                I::ExtractValue { aggregate, indices }
                    if *aggregate == old && indices.len() == 1 =>
                {
                    Some((i, indices[0]))
                }
                _ => None,
            })
            .collect();
        for (extract, index) in extracts {
            let field_ty = ty.element_type(u64::from(index)).cloned().unwrap_or(Type::I8);
            let at = field_address(f, call, slot, offsets[index as usize]);
            // The loads go right after the call: move the call before them.
            let align = field_ty.align() as u32;
            let loaded = insert(
                f,
                call,
                I::Load { ty: field_ty.clone(), ptr: at, align, volatile: false },
                Some(field_ty),
            )
            .expect("load has a result");
            if let Some(result) = f.dfg.inst_result(extract) {
                f.dfg.replace_uses(result, loaded);
            }
            f.layout.remove_inst(extract);
        }
        f.layout.remove_inst(call);
    }
}

/// Takes aggregates out of the registers of the functions `linked` (and their callers).
pub(crate) fn scalarize(module: &mut Module, linked: &[FuncId]) {
    for id in linked {
        fold_extracts(&mut module.functions[*id]);
    }
    for id in linked {
        let ty = match &module.functions[*id].signature.ret {
            Some(ty @ Type::Struct(_)) => ty.clone(),
            _ => continue,
        };
        return_through_pointer(&mut module.functions[*id], &ty);
        let callers: Vec<FuncId> = module.functions.keys().collect();
        for caller in callers {
            call_through_pointer(&mut module.functions[caller], *id, &ty);
        }
    }
    for id in linked {
        remove_dead_inserts(&mut module.functions[*id]);
    }
}
