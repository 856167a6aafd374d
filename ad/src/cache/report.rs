//! The cache plan of one derivative as a report: for every forward value the reverse pass
//! read, how it got there (stored in a slot or a tape, recomputed, used directly, counted
//! backwards), and the bytes stored per loop iteration and per call.
//! `adc analyze --print cache-plan` and the `cache-plan` filetests print it.

use std::fmt;

use super::Strategy;

/// One value the reverse pass read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanEntry {
    /// The primal value (`%name`), or the forward value for shadows (`%p.shadow`).
    pub value: String,
    /// The type, as printed in the IR.
    pub ty: String,
    pub strategy: Strategy,
    /// The header of the innermost loop the value is defined in (`None` outside loops).
    pub innermost_loop: Option<String>,
    /// Bytes stored per definition (0 unless stored in a slot or a tape).
    pub bytes: u64,
    /// Estimated definitions per call (product of trip counts; 100 for unknown ones).
    pub executions: u64,
    /// Why, where a rule beyond the strategy decided: the value it shares a cache entry
    /// with (cache CSE), or the libm cost model's comparison.
    pub note: Option<String>,
}

/// One tape: a record of the values of one block (or an exit or control tape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapeEntry {
    pub role: TapeRole,
    /// `%name: type @offset` of each record field.
    pub fields: Vec<String>,
    /// Bytes per element (one per execution of the block).
    pub bytes: u64,
    /// Header of the innermost loop around the block.
    pub innermost_loop: Option<String>,
    pub storage: TapeStorage,
    /// Index of the allocation site (presized tapes).
    pub allocation: Option<usize>,
    /// A growing buffer freed right after the reverse of its loop nest.
    pub freed_early: bool,
}

/// One buffer allocated on entry for presized tapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapeAllocation {
    /// Header of the outermost loop of the nest.
    pub nest: Option<String>,
    /// An entry-block `alloca` (else `malloc`).
    pub stack: bool,
    /// A split function's buffer: from its frame's arena when the frame came from one.
    pub arena: bool,
    /// Bytes, when every trip count is a constant.
    pub bytes: Option<u64>,
    /// Tapes sharing the buffer.
    pub tapes: usize,
    /// Freed right after the reverse of the nest.
    pub freed_early: bool,
}

/// The plan of one derivative.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanReport {
    pub function: String,
    pub options: String,
    pub entries: Vec<PlanEntry>,
    pub tapes: Vec<TapeEntry>,
    pub allocations: Vec<TapeAllocation>,
    /// The blocks (`%name` of the allocation) whose primal `free` moved to the reverse
    /// pass (`reverse/reread.rs`), in program order.
    pub deferred_frees: Vec<String>,
}

impl PlanReport {
    /// Bytes stored per iteration of each loop (by header), in order of first appearance.
    pub fn bytes_per_iteration(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = Vec::new();
        for e in &self.entries {
            let Some(header) = &e.innermost_loop else { continue };
            if e.strategy != Strategy::Tape {
                continue;
            }
            match out.iter_mut().find(|(h, _)| h == header) {
                Some((_, bytes)) => *bytes += e.bytes,
                None => out.push((header.clone(), e.bytes)),
            }
        }
        out
    }

    /// Bytes stored per call (slots once, tapes times their estimated executions).
    pub fn total_bytes(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| match e.strategy {
                Strategy::Slot | Strategy::Invariant => e.bytes,
                Strategy::Tape => e.bytes.saturating_mul(e.executions),
                _ => 0,
            })
            .fold(0u64, u64::saturating_add)
    }
}

