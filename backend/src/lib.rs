//! adc-backend: lowers adc-ir to machine code through Cranelift: object files with the
//! input's symbols and linkage, and a JIT for tests. Lands with the Cranelift-backend issue.
