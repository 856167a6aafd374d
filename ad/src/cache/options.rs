//! The cache planner's switches: which planner decides store-or-recompute, and the
//! optimizations that can be turned off one by one for ablations.
//!
//! Spelled on the command line as `--cache=heuristic|mincut` and as toggles inside
//! `--passes` (`--passes=-cache-ivs,-cache-licm`), which `split_toggles` takes out of the
//! pass list before the pass manager sees it. `ADC_CACHE` (the same words, comma
//! separated: `ADC_CACHE=mincut,-cache-licm`) sets the defaults of `adc build` and of the
//! gradient filetest harness, so whole test suites can run under each setting.

use std::fmt;

/// Who decides, for a value the reverse pass needs, whether it is stored or recomputed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Planner {
    /// Recompute whatever can legally be recomputed, store the rest.
    Heuristic,
    /// A minimum cut over the values needed and what they can be recomputed from,
    /// weighted by bytes × executions (`mincut`).
    MinCut,
}

/// Switches of the cache planner.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheOptions {
    pub planner: Planner,
    /// Count induction variables backwards and reverse loop headers without control
    /// tape (`cache-ivs`).
    pub loop_ivs: bool,
    /// Values that do not change while a loop runs are saved once per execution of the
    /// loop instead of once per iteration (`cache-licm`).
    pub licm: bool,
    /// Tape layout (`cache-records`): one record per block and iteration, one allocation
    /// per loop nest, stack tapes and early frees; off: one growing-or-presized tape per
    /// value, freed at the end.
    pub records: bool,
    /// Cache CSE (`cache-cse`): a value equal to a dominating one (same pure computation,
    /// or a load of the same unchanged memory) shares its cache entry instead of being
    /// stored again.
    pub cse: bool,
    /// Tape memory kept across calls (`tape-reuse`): each heap tape allocation site keeps
    /// its buffer in a module global for the next call instead of freeing it.
    pub tape_reuse: bool,
    /// Tapes by kind (`tapes-by-kind`, off by default, on for a derivative that another
    /// request differentiates again): the active floats, the pointers and the other
    /// values a block tapes go to three records, each in allocations of its own. The next
    /// level's analyses then see each tape hold one kind: its type analysis needs no
    /// per-field facts for records at run-time offsets, and its activity analysis leaves
    /// memory that only passive values were stored into unshadowed, so values loaded
    /// from it (a `pow` exponent) carry no derivative whose zero adjoint meets a NaN.
    /// Off by default: the extra records and allocations cost GMM's gradient 25% (10k
    /// points, clang-14 -O2 bitcode: 69 ms against 55 ms).
    pub tapes_by_kind: bool,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            planner: Planner::MinCut,
            loop_ivs: true,
            licm: true,
            records: true,
            cse: true,
            tape_reuse: true,
            tapes_by_kind: false,
        }
    }
}

/// The toggle names accepted in `--passes` (with `-` or `+`).
pub const TOGGLES: &[(&str, &str)] = &[
    ("cache-ivs", "count loop induction variables backwards instead of taping them"),
    ("cache-licm", "save loop-invariant values once per loop execution, not per iteration"),
    ("cache-records", "one tape record per iteration, one allocation per loop nest, stack tapes"),
    ("cache-cse", "equal values share one cache entry; memory already cached is not cached again"),
    ("tape-reuse", "heap tape buffers are kept for the next call instead of freed"),
    ("tapes-by-kind", "active floats, pointers and other taped values in separate tapes"),
];

