//! Type trees: what the bytes of a value, and of the memory it points to, hold.
//!
//! adc's IR types say too little for AD: after clang -O2 a struct copy is a `load i64` /
//! `store i64` or a `memcpy`, and an `i64` may carry the bits of a `double`. A
//! [`TypeTree`] maps byte-offset *paths* to a [`BaseType`]:
//!
//! - the first step is a byte offset inside the value itself; a scalar value (an `f64`, a
//!   `ptr`) uses [`Step::Any`] (printed `-1`, as in Enzyme) for "its bytes";
//! - each further step is a byte offset inside the memory the previous step points to;
//!   [`Step::Any`] there means "at every element" (arrays indexed by a variable).
//!
//! `{[-1]:Pointer, [-1,0]:Float@double}` is a pointer to a double;
//! `{[-1]:Pointer, [-1,-1]:Float@double}` a pointer into an array of doubles;
//! `{[0]:Integer, [8]:Float@double}` an `{i32, f64}` aggregate.
//!
//! The lattice: no entry (unknown) < `Integer` | `Float(kind)` | `Pointer` < `Anything`.
//! Joining two different known types at one path is a **conflict** (Enzyme aborts there):
//! the path becomes `Anything` and the conflict is recorded in the tree, with both facts,
//! so that a query that needs those bytes reports it instead of guessing. An entry at an
//! `Any` step subsumes the same type at concrete offsets; a concrete entry of another
//! type under an `Any` entry is a conflict too.
//!
//! Caps keep the lattice finite so the interprocedural fixpoint terminates: paths longer
//! than [`MAX_DEPTH`] steps and offsets above [`MAX_OFFSET`] are dropped, and a tree of
//! [`MAX_ENTRIES`] entries takes no facts deeper than [`CROWDED_DEPTH`] (a fact lost to a
//! cap surfaces later as an undeducible type, never as a wrong one).

pub mod analysis;
mod deps;
mod layout;
pub mod print;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

pub use analysis::TypeAnalysis;

/// Paths longer than this many steps are dropped.
pub const MAX_DEPTH: usize = 6;
/// Byte offsets above this are dropped (Enzyme's `MaxTypeOffset` plays the same role).
pub const MAX_OFFSET: u64 = 4096;
/// A tree with this many entries takes no more facts deeper than [`CROWDED_DEPTH`] steps:
/// nested pointer structures (expression templates, evaluators holding pointers to
/// evaluators) otherwise grow trees of thousands of paths, each insertion costs a search,
/// and the analysis of one function takes minutes.
pub const MAX_ENTRIES: usize = 256;
/// How deep a crowded tree still takes facts: the value itself and what it points to.
pub const CROWDED_DEPTH: usize = 2;
/// At most this many conflicts are recorded per tree. A record only explains an error (the
/// path itself holds `Anything`, which every query refuses), but shifting and prefixing
/// copy records like entries: a tape pointer bumped in a loop of a nested derivative grew
/// hundreds of thousands of them, and the analysis ran for minutes.
pub const MAX_CONFLICTS: usize = 16;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum FloatKind {
    F32,
    F64,
}

impl FloatKind {
    pub fn size(self) -> u64 {
        match self {
            FloatKind::F32 => 4,
            FloatKind::F64 => 8,
        }
    }

    /// The C name Enzyme prints (`Float@double`).
    pub fn c_name(self) -> &'static str {
        match self {
            FloatKind::F32 => "float",
            FloatKind::F64 => "double",
        }
    }

    /// The kind of an IR float type (`f32`, `f64`), `None` for anything else.
    pub fn of_type(ty: &adc_ir::Type) -> Option<FloatKind> {
        match ty {
            adc_ir::Type::F32 => Some(FloatKind::F32),
            adc_ir::Type::F64 => Some(FloatKind::F64),
            _ => None,
        }
    }

    pub fn ir_type(self) -> adc_ir::Type {
        match self {
            FloatKind::F32 => adc_ir::Type::F32,
            FloatKind::F64 => adc_ir::Type::F64,
        }
    }
}

/// What one scalar at a path is.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum BaseType {
    Integer,
    Float(FloatKind),
    Pointer,
    /// Any interpretation is allowed; in adc this only arises where facts conflicted
    /// (see [`TypeTree::conflicts`]), so a query needing the bytes reports an error.
    Anything,
}

