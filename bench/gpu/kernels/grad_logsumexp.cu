// bench/gpu copy of tests/cuda/grad_logsumexp.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// Row-wise log-sum-exp (a softmax normalizer), one thread per row of a matrix with a
// runtime column count: y[r] = m + log(sum_c exp(x[r][c] - m)), m the row maximum.
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_logsumexp(void *, int, int, int, int, int,
                                                   const double *, double *, int, double *,
                                                   double *);

DEVICE double row_lse(int cols, const double *row) {
  double m = row[0];
  for (int c = 1; c < cols; c++) m = row[c] > m ? row[c] : m;
  double s = 0.0;
  for (int c = 0; c < cols; c++) s += __nv_exp(row[c] - m);
  return m + __nv_log(s);
}

DEVICE void logsumexp_body(int rows, int cols, const double *x, double *y) {
  int r = global_index_x();
  if (r < rows) y[r] = row_lse(cols, x + r * cols);
}

GLOBAL void logsumexp(int rows, int cols, const double *x, double *y) {
  logsumexp_body(rows, cols, x, y);
}

REF void logsumexp_ref(int rows, int cols, const double *x, double *y) {
  for (int r = 0; r < rows; r++) y[r] = row_lse(cols, x + r * cols);
}

GLOBAL void logsumexp_grad(int rows, int cols, const double *x, double *dx, double *y,
                           double *dy) {
  __enzyme_autodiff_logsumexp((void *)logsumexp_body, enzyme_const, rows, enzyme_const, cols,
                              enzyme_dup, x, dx, enzyme_dup, y, dy);
}