impl CacheOptions {
    /// Applies one word: `heuristic`, `mincut`, or a toggle `-cache-ivs` / `+cache-licm`.
    pub fn apply(&mut self, word: &str) -> Result<(), String> {
        let word = word.trim();
        match word {
            "" => return Ok(()),
            "heuristic" => self.planner = Planner::Heuristic,
            "mincut" => self.planner = Planner::MinCut,
            _ => {
                let (on, name) = crate::toggles::parse(word);
                if !self.set_toggle(name, on) {
                    return Err(format!(
                        "unknown cache setting `{word}` (valid: heuristic, mincut, \
                         -cache-ivs, -cache-licm, -cache-records, -cache-cse, -tape-reuse, \
                         +tapes-by-kind)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The defaults with `ADC_CACHE` applied (an unset variable gives the defaults).
    pub fn from_env() -> Result<CacheOptions, String> {
        let mut options = CacheOptions::default();
        if let Ok(text) = std::env::var("ADC_CACHE") {
            for word in text.split(',') {
                options.apply(word).map_err(|e| format!("ADC_CACHE: {e}"))?;
            }
        }
        Ok(options)
    }

    /// Switches the toggle `name` (one of [`TOGGLES`]); `false` for an unknown name.
    fn set_toggle(&mut self, name: &str, on: bool) -> bool {
        let field = match name {
            "cache-ivs" => &mut self.loop_ivs,
            "cache-licm" => &mut self.licm,
            "cache-records" => &mut self.records,
            "cache-cse" => &mut self.cse,
            "tape-reuse" => &mut self.tape_reuse,
            "tapes-by-kind" => &mut self.tapes_by_kind,
            _ => return false,
        };
        *field = on;
        true
    }

    /// Takes the cache toggles out of a `--passes` list and applies them; returns the
    /// list of the remaining words (for the pass manager), `None` when nothing is left.
    pub fn split_toggles(&mut self, passes: &str) -> Option<String> {
        crate::toggles::take(passes, TOGGLES, |name, on| {
            self.set_toggle(name, on);
        })
    }
}

impl fmt::Display for CacheOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let planner = match self.planner {
            Planner::Heuristic => "heuristic",
            Planner::MinCut => "mincut",
        };
        write!(f, "{planner}")?;
        let toggles = [
            (self.loop_ivs, "cache-ivs"),
            (self.licm, "cache-licm"),
            (self.records, "cache-records"),
            (self.cse, "cache-cse"),
            (self.tape_reuse, "tape-reuse"),
        ];
        for (on, name) in toggles {
            if !on {
                write!(f, ",-{name}")?;
            }
        }
        if self.tapes_by_kind {
            write!(f, ",+tapes-by-kind")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggles_leave_the_pass_list_and_switch_options() {
        let mut o = CacheOptions::default();
        let rest = o.split_toggles("-licm,-cache-ivs,+cache-licm");
        assert_eq!(rest.as_deref(), Some("-licm"));
        assert!(!o.loop_ivs && o.licm);
        let mut o = CacheOptions::default();
        assert_eq!(o.split_toggles("-cache-licm"), None);
        assert!(!o.licm);
        assert_eq!(o.to_string(), "mincut,-cache-licm");
        assert_eq!(o.split_toggles("-cache-records"), None);
        assert!(!o.records);
        assert_eq!(o.to_string(), "mincut,-cache-licm,-cache-records");
        assert_eq!(o.split_toggles("-cache-cse"), None);
        assert!(!o.cse);
        assert_eq!(o.to_string(), "mincut,-cache-licm,-cache-records,-cache-cse");
        assert_eq!(o.split_toggles("-tape-reuse,-dce").as_deref(), Some("-dce"));
        assert!(!o.tape_reuse);
        assert_eq!(o.to_string(), "mincut,-cache-licm,-cache-records,-cache-cse,-tape-reuse");
        o.apply("+tape-reuse").unwrap();
        assert!(o.tape_reuse);
        o.apply("+tapes-by-kind").unwrap();
        assert!(o.tapes_by_kind);
        assert_eq!(o.to_string(), "mincut,-cache-licm,-cache-records,-cache-cse,+tapes-by-kind");
    }

    #[test]
    fn unknown_words_are_errors() {
        let mut o = CacheOptions::default();
        assert!(o.apply("greedy").unwrap_err().contains("unknown cache setting"));
        o.apply("heuristic").unwrap();
        assert_eq!(o.planner, Planner::Heuristic);
    }
}
