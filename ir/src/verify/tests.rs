//! Unit tests of the verifier: one correct function, and for each check class a broken
//! function (built with `FunctionBuilder` or by editing the DFG) whose message is asserted.

use super::*;
use crate::builder::FunctionBuilder;
use crate::constant::Constant;
use crate::entities::{FuncId, GlobalId};
use crate::examples::sum_of_sines;
use crate::function::Signature;
use crate::instructions::*;
use crate::module::Global;
use crate::TextSpan;
use cranelift_entity::EntityRef;

/// A module with the given declarations and one function `@f` whose entry block `body`
/// fills (the builder is positioned in it). Entry parameters are named `a`, `b`, ...
fn module_with(
    decls: &[(&str, Signature)],
    sig: Signature,
    body: impl FnOnce(&mut FunctionBuilder, &[Value], &[FuncId]),
) -> Module {
    let mut module = Module::new();
    let ids: Vec<FuncId> =
        decls.iter().map(|(n, s)| module.add_function(Function::new(*n, s.clone()))).collect();
    let sigs = module.clone();
    let callees = move |f: FuncId| sigs.signature(f);
    let mut func = Function::new("f", sig);
    let mut b = FunctionBuilder::new(&mut func, &callees);
    let entry = b.create_entry_block();
    b.switch_to_block(entry);
    let params = b.func.params().to_vec();
    for (i, p) in params.iter().enumerate() {
        let name = ((b'a' + i as u8) as char).to_string();
        b.func.dfg.set_value_name(*p, &name);
    }
    body(&mut b, &params, &ids);
    module.add_function(func);
    module
}

fn sig(params: Vec<Type>, ret: Option<Type>) -> Signature {
    Signature::new(params, ret)
}

fn errors(module: &Module) -> String {
    match verify_module(module) {
        Ok(()) => String::new(),
        Err(d) => d.to_string(),
    }
}

#[track_caller]
fn assert_error(module: &Module, needle: &str) {
    let text = errors(module);
    assert!(
        text.contains(needle),
        "expected {needle:?} in:\n{text}\n--- module:\n{}",
        crate::text::print_module(module)
    );
}

#[track_caller]
fn assert_ok(module: &Module) {
    let text = errors(module);
    assert!(text.is_empty(), "{text}\n--- module:\n{}", crate::text::print_module(module));
}

fn f(module: &Module) -> &Function {
    module.functions.values().last().unwrap()
}

fn f_mut(module: &mut Module) -> &mut Function {
    module.functions.values_mut().last().unwrap()
}

#[test]
fn a_correct_loop_verifies() {
    assert_ok(&sum_of_sines());
}

#[test]
fn integer_op_on_floats() {
    let m = module_with(&[], sig(vec![Type::F64, Type::F64], None), |b, p, _| {
        b.binary(BinaryOp::Add, p[0], p[1]);
        b.ret(None);
    });
    assert_error(&m, "operand %a of `add` has type f64, expected an integer");
    // The note names function, block and the printed instruction.
    assert_error(&m, "in function @f, block ^bb0: `%v2 = add f64 %a, %b`");
}

#[test]
fn mismatched_operand_types() {
    let m = module_with(&[], sig(vec![Type::I32, Type::I64], None), |b, p, _| {
        b.binary(BinaryOp::Mul, p[0], p[1]);
        b.icmp(IntCC::Eq, p[0], p[1]);
        b.ret(None);
    });
    assert_error(&m, "operands %a and %b of `mul` have different types i32 and i64");
    assert_error(&m, "operands %a and %b of `icmp` have different types i32 and i64");
}

#[test]
fn float_ops_and_fcmp_and_select() {
    let m = module_with(&[], sig(vec![Type::I32, Type::F64, Type::I32], None), |b, p, _| {
        b.binary(BinaryOp::Fadd, p[0], p[0]);
        b.fcmp(FloatCC::Olt, p[0], p[0]);
        b.select(p[2], p[1], p[1]);
        b.unary(UnaryOp::Sqrt, p[0]);
        b.ret(None);
    });
    assert_error(&m, "operand %a of `fadd` has type i32, expected a float or a vector of floats");
    assert_error(&m, "operand %a of `fcmp` has type i32");
    assert_error(&m, "condition %c of `select` has type i32, expected i1");
    assert_error(&m, "operand %a of `sqrt` has type i32");
}

