// bench/gpu copy of tests/cuda/grad_sumsq.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// A reduction straight into global memory: every thread adds x[i]^2 * s[i] to *total
// with a double atomic add; the gradient broadcasts the total's adjoint to every thread.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_sumsq(void *, int, int, int, const double *, double *,
                                               int, const double *, double *, int, double *,
                                               double *);

DEVICE void sumsq_body(int n, const double *x, const double *s, double *total) {
  int i = global_index_x();
  if (i < n) __nvvm_atom_add_gen_d(total, x[i] * x[i] * s[i]);
}

GLOBAL void sumsq(int n, const double *x, const double *s, double *total) {
  sumsq_body(n, x, s, total);
}

REF void sumsq_ref(int n, const double *x, const double *s, double *total) {
  for (int i = 0; i < n; i++) *total += x[i] * x[i] * s[i];
}

GLOBAL void sumsq_grad(int n, const double *x, double *dx, const double *s, double *ds,
                       double *total, double *dtotal) {
  __enzyme_autodiff_sumsq((void *)sumsq_body, enzyme_const, n, enzyme_dup, x, dx, enzyme_dup, s,
                          ds, enzyme_dup, total, dtotal);
}
