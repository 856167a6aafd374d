//! The layout: the order of blocks in a function and of instructions in each block.
//! Blocks and instructions exist in the data-flow graph before (and after) they are laid
//! out, which lets the reverse-mode synthesis create blocks first and order them later.

use cranelift_entity::SecondaryMap;

use crate::entities::{Block, Inst};

#[derive(Clone, Default, Debug)]
pub struct Layout {
    blocks: Vec<Block>,
    block_insts: SecondaryMap<Block, Vec<Inst>>,
    inst_block: SecondaryMap<Inst, Option<Block>>,
    block_inserted: SecondaryMap<Block, bool>,
}

impl Layout {
    /// Blocks in layout order; the first one is the entry block.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.blocks.first().copied()
    }

    pub fn is_block_inserted(&self, block: Block) -> bool {
        self.block_inserted[block]
    }

    pub fn append_block(&mut self, block: Block) {
        debug_assert!(!self.block_inserted[block], "{block} laid out twice");
        self.block_inserted[block] = true;
        self.blocks.push(block);
    }

    /// Places `block` just before `before` (which must be laid out).
    pub fn insert_block_before(&mut self, block: Block, before: Block) {
        let position = self.blocks.iter().position(|b| *b == before).unwrap_or(self.blocks.len());
        self.block_inserted[block] = true;
        self.blocks.insert(position, block);
    }

    /// Removes a block and its instructions from the layout (they stay in the DFG).
    pub fn remove_block(&mut self, block: Block) {
        self.blocks.retain(|b| *b != block);
        self.block_inserted[block] = false;
        for inst in std::mem::take(&mut self.block_insts[block]) {
            self.inst_block[inst] = None;
        }
    }

    /// Instructions of `block` in order.
    pub fn block_insts(&self, block: Block) -> &[Inst] {
        &self.block_insts[block]
    }

    pub fn inst_block(&self, inst: Inst) -> Option<Block> {
        self.inst_block[inst]
    }

    pub fn first_inst(&self, block: Block) -> Option<Inst> {
        self.block_insts[block].first().copied()
    }

    pub fn last_inst(&self, block: Block) -> Option<Inst> {
        self.block_insts[block].last().copied()
    }

    pub fn append_inst(&mut self, inst: Inst, block: Block) {
        debug_assert!(self.inst_block[inst].is_none(), "{inst} laid out twice");
        self.block_insts[block].push(inst);
        self.inst_block[inst] = Some(block);
    }

    /// Places `inst` just before `before`, in `before`'s block.
    pub fn insert_inst_before(&mut self, inst: Inst, before: Inst) {
        let Some(block) = self.inst_block[before] else {
            return;
        };
        let list = &mut self.block_insts[block];
        let position = list.iter().position(|i| *i == before).unwrap_or(list.len());
        list.insert(position, inst);
        self.inst_block[inst] = Some(block);
    }

    pub fn remove_inst(&mut self, inst: Inst) {
        if let Some(block) = self.inst_block[inst].take() {
            self.block_insts[block].retain(|i| *i != inst);
        }
    }

    /// Position of `inst` within its block.
    pub fn inst_index(&self, inst: Inst) -> Option<usize> {
        let block = self.inst_block[inst]?;
        self.block_insts[block].iter().position(|i| *i == inst)
    }

    /// Every laid-out instruction, block by block.
    pub fn insts(&self) -> impl Iterator<Item = (Block, Inst)> + '_ {
        self.blocks.iter().flat_map(move |b| self.block_insts[*b].iter().map(move |i| (*b, *i)))
    }
}
