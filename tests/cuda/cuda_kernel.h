// Shared definitions of the gradient test kernels (tests/cuda_kernels.rs): CUDA's
// qualifiers without the CUDA headers, thread indices, and the Enzyme activity markers.
#pragma once
#define DEVICE __attribute__((device))
#define GLOBAL extern "C" __attribute__((global))
#define SHARED __attribute__((shared))
#define REF extern "C" __attribute__((device))

DEVICE int enzyme_dup, enzyme_const;

static DEVICE inline int global_index_x() {
  return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}
static DEVICE inline int global_index_y() {
  return __nvvm_read_ptx_sreg_ctaid_y() * __nvvm_read_ptx_sreg_ntid_y() +
         __nvvm_read_ptx_sreg_tid_y();
}

extern "C" DEVICE double __nv_exp(double);
extern "C" DEVICE double __nv_log(double);
extern "C" DEVICE double __nv_sin(double);
extern "C" DEVICE double __nv_cos(double);
extern "C" DEVICE double __nv_sqrt(double);
extern "C" DEVICE double __nv_pow(double, double);
extern "C" DEVICE double __nv_tanh(double);