impl BaseType {
    /// The join of two facts at one path; `None` when they conflict.
    pub fn join(self, other: BaseType) -> Option<BaseType> {
        match (self, other) {
            (a, b) if a == b => Some(a),
            (BaseType::Anything, _) | (_, BaseType::Anything) => Some(BaseType::Anything),
            _ => None,
        }
    }
}

impl fmt::Display for BaseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseType::Integer => f.write_str("Integer"),
            BaseType::Float(kind) => write!(f, "Float@{}", kind.c_name()),
            BaseType::Pointer => f.write_str("Pointer"),
            BaseType::Anything => f.write_str("Anything"),
        }
    }
}

/// One step of a path. `Any` sorts first so trees print in Enzyme's order.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Step {
    Any,
    Offset(u64),
}

impl Step {
    /// Whether a fact at `self` also speaks about `other` (equal, or `self` is `Any`).
    fn covers(self, other: Step) -> bool {
        self == Step::Any || self == other
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Any => f.write_str("-1"),
            Step::Offset(offset) => write!(f, "{offset}"),
        }
    }
}

/// Writes a path as `[-1,0]`.
pub fn path_to_string(path: &[Step]) -> String {
    let steps: Vec<String> = path.iter().map(Step::to_string).collect();
    format!("[{}]", steps.join(","))
}

/// Two facts that met at one path; the path holds `Anything` since.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Conflict {
    pub path: Vec<Step>,
    pub first: BaseType,
    pub second: BaseType,
}

impl Conflict {
    /// A conflict between `a` and `b` at `path`; the two facts are kept in a fixed order
    /// so the record does not depend on the order in which the solver found them.
    pub fn new(path: Vec<Step>, a: BaseType, b: BaseType) -> Conflict {
        Conflict { path, first: a.min(b), second: a.max(b) }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} vs {}", path_to_string(&self.path), self.first, self.second)
    }
}

#[derive(Clone, PartialEq, Eq, Default, Debug)]
pub struct TypeTree {
    entries: BTreeMap<Vec<Step>, BaseType>,
    conflicts: BTreeSet<Conflict>,
}

impl TypeTree {
    pub fn new() -> TypeTree {
        TypeTree::default()
    }

    /// A scalar value of type `base`: `{[-1]:base}`.
    pub fn scalar(base: BaseType) -> TypeTree {
        TypeTree::from_entry(vec![Step::Any], base)
    }

    pub fn from_entry(path: Vec<Step>, base: BaseType) -> TypeTree {
        let mut tree = TypeTree::new();
        tree.insert(path, base);
        tree
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.conflicts.is_empty()
    }

