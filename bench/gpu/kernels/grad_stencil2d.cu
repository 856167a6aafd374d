// bench/gpu copy of tests/cuda/grad_stencil2d.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// 2-D five-point diffusion step on a 2-D grid of 2-D blocks, with a reaction term
// u * (1 - u); boundary cells are copied.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_stencil2d(void *, int, int, int, const double *,
                                                   double *, int, double *, double *);

DEVICE double stencil2d_cell(int n, const double *u, int x, int y) {
  int c = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) return u[c];
  double lap = u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - 4.0 * u[c];
  return u[c] + 0.1 * lap + 0.05 * u[c] * (1.0 - u[c]);
}

DEVICE void stencil2d_body(int n, const double *u, double *v) {
  int x = global_index_x(), y = global_index_y();
  if (x < n && y < n) v[y * n + x] = stencil2d_cell(n, u, x, y);
}

GLOBAL void stencil2d(int n, const double *u, double *v) { stencil2d_body(n, u, v); }

REF void stencil2d_ref(int n, const double *u, double *v) {
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) v[y * n + x] = stencil2d_cell(n, u, x, y);
}

GLOBAL void stencil2d_grad(int n, const double *u, double *du, double *v, double *dv) {
  __enzyme_autodiff_stencil2d((void *)stencil2d_body, enzyme_const, n, enzyme_dup, u, du,
                              enzyme_dup, v, dv);
}
