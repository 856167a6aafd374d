//! adc-ad: automatic differentiation over adc-ir: Enzyme C API lowering, type-tree and
//! activity analyses, the derivative-rule table, reverse and forward mode, and cache
//! planning. Synthesis lands with the reverse-mode issues; this crate holds nothing yet.