    pub fn entries(&self) -> impl Iterator<Item = (&[Step], BaseType)> + '_ {
        self.entries.iter().map(|(path, base)| (path.as_slice(), *base))
    }

    pub fn conflicts(&self) -> impl Iterator<Item = &Conflict> + '_ {
        self.conflicts.iter()
    }

    /// The longest path, in steps.
    pub fn depth(&self) -> usize {
        self.entries.keys().map(Vec::len).max().unwrap_or(0)
    }

    /// The fact stored at exactly `path`, or else one stored at a path covering it.
    pub fn get(&self, path: &[Step]) -> Option<BaseType> {
        if let Some(base) = self.entries.get(path) {
            return Some(*base);
        }
        self.entries
            .iter()
            .find(|(p, _)| p.len() == path.len() && p.iter().zip(path).all(|(a, b)| a.covers(*b)))
            .map(|(_, base)| *base)
    }

    /// Adds one fact; returns whether the tree changed. Facts beyond the caps are dropped.
    pub fn insert(&mut self, path: Vec<Step>, base: BaseType) -> bool {
        if path.is_empty() || path.len() > MAX_DEPTH {
            return false;
        }
        if path.len() > CROWDED_DEPTH && self.entries.len() >= MAX_ENTRIES {
            return false;
        }
        if path.iter().any(|s| matches!(s, Step::Offset(o) if *o > MAX_OFFSET)) {
            return false;
        }
        // The fact is already here: its interactions with every other entry (subsumption,
        // conflicts) were settled when it was inserted. Merges repeat most facts, and the
        // scan below is linear in the tree.
        if self.entries.get(&path) == Some(&base) {
            return false;
        }
        let mut changed = false;
        let mut subsumed = Vec::new();
        let exact = self.entries.get(&path).copied();
        let overlapping = self.overlapping(&path);
        for (other, other_base) in &overlapping {
            let general = other.iter().zip(&path).all(|(a, b)| a.covers(*b));
            let specific = path.iter().zip(other).all(|(a, b)| a.covers(*b));
            match other_base.join(base) {
                Some(joined) if joined == *other_base && general => return changed,
                Some(joined) if joined == base && specific => subsumed.push(other.clone()),
                Some(_) => {}
                None => {
                    // Keep the more specific path as the conflict's witness.
                    let at = if general { path.clone() } else { other.clone() };
                    let conflict = Conflict::new(at.clone(), *other_base, base);
                    changed |= self.record_conflict(conflict);
                    if !general {
                        changed |= self.entries_set(other.clone(), BaseType::Anything);
                    }
                    if general {
                        changed |= self.insert_exact(path, BaseType::Anything);
                        return changed;
                    }
                }
            }
        }
        for path in subsumed {
            self.entries.remove(&path);
            changed = true;
        }
        match exact {
            Some(old) => match old.join(base) {
                Some(joined) => changed |= self.insert_exact(path, joined),
                None => {
                    let conflict = Conflict::new(path.clone(), old, base);
                    changed |= self.record_conflict(conflict);
                    changed |= self.insert_exact(path, BaseType::Anything);
                }
            },
            None => changed |= self.insert_exact(path, base),
        }
        changed
    }

    /// The entries other than `path` itself whose paths overlap it step by step (equal
    /// steps, or `Any` on either side). Paths sort lexicographically, so the entries under
    /// a prefix are one range: concrete steps of `path` are followed by range lookups (that
    /// step or `Any`), and only an `Any` step of `path` scans what lies under its prefix.
    fn overlapping(&self, path: &[Step]) -> Vec<(Vec<Step>, BaseType)> {
        let mut found = Vec::new();
        self.collect_overlapping(path, &mut Vec::new(), &mut found);
        found
    }

    fn collect_overlapping(
        &self,
        path: &[Step],
        prefix: &mut Vec<Step>,
        found: &mut Vec<(Vec<Step>, BaseType)>,
    ) {
        let depth = prefix.len();
        let Some(&step) = path.get(depth) else {
            if prefix.as_slice() != path {
                if let Some(base) = self.entries.get(prefix.as_slice()) {
                    found.push((prefix.clone(), *base));
                }
            }
            return;
        };
        if step == Step::Any {
            let rest = &path[depth..];
            for (key, base) in self.entries_under(prefix) {
                let overlaps = key.len() == path.len()
                    && key[depth..].iter().zip(rest).all(|(a, b)| a.covers(*b) || b.covers(*a));
                if overlaps && key.as_slice() != path {
                    found.push((key.clone(), *base));
                }
            }
            return;
        }
        for s in [Step::Any, step] {
            prefix.push(s);
            if self.entries_under(prefix).next().is_some() {
                self.collect_overlapping(path, prefix, found);
            }
            prefix.pop();
        }
    }

    /// The entries whose paths start with `prefix`, in order.
    fn entries_under<'t>(
        &'t self,
        prefix: &'t [Step],
    ) -> impl Iterator<Item = (&'t Vec<Step>, &'t BaseType)> + 't {
        let from = (std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded);
        self.entries.range::<[Step], _>(from).take_while(move |(key, _)| key.starts_with(prefix))
    }

    /// Records a conflict within the caps of entries and [`MAX_CONFLICTS`]; returns
    /// whether it is new. The first conflict at a scalar path is what error messages quote,
    /// so one stays recordable whatever the count.
    fn record_conflict(&mut self, conflict: Conflict) -> bool {
        let path = &conflict.path;
        if path.is_empty()
            || path.len() > MAX_DEPTH
            || path.iter().any(|s| matches!(s, Step::Offset(o) if *o > MAX_OFFSET))
        {
            return false;
        }
        if self.conflicts.len() >= MAX_CONFLICTS
            && (path.len() > 1 || self.conflicts.iter().any(|c| c.path.len() == 1))
        {
            return false;
        }
        self.conflicts.insert(conflict)
    }

    fn entries_set(&mut self, path: Vec<Step>, base: BaseType) -> bool {
        self.entries.insert(path, base) != Some(base)
    }

    fn insert_exact(&mut self, path: Vec<Step>, base: BaseType) -> bool {
        self.entries_set(path, base)
    }

    /// Joins `other` into `self`; returns whether `self` changed.
    pub fn merge(&mut self, other: &TypeTree) -> bool {
        let mut changed = false;
        for (path, base) in &other.entries {
            changed |= self.insert(path.clone(), *base);
        }
        for conflict in &other.conflicts {
            changed |= self.record_conflict(conflict.clone());
        }
        changed
    }

    /// The join of two trees.
    pub fn join(&self, other: &TypeTree) -> TypeTree {
        let mut joined = self.clone();
        joined.merge(other);
        joined
    }

    /// The facts that hold for both trees (what a value that is one or the other is
    /// known to be): each entry of one tree that the other implies, at that path or at
    /// one covering it. Conflicted paths (`Anything`) and conflict records drop out.
    pub fn meet(&self, other: &TypeTree) -> TypeTree {
        let implied_by = |a: &TypeTree, b: &TypeTree| {
            a.entries
                .iter()
                .filter(|(path, base)| **base != BaseType::Anything && b.get(path) == Some(**base))
                .map(|(path, base)| (path.clone(), *base))
                .collect::<Vec<_>>()
        };
        let mut both = implied_by(self, other);
        both.extend(implied_by(other, self));
        TypeTree::from_entries(both)
    }

    /// Builds a tree from entries, skipping conflicts' bookkeeping of the source.
    fn from_entries(entries: impl IntoIterator<Item = (Vec<Step>, BaseType)>) -> TypeTree {
        let mut tree = TypeTree::new();
        for (path, base) in entries {
            tree.insert(path, base);
        }
        tree
    }

    /// Maps each path (and each conflict's path) through `f`; `None` drops it.
    fn map_paths(&self, f: impl Fn(&[Step]) -> Option<Vec<Step>>) -> TypeTree {
        let mut tree =
            TypeTree::from_entries(self.entries.iter().filter_map(|(p, b)| Some((f(p)?, *b))));
        for conflict in &self.conflicts {
            if let Some(path) = f(&conflict.path) {
                tree.record_conflict(Conflict { path, ..conflict.clone() });
            }
        }
        tree
    }

    /// Moves every concrete first-step offset by `delta` bytes (dropping those that fall
    /// below 0): the pointee of `p` seen from `p + (-delta)`. `Any` steps stay.
    pub fn shifted(&self, delta: i64) -> TypeTree {
        self.map_paths(|path| {
            let mut path = path.to_vec();
            if let Step::Offset(offset) = path[0] {
                let moved = i128::from(offset) + i128::from(delta);
                path[0] = Step::Offset(u64::try_from(moved).ok()?);
            }
            Some(path)
        })
    }

    /// Every concrete first-step offset becomes `Any`: what is known of an element at an
    /// unknown offset of this memory.
    pub fn at_any_offset(&self) -> TypeTree {
        self.map_paths(|path| {
            let mut path = path.to_vec();
            path[0] = Step::Any;
            Some(path)
        })
    }

    /// The tree with `step` put in front of every path (Enzyme's `Only`): the tree of a
    /// pointer to memory described by `self` is `self.prefixed(Step::Any)`.
    pub fn prefixed(&self, step: Step) -> TypeTree {
        self.map_paths(|path| {
            let mut longer = Vec::with_capacity(path.len() + 1);
            longer.push(step);
            longer.extend_from_slice(path);
            Some(longer)
        })
    }

    /// The facts under first step `step`, with that step removed: entries at `step`
    /// itself and at `Any` (which covers every step). For a scalar pointer,
    /// `child(Step::Any)` is the memory it points to.
    pub fn child(&self, step: Step) -> TypeTree {
        self.map_paths(|path| {
            if path.len() < 2 || !path[0].covers(step) {
                return None;
            }
            Some(path[1..].to_vec())
        })
    }

    /// Facts with a path of exactly one step (the value's own bytes, not what it points
    /// to).
    pub fn top_level(&self) -> TypeTree {
        self.map_paths(|path| (path.len() == 1).then(|| path.to_vec()))
    }

    /// The facts about the `size` bytes starting at `offset` of memory described by
    /// `self`, rebased so that `offset` becomes 0. `Any` entries apply everywhere and are
    /// kept.
    pub fn lookup(&self, offset: u64, size: u64) -> TypeTree {
        self.map_paths(|path| {
            let mut path = path.to_vec();
            match path[0] {
                Step::Any => {}
                Step::Offset(o) if o >= offset && o - offset < size => {
                    path[0] = Step::Offset(o - offset)
                }
                Step::Offset(_) => return None,
            }
            Some(path)
        })
    }

    /// The facts about one scalar stored at `offset` of memory described by `self`, as
    /// the tree of the scalar value (first step `Any`).
    pub fn only_scalar_at(&self, offset: u64) -> TypeTree {
        self.map_paths(|path| {
            let mut path = path.to_vec();
            match path[0] {
                Step::Any => {}
                Step::Offset(o) if o == offset => path[0] = Step::Any,
                Step::Offset(_) => return None,
            }
            Some(path)
        })
    }
}

