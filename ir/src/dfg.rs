//! The data-flow graph: what exists in a function (values, blocks with their parameters,
//! instructions and their results), independent of the order in which it is laid out.

use cranelift_entity::{PrimaryMap, SecondaryMap};

use crate::entities::{Block, FuncId, Inst, Value};
use crate::function::Signature;
use crate::instructions::InstructionData;
use crate::types::Type;

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ValueDef {
    Result(Inst),
    Param(Block, u32),
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Default, Debug)]
pub struct BlockData {
    pub params: Vec<Value>,
}

/// A source position from the input program (DWARF line info from LLVM).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DebugLoc {
    pub file: std::sync::Arc<str>,
    pub line: u32,
    pub column: u32,
}

/// A byte range in the text the function was parsed from; used to point diagnostics at it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, Debug)]
pub struct TextSpan {
    pub start: u32,
    pub end: u32,
}

impl TextSpan {
    pub fn new(start: usize, end: usize) -> TextSpan {
        TextSpan { start: start as u32, end: end as u32 }
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Clone, Default, Debug)]
pub struct DataFlowGraph {
    pub insts: PrimaryMap<Inst, InstructionData>,
    results: SecondaryMap<Inst, Option<Value>>,
    pub values: PrimaryMap<Value, ValueData>,
    pub blocks: PrimaryMap<Block, BlockData>,
    /// Names from the input (text or LLVM), printed when unique.
    pub value_names: SecondaryMap<Value, Option<Box<str>>>,
    pub block_names: SecondaryMap<Block, Option<Box<str>>>,
    pub debug_locs: SecondaryMap<Inst, Option<DebugLoc>>,
    /// TBAA access-type name of a load/store/memory intrinsic from the input (`"double"`,
    /// `"int"`, `"any pointer"`), kept as a seed for the type analysis. Not printed.
    pub tbaa: SecondaryMap<Inst, Option<std::sync::Arc<str>>>,
    /// For a `ptradd` imported from a GEP that indexes a fixed-size array inside an object
    /// with a variable (`p->a[i]` for `struct { double a[4]; int n; }`): the byte range
    /// `[start, end)` of that array relative to the `ptradd`'s base pointer, which every
    /// access through the result stays in unless the program indexes out of the array
    /// (undefined behaviour in C). The type analysis keeps the array's element facts there
    /// instead of at every offset of the object. Not printed; dropping it only loses
    /// precision.
    pub index_bounds: SecondaryMap<Inst, Option<(u64, u64)>>,
    /// A loop latch branch that LLVM's loop vectorizer made (`llvm.loop.isvectorized`):
    /// the latch of a vector loop, or of the scalar loop it falls back to. Reverse mode
    /// differentiates such a loop nest through its scalar fallback
    /// (`adc_passes::devectorize`). Not printed; dropping it only loses that choice.
    pub loop_vectorized: SecondaryMap<Inst, bool>,
    /// Where each instruction was written, when parsed from text.
    pub inst_spans: SecondaryMap<Inst, TextSpan>,
    pub block_spans: SecondaryMap<Block, TextSpan>,
}

