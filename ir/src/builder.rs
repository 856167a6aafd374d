//! `FunctionBuilder`: appends instructions at the end of a current block, computing result
//! types from the instruction data. Used by the parser, the importer and synthesis.

use crate::constant::Constant;
use crate::entities::{Block, FuncId, Inst, Value};
use crate::function::{Function, Signature};
use crate::instructions::*;
use crate::types::Type;

/// Resolves the signature of a direct callee (the module's function table).
pub type CalleeSignatures<'a> = &'a dyn Fn(FuncId) -> Option<Signature>;

pub struct FunctionBuilder<'a> {
    pub func: &'a mut Function,
    callees: CalleeSignatures<'a>,
    current: Option<Block>,
}

impl<'a> FunctionBuilder<'a> {
    pub fn new(func: &'a mut Function, callees: CalleeSignatures<'a>) -> FunctionBuilder<'a> {
        FunctionBuilder { func, callees, current: None }
    }

    /// Creates and lays out the entry block with one parameter per signature parameter.
    pub fn create_entry_block(&mut self) -> Block {
        let block = self.create_block();
        for ty in self.func.signature.params.clone() {
            self.func.dfg.append_block_param(block, ty);
        }
        block
    }

    /// Creates a block and appends it to the layout.
    pub fn create_block(&mut self) -> Block {
        let block = self.func.dfg.make_block();
        self.func.layout.append_block(block);
        block
    }

    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        self.func.dfg.append_block_param(block, ty)
    }

    pub fn switch_to_block(&mut self, block: Block) {
        self.current = Some(block);
    }

    pub fn current_block(&self) -> Option<Block> {
        self.current
    }

    /// Appends an instruction to the current block. Returns the instruction and its result.
    ///
    /// # Panics
    /// If no block was selected with `switch_to_block`: that is a bug in the caller.
    pub fn ins(&mut self, data: InstructionData) -> (Inst, Option<Value>) {
        let block = self.current.expect("FunctionBuilder::ins without a current block");
        let ty = self.func.dfg.result_type(&data, self.callees);
        let inst = self.func.dfg.make_inst(data, ty);
        self.func.layout.append_inst(inst, block);
        (inst, self.func.dfg.inst_result(inst))
    }

    /// Appends an instruction that has a result and returns the result.
    fn value(&mut self, data: InstructionData) -> Value {
        let (inst, value) = self.ins(data);
        value.unwrap_or_else(|| panic!("{inst} has no result"))
    }

    pub fn constant(&mut self, ty: Type, value: Constant) -> Value {
        self.value(InstructionData::Const { ty, value })
    }

    pub fn iconst(&mut self, ty: Type, value: i128) -> Value {
        let c = Constant::int(&ty, value);
        self.constant(ty, c)
    }

    pub fn f64const(&mut self, value: f64) -> Value {
        self.constant(Type::F64, Constant::f64(value))
    }

    pub fn unary(&mut self, op: UnaryOp, arg: Value) -> Value {
        self.value(InstructionData::Unary { op, flags: InstFlags::empty(), arg })
    }

    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        self.value(InstructionData::Binary { op, flags: InstFlags::empty(), args: [a, b] })
    }

    pub fn icmp(&mut self, cond: IntCC, a: Value, b: Value) -> Value {
        self.value(InstructionData::Icmp { cond, args: [a, b] })
    }

    pub fn fcmp(&mut self, cond: FloatCC, a: Value, b: Value) -> Value {
        self.value(InstructionData::Fcmp { cond, flags: InstFlags::empty(), args: [a, b] })
    }

    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        self.value(InstructionData::Select { flags: InstFlags::empty(), args: [cond, a, b] })
    }

    pub fn cast(&mut self, op: CastOp, arg: Value, ty: Type) -> Value {
        self.value(InstructionData::Cast { op, arg, ty })
    }

    pub fn alloca(&mut self, ty: Type, count: Option<Value>, align: u32) -> Value {
        self.value(InstructionData::Alloca { ty, count, align })
    }

    pub fn load(&mut self, ty: Type, ptr: Value, align: u32) -> Value {
        self.value(InstructionData::Load { ty, ptr, align, volatile: false })
    }

    pub fn store(&mut self, value: Value, ptr: Value, align: u32) -> Inst {
        self.ins(InstructionData::Store { value, ptr, align, volatile: false }).0
    }

    pub fn ptradd(&mut self, ptr: Value, offset: Value) -> Value {
        self.value(InstructionData::PtrAdd { flags: InstFlags::empty(), ptr, offset })
    }

    pub fn call(&mut self, callee: FuncId, args: Vec<Value>) -> (Inst, Option<Value>) {
        self.ins(InstructionData::Call { callee, args, attrs: FuncAttrs::empty() })
    }

    pub fn jump(&mut self, block: Block, args: Vec<Value>) -> Inst {
        self.ins(InstructionData::Jump { dest: BlockCall::new(block, args) }).0
    }

    pub fn brif(&mut self, cond: Value, then_dest: BlockCall, else_dest: BlockCall) -> Inst {
        self.ins(InstructionData::Brif { cond, then_dest, else_dest }).0
    }

    pub fn ret(&mut self, value: Option<Value>) -> Inst {
        self.ins(InstructionData::Return { value }).0
    }
}

#[cfg(test)]
mod tests {
    use crate::text::print_module;

    #[test]
    fn builds_and_prints_a_loop() {
        let text = print_module(&crate::examples::sum_of_sines());
        assert!(text.contains("%v11 = call @sin(%v10)"), "{text}");
        assert!(text.contains("^bb1(%v2: i64, %v3: f64):"), "{text}");
    }
}