#[test]
fn vector_select_takes_lane_mask() {
    let v4 = Type::vector(Type::F64, 4);
    let m = module_with(&[], sig(vec![v4.clone(), Type::vector(Type::I1, 4)], None), |b, p, _| {
        b.select(p[1], p[0], p[0]);
        b.ret(None);
    });
    assert_ok(&m);
    let m = module_with(&[], sig(vec![v4, Type::vector(Type::I1, 2)], None), |b, p, _| {
        b.select(p[1], p[0], p[0]);
        b.ret(None);
    });
    assert_error(&m, "expected i1 or <4 x i1>");
}

#[test]
fn missing_terminator_empty_block_and_terminator_mid_block() {
    let mut m = module_with(&[], sig(vec![], None), |b, _, _| {
        b.iconst(Type::I32, 1);
    });
    assert_error(&m, "block ^bb0 does not end in a terminator");
    let func = f_mut(&mut m);
    let extra = func.dfg.make_block();
    func.layout.append_block(extra);
    assert_error(&m, "block ^bb1 is empty; it must end in a terminator");

    let m = module_with(&[], sig(vec![], None), |b, _, _| {
        b.ret(None);
        b.iconst(Type::I32, 1);
        b.ret(None);
    });
    assert_error(&m, "terminator `ret` in the middle of block ^bb0");
}

#[test]
fn entry_block_rules() {
    let m = module_with(&[], sig(vec![Type::I32], None), |b, _, _| {
        let entry = b.current_block().unwrap();
        b.jump(entry, vec![]);
    });
    assert_error(&m, "branch to the entry block ^bb0");
    let mut m = module_with(&[], sig(vec![Type::I32], None), |b, _, _| {
        b.ret(None);
    });
    f_mut(&mut m).signature.params[0] = Type::I64;
    assert_error(&m, "parameter 0 (%a) of entry block has type i32, but the signature says i64");
    f_mut(&mut m).signature.params.push(Type::I64);
    f_mut(&mut m).param_attrs.push(ParamAttrs::empty());
    assert_error(&m, "entry block ^bb0 has 1 parameters but the signature has 2");
}

#[test]
fn instruction_laid_out_twice() {
    let mut m = module_with(&[], sig(vec![], None), |b, _, _| {
        b.iconst(Type::I32, 1);
        b.ret(None);
    });
    let func = f_mut(&mut m);
    let first = func.layout.block_insts(func.entry_block().unwrap())[0];
    let other = func.dfg.make_block();
    func.layout.append_block(other);
    // `append_inst` refuses a placed instruction in debug builds; `insert_inst_before`
    // does not, which forges the duplicate.
    let copy = func.dfg.make_inst(InstructionData::Unreachable, None);
    func.layout.append_inst(copy, other);
    func.layout.insert_inst_before(first, copy);
    assert_error(&m, "instruction is laid out twice (first in block ^bb0)");
}

#[test]
fn use_not_dominated_across_blocks() {
    // entry: brif c, ^l, ^r;  ^l: x = const; jump ^j;  ^r: jump ^j;  ^j: ret x
    let m = module_with(&[], sig(vec![Type::I1], Some(Type::I32)), |b, p, _| {
        let (l, r, j) = (b.create_block(), b.create_block(), b.create_block());
        b.brif(p[0], BlockCall::new(l, vec![]), BlockCall::new(r, vec![]));
        b.switch_to_block(l);
        let x = b.iconst(Type::I32, 7);
        b.func.dfg.set_value_name(x, "x");
        b.jump(j, vec![]);
        b.switch_to_block(r);
        b.jump(j, vec![]);
        b.switch_to_block(j);
        b.ret(Some(x));
    });
    assert_error(&m, "%x (defined in block ^bb1) does not dominate its use in block ^bb3");
}