impl fmt::Display for TypeTree {
    /// `{[-1]:Pointer, [-1,0]:Float@double}`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (path, base)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}:{base}", path_to_string(path))?;
        }
        f.write_str("}")?;
        for conflict in &self.conflicts {
            write!(f, " conflict {conflict}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F64: BaseType = BaseType::Float(FloatKind::F64);

    fn off(o: u64) -> Step {
        Step::Offset(o)
    }

    #[test]
    fn join_of_equal_facts_changes_nothing() {
        let mut tree = TypeTree::scalar(F64);
        assert!(!tree.insert(vec![Step::Any], F64));
        assert_eq!(tree.to_string(), "{[-1]:Float@double}");
    }

    #[test]
    fn a_crowded_tree_takes_only_shallow_facts() {
        let mut tree = TypeTree::new();
        for k in 0..MAX_ENTRIES as u64 {
            assert!(tree.insert(vec![Step::Any, Step::Offset(8 * k)], BaseType::Pointer));
        }
        let deep = vec![Step::Any, Step::Offset(0), Step::Offset(0)];
        assert!(!tree.insert(deep, BaseType::Float(FloatKind::F64)));
        assert!(tree.insert(vec![Step::Offset(0)], BaseType::Pointer));
    }

    #[test]
    fn integer_and_float_conflict_is_recorded() {
        let mut tree = TypeTree::from_entry(vec![off(0)], BaseType::Integer);
        assert!(tree.insert(vec![off(0)], F64));
        assert_eq!(tree.get(&[off(0)]), Some(BaseType::Anything));
        let conflicts: Vec<_> = tree.conflicts().map(ToString::to_string).collect();
        assert_eq!(conflicts, vec!["[0]: Integer vs Float@double"]);
        // Joining again is stable.
        assert!(!tree.insert(vec![off(0)], F64));
    }

    #[test]
    fn float_kinds_conflict() {
        let mut tree = TypeTree::from_entry(vec![off(0)], BaseType::Float(FloatKind::F32));
        tree.insert(vec![off(0)], F64);
        assert_eq!(tree.conflicts().count(), 1);
    }

    #[test]
    fn any_offset_subsumes_concrete_offsets() {
        let mut tree = TypeTree::new();
        tree.insert(vec![Step::Any, off(0)], F64);
        tree.insert(vec![Step::Any, off(8)], F64);
        assert!(tree.insert(vec![Step::Any, Step::Any], F64));
        assert_eq!(tree.to_string(), "{[-1,-1]:Float@double}");
        assert!(!tree.insert(vec![Step::Any, off(16)], F64));
        // A concrete integer under an `Any` float is a conflict.
        tree.insert(vec![Step::Any, off(4)], BaseType::Integer);
        assert_eq!(tree.conflicts().count(), 1);
    }

    #[test]
    fn shift_moves_offsets_and_drops_negative_ones() {
        let mut memory = TypeTree::new();
        memory.insert(vec![off(0)], BaseType::Integer);
        memory.insert(vec![off(8)], F64);
        memory.insert(vec![Step::Any, off(0)], BaseType::Pointer);
        let shifted = memory.shifted(-8);
        assert_eq!(shifted.to_string(), "{[-1,0]:Pointer, [0]:Float@double}");
        assert_eq!(memory.shifted(4).get(&[off(12)]), Some(F64));
    }

    #[test]
    fn caps_drop_deep_paths_and_far_offsets() {
        let mut tree = TypeTree::new();
        assert!(!tree.insert(vec![Step::Any; MAX_DEPTH + 1], F64));
        assert!(!tree.insert(vec![off(MAX_OFFSET + 1)], F64));
        assert!(tree.insert(vec![Step::Any; MAX_DEPTH], F64));
        assert_eq!(tree.depth(), MAX_DEPTH);
        let deep = tree.prefixed(Step::Any);
        assert!(deep.is_empty(), "prefixing past the depth cap drops the fact");
    }

    #[test]
    fn conflict_records_are_capped_but_conflicts_still_read_anything() {
        // Memory seen through a pointer bumped in a loop: every shift and join at a new
        // offset conflicts again (an f64 slot meets an integer one).
        let mut tree = TypeTree::new();
        for k in 0..200u64 {
            tree.insert(vec![off(8 * k)], F64);
            tree.merge(&TypeTree::from_entry(vec![off(8 * k)], BaseType::Integer).shifted(0));
            tree = tree.join(&tree.shifted(8));
        }
        assert!(tree.conflicts().count() <= MAX_CONFLICTS);
        assert_eq!(tree.get(&[off(8 * 150)]), Some(BaseType::Anything));
        // Beyond the cap a first conflict at a scalar path is still recorded for messages.
        let mut deep = TypeTree::new();
        for k in 0..(MAX_CONFLICTS as u64 + 4) {
            deep.insert(vec![Step::Any, off(8 * k)], F64);
            deep.insert(vec![Step::Any, off(8 * k)], BaseType::Integer);
        }
        assert_eq!(deep.conflicts().count(), MAX_CONFLICTS);
        deep.insert(vec![off(0)], F64);
        deep.insert(vec![off(0)], BaseType::Pointer);
        assert!(deep.conflicts().any(|c| c.path.len() == 1));
    }

    #[test]
    fn pointer_pointee_round_trip() {
        let memory = TypeTree::from_entry(vec![off(8)], F64);
        let mut pointer = TypeTree::scalar(BaseType::Pointer);
        pointer.merge(&memory.prefixed(Step::Any));
        assert_eq!(pointer.to_string(), "{[-1]:Pointer, [-1,8]:Float@double}");
        assert_eq!(pointer.child(Step::Any), memory);
        assert_eq!(pointer.top_level().to_string(), "{[-1]:Pointer}");
    }

    #[test]
    fn lookup_rebases_a_range() {
        let mut memory = TypeTree::new();
        memory.insert(vec![off(0)], BaseType::Integer);
        memory.insert(vec![off(8)], F64);
        memory.insert(vec![off(16)], F64);
        assert_eq!(memory.lookup(8, 8).to_string(), "{[0]:Float@double}");
        assert_eq!(memory.lookup(8, 16).to_string(), "{[0]:Float@double, [8]:Float@double}");
        assert_eq!(memory.only_scalar_at(0).to_string(), "{[-1]:Integer}");
        assert!(memory.lookup(24, 8).is_empty());
    }

    #[test]
    fn meet_keeps_facts_both_sides_imply() {
        let mut array = TypeTree::new();
        array.insert(vec![Step::Any, Step::Any], BaseType::Float(FloatKind::F64));
        let mut record = TypeTree::new();
        record.insert(vec![Step::Any, off(0)], BaseType::Float(FloatKind::F64));
        record.insert(vec![Step::Any, off(8)], BaseType::Pointer);
        let mut scalars = TypeTree::new();
        scalars.insert(vec![Step::Any, off(0)], BaseType::Float(FloatKind::F64));
        scalars.insert(vec![Step::Any, off(8)], BaseType::Float(FloatKind::F64));
        // An array of doubles implies a double at offset 0, not a pointer at 8.
        let met = array.meet(&record);
        assert_eq!(met.get(&[Step::Any, off(0)]), Some(BaseType::Float(FloatKind::F64)));
        assert_eq!(met.get(&[Step::Any, off(8)]), None);
        assert_eq!(met.conflicts().count(), 0);
        // Offsets both sides name are kept; `-1` of one side is not implied by the other.
        let met = scalars.meet(&array);
        assert_eq!(met.get(&[Step::Any, off(8)]), Some(BaseType::Float(FloatKind::F64)));
        assert_eq!(met.get(&[Step::Any, Step::Any]), None);
        // Conflicted paths are no fact.
        let mut conflicted = record.clone();
        conflicted.insert(vec![Step::Any, off(0)], BaseType::Integer);
        assert_eq!(conflicted.meet(&record).get(&[Step::Any, off(0)]), None);
        assert!(TypeTree::new().meet(&record).is_empty());
    }

    #[test]
    fn anything_absorbs_without_conflict() {
        assert_eq!(BaseType::Anything.join(F64), Some(BaseType::Anything));
        assert_eq!(BaseType::Pointer.join(BaseType::Integer), None);
    }
}
