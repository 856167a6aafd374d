// 1-D stencil through a shared tile with halo cells: each block copies its slice of the
// input (plus one neighbour on each side) into shared memory, synchronizes, and computes
// a nonlinear three-point update from the tile.
#include "cuda_kernel.h"
#ifndef BLOCK
#define BLOCK 16
#endif
extern "C" DEVICE void __enzyme_autodiff_stencil_tile(void *, int, int, int, const double *,
                                                      double *, int, double *, double *);

SHARED double halo_tile[BLOCK + 2];

DEVICE void stencil_tile_body(int n, const double *in, double *out) {
  int t = __nvvm_read_ptx_sreg_tid_x();
  int i = __nvvm_read_ptx_sreg_ctaid_x() * BLOCK + t;
  halo_tile[t + 1] = i < n ? in[i] : 0.0;
  if (t == 0) halo_tile[0] = i > 0 ? in[i - 1] : 0.0;
  if (t == BLOCK - 1) halo_tile[BLOCK + 1] = i + 1 < n ? in[i + 1] : 0.0;
  __syncthreads();
  if (i < n) {
    double l = halo_tile[t], c = halo_tile[t + 1], r = halo_tile[t + 2];
    out[i] = c + 0.2 * (l - 2.0 * c + r) + 0.1 * l * r;
  }
}

GLOBAL void stencil_tile(int n, const double *in, double *out) { stencil_tile_body(n, in, out); }

REF void stencil_tile_ref(int n, const double *in, double *out) {
  for (int i = 0; i < n; i++) {
    double l = i > 0 ? in[i - 1] : 0.0, c = in[i], r = i + 1 < n ? in[i + 1] : 0.0;
    out[i] = c + 0.2 * (l - 2.0 * c + r) + 0.1 * l * r;
  }
}

GLOBAL void stencil_tile_grad(int n, const double *in, double *din, double *out, double *dout) {
  __enzyme_autodiff_stencil_tile((void *)stencil_tile_body, enzyme_const, n, enzyme_dup, in, din,
                                 enzyme_dup, out, dout);
}
