//! adc-frontend-llvm: imports LLVM bitcode (via the `llvm-ir` crate, LLVM 19) into an adc-ir
//! `Module`. It is the only crate that knows LLVM; version-specific details stay here.
//! The importer lands with the LLVM-bridge issue; until then this crate holds nothing.
