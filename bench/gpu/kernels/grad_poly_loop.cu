// bench/gpu copy of tests/cuda/grad_poly_loop.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// A data-dependent loop: thread i evaluates a polynomial of its own degree deg[i] (read
// from memory) in a by Horner's rule with coefficients c, so every thread runs a
// different number of iterations.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_poly_loop(void *, int, int, int, const int *, int,
                                                   const double *, double *, int, const double *,
                                                   double *, int, double *, double *);

DEVICE void poly_loop_body(int n, const int *deg, const double *a, const double *c, double *y) {
  int i = global_index_x();
  if (i >= n) return;
  double acc = 0.0, x = a[i];
  for (int k = deg[i]; k >= 0; k--) acc = acc * x + c[k];
  y[i] = acc;
}

GLOBAL void poly_loop(int n, const int *deg, const double *a, const double *c, double *y) {
  poly_loop_body(n, deg, a, c, y);
}

REF void poly_loop_ref(int n, const int *deg, const double *a, const double *c, double *y) {
  for (int i = 0; i < n; i++) {
    double acc = 0.0, x = a[i];
    for (int k = deg[i]; k >= 0; k--) acc = acc * x + c[k];
    y[i] = acc;
  }
}

GLOBAL void poly_loop_grad(int n, const int *deg, const double *a, double *da, const double *c,
                           double *dc, double *y, double *dy) {
  __enzyme_autodiff_poly_loop((void *)poly_loop_body, enzyme_const, n, enzyme_const, deg,
                              enzyme_dup, a, da, enzyme_dup, c, dc, enzyme_dup, y, dy);
}