#[test]
fn use_before_def_in_block_and_loop_back_edge() {
    let mut m = module_with(&[], sig(vec![Type::I32], Some(Type::I32)), |b, p, _| {
        let x = b.binary(BinaryOp::Add, p[0], p[0]);
        let y = b.binary(BinaryOp::Add, x, p[0]);
        b.func.dfg.set_value_name(y, "y");
        b.ret(Some(y));
    });
    // Make `x = add a, a` read `y`, defined after it.
    let func = f_mut(&mut m);
    let y = func.dfg.values.keys().find(|v| func.dfg.value_name(*v) == Some("y")).unwrap();
    let first = func.layout.block_insts(func.entry_block().unwrap())[0];
    func.dfg.insts[first] =
        InstructionData::Binary { op: BinaryOp::Add, flags: InstFlags::empty(), args: [y, y] };
    assert_error(&m, "use of %y before its definition in block ^bb0");
}

#[test]
fn uses_in_unreachable_blocks_are_free() {
    let m = module_with(&[], sig(vec![], Some(Type::I32)), |b, _, _| {
        let dead = b.create_block();
        let later = b.create_block();
        let zero = b.iconst(Type::I32, 0);
        b.ret(Some(zero));
        b.switch_to_block(dead);
        b.jump(later, vec![]);
        b.switch_to_block(later);
        let x = b.iconst(Type::I32, 1);
        b.ret(Some(x));
    });
    assert_ok(&m);
    // `dead` uses a value of `later`, which it does not dominate: fine while unreachable.
    let mut m2 = m.clone();
    let func = f_mut(&mut m2);
    let blocks = func.layout.blocks().to_vec();
    let x_inst = func.layout.block_insts(blocks[2])[0];
    let x = func.dfg.inst_result(x_inst).unwrap();
    let jump = func.layout.block_insts(blocks[1])[0];
    let ret = func.dfg.make_inst(InstructionData::Return { value: Some(x) }, None);
    func.layout.remove_inst(jump);
    func.layout.append_inst(ret, blocks[1]);
    assert_ok(&m2);
}

#[test]
fn undefined_and_dangling_operands() {
    let mut m = module_with(&[], sig(vec![Type::I32], Some(Type::I32)), |b, p, _| {
        b.ret(Some(p[0]));
    });
    let func = f_mut(&mut m);
    let entry = func.entry_block().unwrap();
    let ret = func.layout.block_insts(entry)[0];
    func.dfg.insts[ret] = InstructionData::Return { value: Some(Value::new(999)) };
    assert_error(&m, "use of undefined value v999");

    // A value whose defining instruction is not laid out.
    let func = f_mut(&mut m);
    let c = func.dfg.make_inst(
        InstructionData::Const { ty: Type::I32, value: Constant::Int(1) },
        Some(Type::I32),
    );
    let v = func.dfg.inst_result(c).unwrap();
    func.dfg.insts[ret] = InstructionData::Return { value: Some(v) };
    assert_error(&m, "whose defining instruction is not laid out");
}

#[test]
fn branch_arguments_count_and_type() {
    let m = module_with(&[], sig(vec![Type::I32, Type::F64], None), |b, p, _| {
        let next = b.create_block();
        b.append_block_param(next, Type::I32);
        b.jump(next, vec![p[0], p[1]]);
        b.switch_to_block(next);
        b.ret(None);
    });
    assert_error(&m, "branch to ^bb1 passes 2 arguments, but the block has 1 parameters");
    let m = module_with(&[], sig(vec![Type::I32, Type::F64], None), |b, p, _| {
        let next = b.create_block();
        let q = b.append_block_param(next, Type::I32);
        b.func.dfg.set_value_name(q, "q");
        b.jump(next, vec![p[1]]);
        b.switch_to_block(next);
        b.ret(None);
    });
    assert_error(
        &m,
        "argument 0 (%b) of branch to ^bb1 has type f64, but parameter %q has type i32",
    );
}

