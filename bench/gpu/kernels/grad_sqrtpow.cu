// bench/gpu copy of tests/cuda/grad_sqrtpow.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// Device functions with sqrt, pow and log: y[i] = sqrt(x^2 + 1) + pow(x + 2, 1.5) * log(x + 3).
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_sqrtpow(void *, int, int, int, const double *, double *,
                                                 int, double *, double *);

DEVICE double hypot1(double x) { return __nv_sqrt(x * x + 1.0); }
DEVICE double powlog(double x) { return __nv_pow(x + 2.0, 1.5) * __nv_log(x + 3.0); }

DEVICE void sqrtpow_body(int n, const double *x, double *y) {
  int i = global_index_x();
  if (i < n) y[i] = hypot1(x[i]) + powlog(x[i]);
}

GLOBAL void sqrtpow(int n, const double *x, double *y) { sqrtpow_body(n, x, y); }

REF void sqrtpow_ref(int n, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = hypot1(x[i]) + powlog(x[i]);
}

GLOBAL void sqrtpow_grad(int n, const double *x, double *dx, double *y, double *dy) {
  __enzyme_autodiff_sqrtpow((void *)sqrtpow_body, enzyme_const, n, enzyme_dup, x, dx, enzyme_dup,
                            y, dy);
}