impl DataFlowGraph {
    pub fn make_block(&mut self) -> Block {
        self.blocks.push(BlockData::default())
    }

    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let index = self.blocks[block].params.len() as u32;
        let value = self.values.push(ValueData { ty, def: ValueDef::Param(block, index) });
        self.blocks[block].params.push(value);
        value
    }

    pub fn block_params(&self, block: Block) -> &[Value] {
        &self.blocks[block].params
    }

    /// Creates an instruction and, if it has one, its result (typed by `result_type`).
    /// `signatures` gives the callee signature of direct calls.
    pub fn make_inst(&mut self, data: InstructionData, result_ty: Option<Type>) -> Inst {
        let inst = self.insts.push(data);
        if let Some(ty) = result_ty {
            let value = self.values.push(ValueData { ty, def: ValueDef::Result(inst) });
            self.results[inst] = Some(value);
        }
        inst
    }

    pub fn inst_result(&self, inst: Inst) -> Option<Value> {
        self.results[inst]
    }

    pub fn value_type(&self, value: Value) -> &Type {
        &self.values[value].ty
    }

    pub fn value_def(&self, value: Value) -> ValueDef {
        self.values[value].def
    }

    /// Whether `value` is the result of a `const` instruction.
    pub fn is_const(&self, value: Value) -> bool {
        matches!(self.value_def(value), ValueDef::Result(inst) if matches!(self.insts[inst], InstructionData::Const { .. }))
    }

    /// The value of an integer constant, sign-extended from its width.
    pub fn const_int(&self, value: Value) -> Option<i128> {
        let ValueDef::Result(inst) = self.value_def(value) else { return None };
        match &self.insts[inst] {
            InstructionData::Const { ty, value: crate::Constant::Int(bits) } => {
                Some(crate::constant::sign_extend(*bits, ty.int_bits()?))
            }
            _ => None,
        }
    }

    /// The function `value` is the address of (`const ptr @f`, at offset 0), if it is one.
    pub fn function_address(&self, value: Value) -> Option<FuncId> {
        let ValueDef::Result(inst) = self.value_def(value) else { return None };
        match &self.insts[inst] {
            InstructionData::Const {
                value: crate::Constant::Address { symbol: crate::Symbol::Func(f), offset: 0 },
                ..
            } => Some(*f),
            _ => None,
        }
    }

    pub fn set_value_name(&mut self, value: Value, name: &str) {
        self.value_names[value] = Some(name.into());
    }

    pub fn value_name(&self, value: Value) -> Option<&str> {
        self.value_names[value].as_deref()
    }

    pub fn set_block_name(&mut self, block: Block, name: &str) {
        self.block_names[block] = Some(name.into());
    }

    pub fn block_name(&self, block: Block) -> Option<&str> {
        self.block_names[block].as_deref()
    }

    /// Replaces every use of `old` by `new` in all instructions (laid out or not). This
    /// walks the whole function: a pass replacing many values uses `replace_all_uses`.
    pub fn replace_uses(&mut self, old: Value, new: Value) {
        for data in self.insts.values_mut() {
            data.map_args(|v| if v == old { new } else { v });
        }
    }

    /// Replaces every use of each key of `replacements` by its value, in one walk over the
    /// instructions. The replacements must not chain (no value is both a key and a
    /// replacement); a pass whose replacements chain resolves them first.
    pub fn replace_all_uses<S: std::hash::BuildHasher>(
        &mut self,
        replacements: &std::collections::HashMap<Value, Value, S>,
    ) {
        if replacements.is_empty() {
            return;
        }
        debug_assert!(replacements.values().all(|v| !replacements.contains_key(v)));
        for data in self.insts.values_mut() {
            data.map_args(|v| replacements.get(&v).copied().unwrap_or(v));
        }
    }

    /// The result type an instruction must have, computed from its data alone;
    /// `callee_sig` resolves direct calls. `None` for instructions without a result, and
    /// for instructions too malformed to type (the verifier reports those).
    pub fn result_type(
        &self,
        data: &InstructionData,
        callee_sig: &dyn Fn(FuncId) -> Option<Signature>,
    ) -> Option<Type> {
        use InstructionData as I;
        let ty = |v: &Value| self.values.get(*v).map(|d| d.ty.clone());
        match data {
            I::Const { ty, .. } | I::Cast { ty, .. } | I::Load { ty, .. } => Some(ty.clone()),
            I::Unary { arg, .. } => ty(arg),
            I::Binary { args, .. } | I::Fma { args: [args @ .., _], .. } => ty(&args[0]),
            I::Select { args, .. } => ty(&args[1]),
            I::Icmp { args, .. } | I::Fcmp { args, .. } => {
                ty(&args[0]).map(|t| t.with_lane(Type::I1))
            }
            I::Alloca { .. } => Some(Type::Ptr(0)),
            I::PtrAdd { ptr, .. } => ty(ptr),
            I::Call { callee, .. } => callee_sig(*callee).and_then(|s| s.ret),
            I::CallIndirect { sig, .. } => sig.ret.clone(),
            I::ExtractLane { vector, .. } => ty(vector).map(|t| t.lane_type().clone()),
            I::InsertLane { vector, .. } => ty(vector),
            I::Shuffle { args, mask } => {
                ty(&args[0]).map(|t| Type::vector(t.lane_type().clone(), mask.len() as u32))
            }
            I::Reduce { args, .. } => ty(&args[0]).map(|t| t.lane_type().clone()),
            I::ExtractValue { aggregate, indices } => {
                let mut t = ty(aggregate)?;
                for index in indices {
                    t = t.element_type(u64::from(*index))?.clone();
                }
                Some(t)
            }
            I::InsertValue { aggregate, .. } => ty(aggregate),
            I::AtomicRmw { value, .. } => ty(value),
            I::CmpXchg { expected, .. } => {
                ty(expected).map(|t| Type::structure(vec![t, Type::I1], false))
            }
            I::Store { .. }
            | I::MemCopy { .. }
            | I::MemSet { .. }
            | I::Fence { .. }
            | I::Jump { .. }
            | I::Brif { .. }
            | I::Switch { .. }
            | I::Return { .. }
            | I::Unreachable => None,
        }
    }
}