#[test]
fn branch_targets_must_be_laid_out() {
    let mut m = module_with(&[], sig(vec![], None), |b, _, _| {
        b.ret(None);
    });
    let func = f_mut(&mut m);
    let floating = func.dfg.make_block();
    let entry = func.entry_block().unwrap();
    let ret = func.layout.block_insts(entry)[0];
    func.dfg.insts[ret] = InstructionData::Jump { dest: BlockCall::new(floating, vec![]) };
    assert_error(&m, "branch to block ^bb1, which is not laid out");
    f_mut(&mut m).dfg.insts[ret] =
        InstructionData::Jump { dest: BlockCall::new(Block::new(77), vec![]) };
    assert_error(&m, "branch to nonexistent block bb77");
}

#[test]
fn brif_condition_and_switch_cases() {
    let m = module_with(&[], sig(vec![Type::I8], None), |b, p, _| {
        let (x, y) = (b.create_block(), b.create_block());
        b.ins(InstructionData::Switch {
            value: p[0],
            default: BlockCall::new(x, vec![]),
            cases: vec![
                (1, BlockCall::new(y, vec![])),
                (300, BlockCall::new(y, vec![])),
                (1, BlockCall::new(x, vec![])),
            ],
        });
        b.switch_to_block(x);
        b.brif(p[0], BlockCall::new(y, vec![]), BlockCall::new(y, vec![]));
        b.switch_to_block(y);
        b.ret(None);
    });
    assert_error(&m, "duplicate switch case 1");
    assert_error(&m, "switch case 300 does not fit i8");
    assert_error(&m, "condition %a of `brif` has type i8, expected i1");
}

#[test]
fn return_values() {
    let m = module_with(&[], sig(vec![Type::F32], Some(Type::F64)), |b, p, _| {
        b.ret(Some(p[0]));
    });
    assert_error(&m, "return value %a has type f32, but the function returns f64");
    let m = module_with(&[], sig(vec![], Some(Type::F64)), |b, _, _| {
        b.ret(None);
    });
    assert_error(&m, "`ret` without a value in a function returning f64");
    let m = module_with(&[], sig(vec![Type::F64], None), |b, p, _| {
        b.ret(Some(p[0]));
    });
    assert_error(&m, "`ret` of %a in a function returning void");
}

#[test]
fn calls_against_signatures() {
    let decls = [
        ("g", sig(vec![Type::F64, Type::I32], Some(Type::F64))),
        ("printf", Signature { params: vec![Type::PTR], ret: Some(Type::I32), varargs: true }),
    ];
    let m = module_with(&decls, sig(vec![Type::F64, Type::PTR], None), |b, p, ids| {
        b.call(ids[0], vec![p[0]]);
        b.call(ids[0], vec![p[0], p[0]]);
        b.call(ids[1], vec![p[1], p[0], p[1]]);
        b.call(ids[1], vec![]);
        b.ret(None);
    });
    assert_error(&m, "call to @g passes 1 arguments, but its signature takes 2");
    assert_error(&m, "argument 1 (%a) of call to @g has type f64, expected i32");
    assert_error(&m, "call to @printf passes 0 arguments, but its signature takes at least 1");
    assert_eq!(errors(&m).matches("error:").count(), 3, "{}", errors(&m));
}

#[test]
fn unknown_callee_and_indirect_calls() {
    let m = module_with(&[], sig(vec![Type::F64], None), |b, p, _| {
        b.ins(InstructionData::Call {
            callee: FuncId::new(42),
            args: vec![],
            attrs: FuncAttrs::empty(),
        });
        b.ins(InstructionData::CallIndirect {
            sig: Box::new(sig(vec![Type::F64], None)),
            callee: p[0],
            args: vec![p[0]],
            attrs: FuncAttrs::empty(),
        });
        b.ret(None);
    });
    assert_error(&m, "call to unknown function fn42");
    assert_error(&m, "callee %a of `call_indirect` has type f64, expected a pointer");
}

