// bench/gpu copy of tests/cuda/grad_stencil1d.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// 1-D three-point stencil with a nonlinear term, read straight from global memory: each
// input element is read by three threads, so its adjoint is accumulated atomically.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_stencil1d(void *, int, int, int, const double *,
                                                   double *, int, double *, double *);

DEVICE void stencil1d_body(int n, const double *in, double *out) {
  int i = global_index_x();
  if (i > 0 && i < n - 1) {
    double c = in[i];
    out[i] = 0.25 * in[i - 1] + 0.5 * c + 0.25 * in[i + 1] + 0.1 * c * c * in[i + 1];
  }
}

GLOBAL void stencil1d(int n, const double *in, double *out) { stencil1d_body(n, in, out); }

REF void stencil1d_ref(int n, const double *in, double *out) {
  for (int i = 1; i < n - 1; i++) {
    double c = in[i];
    out[i] = 0.25 * in[i - 1] + 0.5 * c + 0.25 * in[i + 1] + 0.1 * c * c * in[i + 1];
  }
}

GLOBAL void stencil1d_grad(int n, const double *in, double *din, double *out, double *dout) {
  __enzyme_autodiff_stencil1d((void *)stencil1d_body, enzyme_const, n, enzyme_dup, in, din,
                              enzyme_dup, out, dout);
}