impl fmt::Display for PlanReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cache plan of @{} ({})", self.function, self.options)?;
        for e in &self.entries {
            let how = match e.strategy {
                Strategy::Direct => "direct".to_string(),
                Strategy::Recompute => "recomputed".to_string(),
                Strategy::Slot => format!("stored: slot, {} bytes", e.bytes),
                Strategy::Tape => format!(
                    "stored: tape, {} bytes per iteration of ^{}",
                    e.bytes,
                    e.innermost_loop.as_deref().unwrap_or("?")
                ),
                Strategy::IvSlot => "counted: induction variable".to_string(),
                Strategy::Shared => "shared".to_string(),
                Strategy::Invariant => format!(
                    "stored: loop invariant, {} bytes per execution of ^{}",
                    e.bytes,
                    e.innermost_loop.as_deref().unwrap_or("?")
                ),
            };
            match &e.note {
                Some(note) => writeln!(f, "  {} : {} -> {how} ({note})", e.value, e.ty)?,
                None => writeln!(f, "  {} : {} -> {how}", e.value, e.ty)?,
            }
        }
        for (header, bytes) in self.bytes_per_iteration() {
            writeln!(f, "  bytes per iteration of ^{header}: {bytes}")?;
        }
        self.fmt_tapes(f)?;
        for block in &self.deferred_frees {
            writeln!(f, "  free of {block} deferred to the reverse of its allocation")?;
        }
        let stored = self.entries.iter().filter(|e| e.bytes > 0).count();
        let recomputed = self.entries.iter().filter(|e| e.strategy == Strategy::Recompute).count();
        writeln!(
            f,
            "  stored: {stored}, recomputed: {recomputed}, bytes per call: {}",
            self.total_bytes()
        )
    }
}

impl PlanReport {
    fn fmt_tapes(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, t) in self.tapes.iter().enumerate() {
            let what = match t.role {
                TapeRole::Record => format!("record {{{}}}", t.fields.join(", ")),
                TapeRole::Exit => "exit tape".to_string(),
                TapeRole::Control => "control tape".to_string(),
            };
            let per = match &t.innermost_loop {
                Some(h) => format!("{} bytes per iteration of ^{h}", t.bytes),
                None => format!("{} bytes per entry", t.bytes),
            };
            let storage = match (t.storage, t.allocation) {
                (TapeStorage::Growing, _) if t.freed_early => {
                    "heap, growing, freed after the reverse of the nest".to_string()
                }
                (TapeStorage::Growing, _) => "heap, growing, freed at return".to_string(),
                (TapeStorage::Heap, Some(a)) => format!("heap, presized in allocation {a}"),
                (TapeStorage::Stack, Some(a)) => format!("stack, presized in allocation {a}"),
                (storage, None) => format!("{storage:?}"),
            };
            writeln!(f, "  tape {index}: {what}, {per}, {storage}")?;
        }
        for (index, a) in self.allocations.iter().enumerate() {
            let site = match (a.stack, a.arena) {
                (true, _) => "stack (alloca)",
                (false, true) => "heap (the frame's arena, else malloc)",
                (false, false) => "heap (malloc)",
            };
            let bytes = a.bytes.map_or("bytes on entry".to_string(), |b| format!("{b} bytes"));
            let nest =
                a.nest.as_deref().map_or("outside loops".to_string(), |n| format!("nest ^{n}"));
            let freed = match (a.stack, a.freed_early) {
                (true, _) => "",
                (false, true) => ", freed after the reverse of the nest",
                (false, false) => ", freed at return",
            };
            let tapes = a.tapes;
            writeln!(f, "  allocation {index}: {site}, {bytes}, {nest}, {tapes} tapes{freed}")?;
        }
        if !self.tapes.is_empty() {
            let growing = self.tapes.iter().filter(|t| t.storage == TapeStorage::Growing).count();
            let heap = self.allocations.iter().filter(|a| !a.stack).count();
            let stack = self.allocations.len() - heap;
            let stack_bytes: u64 =
                self.allocations.iter().filter(|a| a.stack).filter_map(|a| a.bytes).sum();
            writeln!(
                f,
                "  tapes: {}, growing: {growing}, heap allocations: {heap}, stack allocations: \
                 {stack} ({stack_bytes} bytes)",
                self.tapes.len()
            )?;
        }
        Ok(())
    }
}

/// What a tape holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TapeRole {
    /// Records of the values of one forward block.
    Record,
    /// The last value of an inner loop's induction variable, one per inner-loop run.
    Exit,
    /// Which edge entered a merge block.
    Control,
}

/// Where a tape's buffer lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TapeStorage {
    /// Grown by `__adc_tape_push` with `realloc`.
    Growing,
    /// Part of a heap allocation sized on entry.
    Heap,
    /// Part of an entry-block `alloca`.
    Stack,
}
