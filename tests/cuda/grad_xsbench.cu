// An XSBench-like macroscopic cross-section lookup: each thread binary-searches a sorted
// energy grid for its particle's energy and interpolates the cross-section table of
// every nuclide, weighted by its density. Many threads read the same table entries.
#include "cuda_kernel.h"
#ifndef GRID
#define GRID 16
#endif
#ifndef NUCLIDES
#define NUCLIDES 3
#endif
extern "C" DEVICE void __enzyme_autodiff_xsbench(void *, int, int, int, const double *, int,
                                                 const double *, double *, int, const double *,
                                                 double *, int, const double *, double *, int,
                                                 double *, double *);

DEVICE double lookup(const double *egrid, const double *xs, const double *density, double e) {
  int lo = 0, hi = GRID - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (egrid[mid] > e) hi = mid; else lo = mid;
  }
  double f = (e - egrid[lo]) / (egrid[hi] - egrid[lo]);
  double total = 0.0;
  for (int k = 0; k < NUCLIDES; k++) {
    double a = xs[k * GRID + lo], b = xs[k * GRID + hi];
    total += density[k] * (a + f * (b - a));
  }
  return total;
}

DEVICE void xsbench_body(int n, const double *egrid, const double *energy, const double *xs,
                         const double *density, double *out) {
  int i = global_index_x();
  if (i < n) out[i] = lookup(egrid, xs, density, energy[i]);
}

GLOBAL void xsbench(int n, const double *egrid, const double *energy, const double *xs,
                    const double *density, double *out) {
  xsbench_body(n, egrid, energy, xs, density, out);
}

REF void xsbench_ref(int n, const double *egrid, const double *energy, const double *xs,
                     const double *density, double *out) {
  for (int i = 0; i < n; i++) out[i] = lookup(egrid, xs, density, energy[i]);
}

GLOBAL void xsbench_grad(int n, const double *egrid, const double *energy, double *denergy,
                         const double *xs, double *dxs, const double *density, double *ddensity,
                         double *out, double *dout) {
  __enzyme_autodiff_xsbench((void *)xsbench_body, enzyme_const, n, enzyme_const, egrid,
                            enzyme_dup, energy, denergy, enzyme_dup, xs, dxs, enzyme_dup, density,
                            ddensity, enzyme_dup, out, dout);
}
