// bench/gpu copy of tests/cuda/grad_row_decay.cu, unchanged (sizes are kernel arguments, set by run.py).
// Otherwise identical; the test is the reference, keep the two in step.
// A per-thread loop whose trip count is a kernel parameter: thread r walks its row of m
// values, accumulating a running product of (1 + x[k]^2) and overwriting each value with
// its decayed square, so the reverse pass cannot reload x[k] and must keep it on a tape.
// The tape's size is known on entry to the loop; the cache planner does not presize it
// today, so it grows on the device heap (docs/src/ptx.md, "Tapes on the device").
#include "cuda_kernel.h"

extern "C" DEVICE void __enzyme_autodiff_row_decay(void *, int, int, int, long, int, double *,
                                                   double *, int, double *, double *);

DEVICE void row_decay_body(int rows, long m, double *x, double *y) {
  int r = global_index_x();
  if (r >= rows) return;
  double p = 1.0;
#pragma clang loop unroll(disable)
  for (long k = 0; k < m; k++) {
    double v = x[r * m + k];
    p = p * (1.0 + v * v);
    x[r * m + k] = 0.5 * v * v;
  }
  y[r] = p;
}

GLOBAL void row_decay(int rows, long m, double *x, double *y) { row_decay_body(rows, m, x, y); }

REF void row_decay_ref(int rows, long m, double *x, double *y) {
  for (int r = 0; r < rows; r++) {
    double p = 1.0;
    for (int k = 0; k < m; k++) {
      double v = x[r * m + k];
      p = p * (1.0 + v * v);
      x[r * m + k] = 0.5 * v * v;
    }
    y[r] = p;
  }
}

GLOBAL void row_decay_grad(int rows, long m, double *x, double *dx, double *y, double *dy) {
  __enzyme_autodiff_row_decay((void *)row_decay_body, enzyme_const, rows, enzyme_const, m,
                              enzyme_dup, x, dx, enzyme_dup, y, dy);
}
