//! Small example modules built with `FunctionBuilder`, shared by documentation and by the
//! tests of every crate (integration tests cannot see `#[cfg(test)]` items).

use crate::builder::FunctionBuilder;
use crate::entities::FuncId;
use crate::function::{Function, Signature};
use crate::instructions::{BinaryOp, BlockCall, FuncAttrs, IntCC};
use crate::module::Module;
use crate::types::Type;

/// `sum(x, n) = Σ sin(x[i])`: a loop over an array with a call.
pub fn sum_of_sines() -> Module {
    let mut module = Module::new();
    let sin =
        module.add_function(Function::new("sin", Signature::new(vec![Type::F64], Some(Type::F64))));
    module.functions[sin].attrs = FuncAttrs::READNONE | FuncAttrs::NOUNWIND;
    let mut func =
        Function::new("sum", Signature::new(vec![Type::PTR, Type::I64], Some(Type::F64)));
    let callees = |f: FuncId| (f == sin).then(|| Signature::new(vec![Type::F64], Some(Type::F64)));
    let mut b = FunctionBuilder::new(&mut func, &callees);
    let entry = b.create_entry_block();
    let (x, n) = (b.func.params()[0], b.func.params()[1]);
    let header = b.create_block();
    let i = b.append_block_param(header, Type::I64);
    let acc = b.append_block_param(header, Type::F64);
    let body = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(entry);
    let zero = b.iconst(Type::I64, 0);
    let fzero = b.f64const(0.0);
    b.jump(header, vec![zero, fzero]);
    b.switch_to_block(header);
    let more = b.icmp(IntCC::Slt, i, n);
    b.brif(more, BlockCall::new(body, vec![]), BlockCall::new(exit, vec![]));
    b.switch_to_block(body);
    let eight = b.iconst(Type::I64, 8);
    let offset = b.binary(BinaryOp::Mul, i, eight);
    let p = b.ptradd(x, offset);
    let xi = b.load(Type::F64, p, 8);
    let s = b.call(sin, vec![xi]).1.expect("sin returns a value");
    let acc2 = b.binary(BinaryOp::Fadd, acc, s);
    let one = b.iconst(Type::I64, 1);
    let i2 = b.binary(BinaryOp::Add, i, one);
    b.jump(header, vec![i2, acc2]);
    b.switch_to_block(exit);
    b.ret(Some(acc));
    module.add_function(func);
    module
}
