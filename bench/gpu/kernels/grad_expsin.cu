// bench/gpu copy of tests/cuda/grad_expsin.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// A device function with libdevice's exp and sin: y[i] = exp(-x^2 / 2) * sin(3x) + y[i].
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_expsin(void *, int, int, int, const double *, double *,
                                                int, double *, double *);

DEVICE double wave(double x) { return __nv_exp(-0.5 * x * x) * __nv_sin(3.0 * x); }

DEVICE void expsin_body(int n, const double *x, double *y) {
  int i = global_index_x();
  if (i < n) y[i] += wave(x[i]);
}

GLOBAL void expsin(int n, const double *x, double *y) { expsin_body(n, x, y); }

REF void expsin_ref(int n, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] += wave(x[i]);
}

GLOBAL void expsin_grad(int n, const double *x, double *dx, double *y, double *dy) {
  __enzyme_autodiff_expsin((void *)expsin_body, enzyme_const, n, enzyme_dup, x, dx, enzyme_dup, y,
                           dy);
}