#[test]
fn casts() {
    let m = module_with(&[], sig(vec![Type::I64, Type::F64, Type::PTR], None), |b, p, _| {
        b.cast(CastOp::Zext, p[0], Type::I32);
        b.cast(CastOp::Trunc, p[0], Type::I128);
        b.cast(CastOp::Bitcast, p[0], Type::F32);
        b.cast(CastOp::Bitcast, p[2], Type::I64);
        b.cast(CastOp::Addrspacecast, p[2], Type::PTR);
        b.cast(CastOp::Fptrunc, p[1], Type::F64);
        b.cast(CastOp::Sitofp, p[1], Type::F64);
        // Legal ones.
        b.cast(CastOp::Bitcast, p[0], Type::F64);
        b.cast(CastOp::Bitcast, p[0], Type::vector(Type::I16, 4));
        b.cast(CastOp::Ptrtoint, p[2], Type::I64);
        b.cast(CastOp::Addrspacecast, p[2], Type::Ptr(1));
        b.cast(CastOp::Fptosi, p[1], Type::I8);
        b.ret(None);
    });
    let text = errors(&m);
    assert_error(&m, "invalid `zext` from i64 to i32: the destination must be wider");
    assert_error(&m, "invalid `trunc` from i64 to i128: the destination must be narrower");
    assert_error(
        &m,
        "invalid `bitcast` from i64 to f32: source and destination must have the same size",
    );
    assert_error(
        &m,
        "invalid `bitcast` from ptr to i64: cannot bitcast between pointers and non-pointers",
    );
    assert_error(&m, "invalid `addrspacecast` from ptr to ptr: the address spaces must differ");
    assert_error(&m, "invalid `fptrunc` from f64 to f64");
    assert_error(&m, "invalid `sitofp` from f64 to f64");
    assert_eq!(text.matches("error:").count(), 7, "{text}");
}

#[test]
fn memory_operands_and_alignment() {
    let m = module_with(&[], sig(vec![Type::I64, Type::F64, Type::PTR], None), |b, p, _| {
        b.load(Type::F64, p[0], 8);
        b.store(p[1], p[2], 3);
        b.alloca(Type::F64, Some(p[1]), 8);
        b.ptradd(p[2], p[1]);
        b.ins(InstructionData::MemSet { dst: p[2], byte: p[0], len: p[0], volatile: false });
        b.ins(InstructionData::MemCopy {
            dst: p[2],
            src: p[2],
            len: p[1],
            may_overlap: false,
            volatile: false,
        });
        b.ret(None);
    });
    assert_error(&m, "pointer operand %a of `load` has type i64, expected a pointer");
    assert_error(&m, "alignment 3 of `store` is not a power of two");
    assert_error(&m, "count %b of `alloca` has type f64, expected an integer");
    assert_error(&m, "offset %b of `ptradd` has type f64, expected an integer");
    assert_error(&m, "byte %a of `memset` has type i64, expected i8");
    assert_error(&m, "length %b of `memcpy` has type f64, expected an integer");
}

#[test]
fn vector_ops() {
    let v4 = Type::vector(Type::F64, 4);
    let m = module_with(&[], sig(vec![v4.clone(), Type::I32, Type::F32], None), |b, p, _| {
        b.ins(InstructionData::Shuffle { args: [p[0], p[0]], mask: vec![Some(0), Some(8), None] });
        b.ins(InstructionData::ExtractLane { vector: p[1], index: p[1] });
        b.ins(InstructionData::InsertLane { vector: p[0], value: p[2], index: p[1] });
        b.ins(InstructionData::Reduce {
            op: ReduceOp::Fadd,
            flags: InstFlags::empty(),
            args: vec![p[0]],
        });
        b.ins(InstructionData::Reduce {
            op: ReduceOp::Fmul,
            flags: InstFlags::empty(),
            args: vec![p[0], p[2]],
        });
        b.ins(InstructionData::Reduce {
            op: ReduceOp::Add,
            flags: InstFlags::empty(),
            args: vec![p[0]],
        });
        b.ins(InstructionData::Reduce {
            op: ReduceOp::Fmax,
            flags: InstFlags::empty(),
            args: vec![p[0], p[2]],
        });
        b.ret(None);
    });
    assert_error(&m, "shuffle mask lane 8 is out of range for two <4 x f64> operands (8 lanes)");
    assert_error(&m, "operand %b of `extractlane` has type i32, expected a vector");
    assert_error(&m, "inserted value %c of `insertlane` has type f32, expected f64");
    assert_error(&m, "`reduce.fadd` takes a vector and a start value, found 1 operands");
    assert_error(&m, "start value %c of `reduce.fmul` has type f32, expected f64");
    assert_error(
        &m,
        "operand %a of `reduce.add` has type <4 x f64>, expected a vector of integers",
    );
    assert_error(&m, "`reduce.fmax` takes only a vector, found 2 operands");
}

