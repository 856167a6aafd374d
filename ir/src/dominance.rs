//! The dominator tree (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"),
//! shared by the verifier and by `adc-passes`, which builds frontiers and loops on it.
//!
//! Only blocks reachable from the entry are in the tree. `dominates` answers in O(1) from
//! DFS pre/post numbers of the tree, because the verifier asks once per operand. Walks
//! are iterative, so deep CFGs (20,000-block chains) do not overflow the stack.

use std::collections::HashMap;
use std::hash::BuildHasher;

use rustc_hash::FxHashMap;

use crate::entities::Block;
use crate::function::Function;

#[derive(Clone, Debug)]
pub struct DomTree {
    /// Reachable blocks in reverse post-order (the entry first).
    rpo: Vec<Block>,
    /// Reverse post-order index of every reachable block.
    rpo_index: FxHashMap<Block, usize>,
    /// Immediate dominator of each block, by RPO index (the entry is its own).
    idom: Vec<usize>,
    /// Pre- and post-order numbers in the dominator tree.
    interval: FxHashMap<Block, (u32, u32)>,
}

impl DomTree {
    /// `succs` lists the successors of every block that has any; targets that are not
    /// keys of `succs` simply have no successors.
    /// The dominator tree of a laid-out function's CFG; `None` for a declaration.
    pub fn for_function(func: &Function) -> Option<DomTree> {
        let entry = func.entry_block()?;
        let succs: FxHashMap<Block, Vec<Block>> =
            func.layout.blocks().iter().map(|&b| (b, func.successors(b))).collect();
        Some(DomTree::compute(entry, &succs))
    }

    pub fn compute<S: BuildHasher>(entry: Block, succs: &HashMap<Block, Vec<Block>, S>) -> DomTree {
        let no_succs = Vec::new();
        let successors = |b: Block| succs.get(&b).unwrap_or(&no_succs);

        // Iterative DFS; a block is finished once all its successors were visited.
        let mut postorder = Vec::new();
        let mut visited = FxHashMap::default();
        let mut stack = vec![(entry, 0usize)];
        visited.insert(entry, ());
        while let Some((block, next)) = stack.last_mut() {
            let block = *block;
            if let Some(&succ) = successors(block).get(*next) {
                *next += 1;
                if visited.insert(succ, ()).is_none() {
                    stack.push((succ, 0));
                }
            } else {
                postorder.push(block);
                stack.pop();
            }
        }
        let rpo: Vec<Block> = postorder.into_iter().rev().collect();
        let rpo_index: FxHashMap<Block, usize> =
            rpo.iter().enumerate().map(|(i, b)| (*b, i)).collect();

        let mut preds: FxHashMap<Block, Vec<usize>> = FxHashMap::default();
        for &block in &rpo {
            for succ in successors(block) {
                preds.entry(*succ).or_default().push(rpo_index[&block]);
            }
        }

        // idom by RPO index; usize::MAX is "not yet known".
        let mut idom = vec![usize::MAX; rpo.len()];
        idom[0] = 0;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while a > b {
                    a = idom[a];
                }
                while b > a {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for index in 1..rpo.len() {
                let mut new_idom = usize::MAX;
                for &pred in preds.get(&rpo[index]).map(Vec::as_slice).unwrap_or(&[]) {
                    if idom[pred] == usize::MAX {
                        continue;
                    }
                    new_idom = if new_idom == usize::MAX {
                        pred
                    } else {
                        intersect(&idom, pred, new_idom)
                    };
                }
                if new_idom != usize::MAX && idom[index] != new_idom {
                    idom[index] = new_idom;
                    changed = true;
                }
            }
        }

        let mut children = vec![Vec::new(); rpo.len()];
        for (index, &parent) in idom.iter().enumerate().skip(1) {
            children[parent].push(index);
        }
        let mut interval = FxHashMap::default();
        let mut counter = 0u32;
        let mut pre = vec![0u32; rpo.len()];
        let mut stack = vec![(0usize, 0usize)];
        pre[0] = 0;
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            if let Some(&child) = children[node].get(*next) {
                *next += 1;
                counter += 1;
                pre[child] = counter;
                stack.push((child, 0));
            } else {
                interval.insert(rpo[node], (pre[node], counter));
                stack.pop();
            }
        }
        DomTree { rpo, rpo_index, idom, interval }
    }

    /// Reachable blocks in reverse post-order, the entry first.
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// The immediate dominator; `None` for the entry and for unreachable blocks.
    pub fn idom(&self, block: Block) -> Option<Block> {
        let index = *self.rpo_index.get(&block)?;
        (index != 0).then(|| self.rpo[self.idom[index]])
    }

    pub fn is_reachable(&self, block: Block) -> bool {
        self.rpo_index.contains_key(&block)
    }

    /// Whether every path from the entry to `b` goes through `a` (a block dominates
    /// itself). False when either block is unreachable.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        match (self.interval.get(&a), self.interval.get(&b)) {
            (Some(&(a_pre, a_last)), Some(&(b_pre, _))) => a_pre <= b_pre && b_pre <= a_last,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    fn b(n: usize) -> Block {
        Block::new(n)
    }

    #[test]
    fn idom_and_rpo_of_a_loop() {
        let module = crate::examples::sum_of_sines();
        let func = module.functions.values().find(|f| f.name == "sum").unwrap();
        let tree = DomTree::for_function(func).unwrap();
        let blocks = func.layout.blocks();
        assert_eq!(tree.rpo()[0], blocks[0]);
        assert_eq!(tree.idom(blocks[0]), None);
        assert_eq!(tree.idom(blocks[1]), Some(blocks[0]));
        assert_eq!(tree.idom(blocks[2]), Some(blocks[1]));
        assert_eq!(tree.idom(blocks[3]), Some(blocks[1]));
        assert!(tree.dominates(blocks[1], blocks[3]) && !tree.dominates(blocks[2], blocks[3]));
    }

    #[test]
    fn diamond_and_loop() {
        // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 1, 4; 5 unreachable -> 4
        let succs: HashMap<Block, Vec<Block>> = [
            (b(0), vec![b(1), b(2)]),
            (b(1), vec![b(3)]),
            (b(2), vec![b(3)]),
            (b(3), vec![b(1), b(4)]),
            (b(5), vec![b(4)]),
        ]
        .into_iter()
        .collect();
        let tree = DomTree::compute(b(0), &succs);
        assert!(tree.dominates(b(0), b(4)));
        assert!(tree.dominates(b(3), b(4)));
        assert!(!tree.dominates(b(1), b(3)));
        assert!(!tree.dominates(b(2), b(3)));
        assert!(tree.dominates(b(1), b(1)));
        assert!(!tree.is_reachable(b(5)));
        assert!(!tree.dominates(b(5), b(4)));
    }
}
