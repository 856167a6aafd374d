// A weighted histogram with atomics: bin k of hist collects w[i] * x[i]^2 for the samples
// whose x falls into it (an integer atomic counts them too). The gradient reads the
// shadow of the bin each sample went to.
#include "cuda_kernel.h"
#ifndef BINS
#define BINS 8
#endif
extern "C" DEVICE void __enzyme_autodiff_histogram(void *, int, int, int, const double *, double *,
                                                   int, const double *, double *, int, double *,
                                                   double *, int, int *);

DEVICE int bin_of(double x) {
  int k = (int)(x * BINS);
  return k < 0 ? 0 : (k >= BINS ? BINS - 1 : k);
}

DEVICE void histogram_body(int n, const double *x, const double *w, double *hist, int *count) {
  int i = global_index_x();
  if (i >= n) return;
  int k = bin_of(x[i]);
  __nvvm_atom_add_gen_d(&hist[k], w[i] * x[i] * x[i]);
  __nvvm_atom_add_gen_i(&count[k], 1);
}

GLOBAL void histogram(int n, const double *x, const double *w, double *hist, int *count) {
  histogram_body(n, x, w, hist, count);
}

REF void histogram_ref(int n, const double *x, const double *w, double *hist, int *count) {
  for (int i = 0; i < n; i++) {
    int k = bin_of(x[i]);
    hist[k] += w[i] * x[i] * x[i];
    count[k] += 1;
  }
}

GLOBAL void histogram_grad(int n, const double *x, double *dx, const double *w, double *dw,
                           double *hist, double *dhist, int *count) {
  __enzyme_autodiff_histogram((void *)histogram_body, enzyme_const, n, enzyme_dup, x, dx,
                              enzyme_dup, w, dw, enzyme_dup, hist, dhist, enzyme_const, count);
}