#[test]
fn aggregate_indices() {
    let s = Type::structure(vec![Type::I32, Type::array(Type::F64, 2)], false);
    let m = module_with(&[], sig(vec![s, Type::F32], None), |b, p, _| {
        b.ins(InstructionData::ExtractValue { aggregate: p[0], indices: vec![1, 1] });
        b.ins(InstructionData::ExtractValue { aggregate: p[0], indices: vec![2] });
        b.ins(InstructionData::ExtractValue { aggregate: p[0], indices: vec![0, 0] });
        b.ins(InstructionData::InsertValue { aggregate: p[0], value: p[1], indices: vec![1, 0] });
        b.ins(InstructionData::ExtractValue { aggregate: p[1], indices: vec![0] });
        b.ret(None);
    });
    let text = errors(&m);
    assert_error(&m, "index 2 of `extractvalue` is out of range for type {i32, [2 x f64]}");
    assert_error(&m, "index 0 of `extractvalue` is out of range for type i32");
    assert_error(&m, "inserted value %b of `insertvalue` has type f32, expected f64");
    assert_error(&m, "operand %b of `extractvalue` has type f32, expected a struct or an array");
    assert_eq!(text.matches("error:").count(), 4, "{text}");
}

#[test]
fn atomics() {
    let m = module_with(&[], sig(vec![Type::PTR, Type::I32, Type::F64], None), |b, p, _| {
        let rmw = |op, value, ordering| InstructionData::AtomicRmw {
            op,
            ptr: p[0],
            value,
            ordering,
            volatile: false,
        };
        b.ins(rmw(AtomicRmwOp::Fadd, p[1], Ordering::SeqCst));
        b.ins(rmw(AtomicRmwOp::Add, p[2], Ordering::SeqCst));
        b.ins(rmw(AtomicRmwOp::Xchg, p[2], Ordering::Unordered));
        let cx = |success, failure| InstructionData::CmpXchg {
            ptr: p[0],
            expected: p[1],
            new: p[1],
            success,
            failure,
            weak: false,
            volatile: false,
        };
        b.ins(cx(Ordering::SeqCst, Ordering::Release));
        b.ins(cx(Ordering::Monotonic, Ordering::Acquire));
        b.ins(cx(Ordering::Release, Ordering::Monotonic));
        b.ins(cx(Ordering::AcqRel, Ordering::Acquire));
        b.ins(InstructionData::CmpXchg {
            ptr: p[0],
            expected: p[2],
            new: p[2],
            success: Ordering::SeqCst,
            failure: Ordering::SeqCst,
            weak: true,
            volatile: false,
        });
        b.ins(InstructionData::Fence { ordering: Ordering::Monotonic });
        b.ret(None);
    });
    let text = errors(&m);
    assert_error(&m, "value %b of `atomicrmw fadd` has type i32, expected a float");
    assert_error(&m, "value %c of `atomicrmw add` has type f64, expected an integer");
    assert_error(&m, "`atomicrmw` cannot be unordered");
    assert_error(&m, "`cmpxchg` failure ordering cannot be release");
    assert_error(
        &m,
        "expected value %c of `cmpxchg` has type f64, expected an integer or a pointer",
    );
    assert_error(&m, "`fence` cannot be monotonic");
    assert_eq!(text.matches("error:").count(), 6, "{text}");
}

