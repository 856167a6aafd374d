// A dense layer with tanh: y[r] = tanh(sum_c W[r][c] x[c] + b[r]), one thread per row; x
// and W are read by many threads (atomic adjoints), the loop has a constant trip count.
#include "cuda_kernel.h"
#ifndef COLS
#define COLS 8
#endif
extern "C" DEVICE void __enzyme_autodiff_tanh_layer(void *, int, int, int, const double *,
                                                    double *, int, const double *, double *, int,
                                                    const double *, double *, int, double *,
                                                    double *);

DEVICE void tanh_layer_body(int rows, const double *w, const double *x, const double *b,
                            double *y) {
  int r = global_index_x();
  if (r >= rows) return;
  double acc = b[r];
  for (int c = 0; c < COLS; c++) acc += w[r * COLS + c] * x[c];
  y[r] = __nv_tanh(acc);
}

GLOBAL void tanh_layer(int rows, const double *w, const double *x, const double *b, double *y) {
  tanh_layer_body(rows, w, x, b, y);
}

REF void tanh_layer_ref(int rows, const double *w, const double *x, const double *b, double *y) {
  for (int r = 0; r < rows; r++) {
    double acc = b[r];
    for (int c = 0; c < COLS; c++) acc += w[r * COLS + c] * x[c];
    y[r] = __nv_tanh(acc);
  }
}

GLOBAL void tanh_layer_grad(int rows, const double *w, double *dw, const double *x, double *dx,
                            const double *b, double *db, double *y, double *dy) {
  __enzyme_autodiff_tanh_layer((void *)tanh_layer_body, enzyme_const, rows, enzyme_dup, w, dw,
                               enzyme_dup, x, dx, enzyme_dup, b, db, enzyme_dup, y, dy);
}
