//! adc-passes: analyses (cfg, dominator tree, loops, alias, effects) and transforms
//! (mem2reg, cse/gvn, licm, inlining, e-graph simplification) over adc-ir, with the pass
//! trait, the checked registry of pass names and the pipelines. The registry is empty until
//! the passes issue; `adc opt --passes` already resolves names against it.