#[test]
fn constants_must_fit() {
    let m = module_with(&[], sig(vec![], None), |b, _, _| {
        b.constant(Type::I8, Constant::Int(256));
        b.constant(Type::F64, Constant::Int(1));
        b.constant(
            Type::PTR,
            Constant::Address { symbol: Symbol::Global(GlobalId::new(3)), offset: 0 },
        );
        b.constant(Type::array(Type::I8, 2), Constant::Bytes(vec![1, 2]));
        b.ret(None);
    });
    let text = errors(&m);
    assert_error(&m, "constant does not fit its type i8");
    assert_error(&m, "constant does not fit its type f64");
    assert_error(&m, "constant refers to unknown global g3");
    assert_eq!(text.matches("error:").count(), 3, "{text}");
}

#[test]
fn stored_result_type_must_match() {
    let mut m = module_with(&[], sig(vec![Type::I32], None), |b, p, _| {
        let x = b.binary(BinaryOp::Add, p[0], p[0]);
        b.func.dfg.set_value_name(x, "x");
        b.ret(None);
    });
    let func = f_mut(&mut m);
    let x = func.dfg.values.keys().find(|v| func.dfg.value_name(*v) == Some("x")).unwrap();
    func.dfg.values[x].ty = Type::I64;
    assert_error(&m, "result %x of `add` has type i64, expected i32");
}

#[test]
fn result_presence() {
    let mut m = module_with(&[("v", sig(vec![], None))], sig(vec![], None), |b, _, ids| {
        b.call(ids[0], vec![]);
        b.ret(None);
    });
    assert_ok(&m);
    // Give the void call a result value.
    let func = f_mut(&mut m);
    let call = func.layout.block_insts(func.entry_block().unwrap())[0];
    let data = func.dfg.insts[call].clone();
    let forged = func.dfg.make_inst(data, Some(Type::I32));
    func.layout.insert_inst_before(forged, call);
    func.layout.remove_inst(call);
    assert_error(&m, "`call` has result %v0 but produces no value");
}

#[test]
fn flags_must_suit_the_opcode() {
    let m = module_with(&[], sig(vec![Type::I32, Type::F64, Type::PTR], None), |b, p, _| {
        let bin = |op, flags, x| InstructionData::Binary { op, flags, args: [x, x] };
        b.ins(bin(BinaryOp::Fadd, InstFlags::NSW, p[1]));
        b.ins(bin(BinaryOp::Add, InstFlags::FAST, p[0]));
        b.ins(bin(BinaryOp::Sdiv, InstFlags::EXACT, p[0]));
        b.ins(bin(BinaryOp::Or, InstFlags::DISJOINT, p[0]));
        b.ins(bin(BinaryOp::Fmul, InstFlags::FAST, p[1]));
        b.ins(bin(BinaryOp::Xor, InstFlags::EXACT, p[0]));
        b.ins(InstructionData::PtrAdd {
            flags: InstFlags::INBOUNDS | InstFlags::NUW,
            ptr: p[2],
            offset: p[0],
        });
        b.ins(InstructionData::Select { flags: InstFlags::NNAN, args: [p[0], p[0], p[0]] });
        b.ret(None);
    });
    let text = errors(&m);
    assert_error(&m, "flag `nsw` is not allowed on `fadd`");
    assert_error(&m, "flag `reassoc` is not allowed on `add`");
    assert_error(&m, "flag `exact` is not allowed on `xor`");
    assert_error(&m, "flag `nuw` is not allowed on `ptradd`");
    assert_error(&m, "flag `nnan` is not allowed on `select`");
    // The select's i32 condition is one more error; `fast` on `add` is seven.
    assert_eq!(text.matches("error:").count(), 1 + 7 + 1 + 1 + 1 + 1, "{text}");
}

#[test]
fn module_level_checks() {
    let mut m = sum_of_sines();
    m.add_function(Function::new("sin", sig(vec![], None)));
    m.add_global(Global {
        name: "g".into(),
        ty: Type::I8,
        linkage: Linkage::Internal,
        constant: false,
        align: 1,
        addr_space: 0,
        init: Some(Constant::Int(1000)),
    });
    m.add_global(Global {
        name: "h".into(),
        ty: Type::PTR,
        linkage: Linkage::Internal,
        constant: true,
        align: 6,
        addr_space: 0,
        init: Some(Constant::Address { symbol: Symbol::Func(FuncId::new(9)), offset: 8 }),
    });
    let mut internal_decl = Function::new("ext", sig(vec![], None));
    internal_decl.linkage = Linkage::Internal;
    m.add_function(internal_decl);
    assert_error(&m, "symbol @sin is defined twice");
    assert_error(&m, "initializer of global @g does not fit its type i8");
    assert_error(&m, "alignment 6 of global @h is not a power of two");
    assert_error(&m, "initializer of global @h refers to unknown function fn9");
    assert_error(&m, "declaration @ext has internal linkage");
}

