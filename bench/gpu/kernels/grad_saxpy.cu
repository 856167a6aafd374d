// bench/gpu copy of tests/cuda/grad_saxpy.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// saxpy and its gradient: y[i] = a * x[i] + y[i] in single precision, one thread per
// element; the gradient kernel differentiates the device body with x and y duplicated.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_saxpy(void *, int, int, int, float, int, const float *,
                                               float *, int, float *, float *);

DEVICE void saxpy_body(int n, float a, const float *x, float *y) {
  int i = global_index_x();
  if (i < n) y[i] = a * x[i] + y[i];
}

GLOBAL void saxpy(int n, float a, const float *x, float *y) { saxpy_body(n, a, x, y); }

REF void saxpy_ref(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

GLOBAL void saxpy_grad(int n, float a, const float *x, float *dx, float *y, float *dy) {
  __enzyme_autodiff_saxpy((void *)saxpy_body, enzyme_const, n, enzyme_const, a, enzyme_dup, x, dx,
                          enzyme_dup, y, dy);
}
