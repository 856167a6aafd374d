//! Functions and their signatures. A function with no laid-out blocks is a declaration.
//! The entry block's parameters are the function's parameters.

use crate::dfg::DataFlowGraph;
use crate::entities::{Block, Inst, Value};
use crate::instructions::{FuncAttrs, InstructionData, ParamAttrs};
use crate::layout::Layout;
use crate::types::Type;

#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Signature {
    pub params: Vec<Type>,
    /// `None` for `void`.
    pub ret: Option<Type>,
    /// Whether extra arguments may follow the fixed ones (`...`).
    pub varargs: bool,
}

impl Signature {
    pub fn new(params: Vec<Type>, ret: Option<Type>) -> Signature {
        Signature { params, ret, varargs: false }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Linkage {
    #[default]
    External,
    Internal,
    Private,
    Weak,
    LinkOnceOdr,
    WeakOdr,
    Common,
    /// Declared here, defined elsewhere (only for globals without an initializer).
    ExternWeak,
}

impl Linkage {
    pub const ALL: &'static [(Linkage, &'static str)] = &[
        (Linkage::External, "external"),
        (Linkage::Internal, "internal"),
        (Linkage::Private, "private"),
        (Linkage::Weak, "weak"),
        (Linkage::LinkOnceOdr, "linkonce_odr"),
        (Linkage::WeakOdr, "weak_odr"),
        (Linkage::Common, "common"),
        (Linkage::ExternWeak, "extern_weak"),
    ];

    pub fn name(self) -> &'static str {
        Linkage::ALL.iter().find(|(l, _)| *l == self).map_or("external", |(_, n)| n)
    }

    pub fn from_name(text: &str) -> Option<Linkage> {
        Linkage::ALL.iter().find(|(_, n)| *n == text).map(|(l, _)| *l)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub signature: Signature,
    pub linkage: Linkage,
    pub attrs: FuncAttrs,
    pub param_attrs: Vec<ParamAttrs>,
    /// Byte size of the aggregate behind each `byval` parameter (`None` elsewhere; may be
    /// shorter than the parameter list). The ABI copies that many bytes onto the stack.
    pub byval_sizes: Vec<Option<u32>>,
    /// Byte size of the aggregate the `sret` parameter points to, when the importer knew
    /// it (Enzyme's API hands such a result's memory and shadow to the derivative).
    pub sret_size: Option<u32>,
    pub dfg: DataFlowGraph,
    pub layout: Layout,
}

impl Function {
    pub fn new(name: impl Into<String>, signature: Signature) -> Function {
        let param_attrs = vec![ParamAttrs::empty(); signature.params.len()];
        Function { name: name.into(), signature, param_attrs, ..Function::default() }
    }

    pub fn is_declaration(&self) -> bool {
        self.layout.blocks().is_empty()
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.layout.entry_block()
    }

    /// The function's parameters (the entry block's parameters).
    pub fn params(&self) -> &[Value] {
        match self.entry_block() {
            Some(entry) => self.dfg.block_params(entry),
            None => &[],
        }
    }

    pub fn inst(&self, inst: Inst) -> &InstructionData {
        &self.dfg.insts[inst]
    }

    /// The terminator of a block, if its last instruction is one.
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        self.layout.last_inst(block).filter(|i| self.dfg.insts[*i].is_terminator())
    }

    /// The values branches pass to each block parameter, by (block, parameter index).
    pub fn block_param_sources(&self) -> std::collections::HashMap<(Block, usize), Vec<Value>> {
        let mut sources: std::collections::HashMap<(Block, usize), Vec<Value>> =
            std::collections::HashMap::new();
        for (_, inst) in self.layout.insts() {
            for target in self.dfg.insts[inst].branch_targets() {
                for (index, arg) in target.args.iter().enumerate() {
                    sources.entry((target.block, index)).or_default().push(*arg);
                }
            }
        }
        sources
    }

    /// Successor blocks in branch order (duplicates kept).
    pub fn successors(&self, block: Block) -> Vec<Block> {
        self.terminator(block)
            .map(|t| self.dfg.insts[t].branch_targets().iter().map(|c| c.block).collect())
            .unwrap_or_default()
    }
}