#[test]
fn declarations_have_no_body() {
    let mut m = Module::new();
    let mut decl = Function::new("d", sig(vec![], None));
    decl.dfg.make_inst(InstructionData::Unreachable, None);
    m.add_function(decl);
    assert_error(&m, "declaration @d has instructions but no laid-out blocks");
}

#[test]
fn diagnostics_carry_spans_and_report_everything() {
    let mut m = module_with(&[], sig(vec![Type::F64], None), |b, p, _| {
        b.binary(BinaryOp::Add, p[0], p[0]);
        b.binary(BinaryOp::Xor, p[0], p[0]);
        b.ret(None);
    });
    let func = f_mut(&mut m);
    let first = func.layout.block_insts(func.entry_block().unwrap())[0];
    func.dfg.inst_spans[first] = TextSpan::new(10, 20);
    let diagnostics = verify_module(&m).unwrap_err();
    // Two operands each of two instructions.
    assert_eq!(diagnostics.0.len(), 4, "{diagnostics}");
    assert_eq!(diagnostics.0[0].span, Some(TextSpan::new(10, 20)));
    assert_eq!(diagnostics.0[2].span, None);
    assert!(
        diagnostics.0[0].label.as_deref()
            == Some("expected an integer or a vector of integers, found f64")
    );
    assert!(verify_function(&m, f(&m)).is_err());
}

#[test]
fn malformed_in_memory_ir_does_not_panic() {
    let mut m = module_with(&[], sig(vec![Type::I32], None), |b, p, _| {
        let next = b.create_block();
        b.jump(next, vec![p[0]]);
        b.switch_to_block(next);
        b.ret(None);
    });
    let func = f_mut(&mut m);
    let entry = func.entry_block().unwrap();
    let jump = func.layout.block_insts(entry)[0];
    // A reduction without operands, a dangling instruction in the layout, a value that
    // claims to be a parameter of a nonexistent block, a block that is laid out twice.
    let reduce = func.dfg.make_inst(
        InstructionData::Reduce { op: ReduceOp::Add, flags: InstFlags::empty(), args: vec![] },
        None,
    );
    func.layout.insert_inst_before(reduce, jump);
    func.layout.insert_inst_before(Inst::new(500), jump);
    func.dfg
        .values
        .push(crate::dfg::ValueData { ty: Type::I32, def: ValueDef::Param(Block::new(40), 3) });
    let bogus = Value::new(func.dfg.values.len() - 1);
    func.dfg.insts[jump] =
        InstructionData::Jump { dest: BlockCall::new(entry, vec![bogus, Value::new(12345)]) };
    let text = errors(&m);
    assert!(text.contains("`reduce.add` has no operands"), "{text}");
    assert!(text.contains("instruction inst500 in block ^bb0 does not exist"), "{text}");
    assert!(text.contains("use of undefined value v12345"), "{text}");
    assert!(text.contains("a parameter of a block that is not laid out"), "{text}");
}

#[test]
fn long_block_chains_do_not_overflow_the_stack() {
    // Depth-first walks are iterative: 20,000 blocks in a row, each using the entry's
    // parameter and passing a value along.
    let m = module_with(&[], sig(vec![Type::I64], Some(Type::I64)), |b, p, _| {
        let mut carried = p[0];
        for _ in 0..20_000 {
            let next = b.create_block();
            let param = b.append_block_param(next, Type::I64);
            b.jump(next, vec![carried]);
            b.switch_to_block(next);
            carried = b.binary(BinaryOp::Add, param, p[0]);
        }
        b.ret(Some(carried));
    });
    assert_ok(&m);
}
