//! adc-ptx: emits PTX text (kernels and device functions) from adc-ir for NVIDIA GPUs.
//! Lands with the PTX-emitter issue; this crate holds nothing yet.
