// Dot product with a shared-memory tree reduction: each block reduces its partial
// products in a shared array between barriers, then thread 0 adds the block's sum into
// *out atomically. The gradient needs a shadow shared array and mirrored barriers.
#include "cuda_kernel.h"
#ifndef BLOCK
#define BLOCK 32
#endif
extern "C" DEVICE void __enzyme_autodiff_dot(void *, int, int, int, const double *, double *, int,
                                             const double *, double *, int, double *, double *);

SHARED double dot_partial[BLOCK];

DEVICE void dot_body(int n, const double *x, const double *y, double *out) {
  unsigned tid = __nvvm_read_ptx_sreg_tid_x();
  int i = __nvvm_read_ptx_sreg_ctaid_x() * BLOCK + tid;
  dot_partial[tid] = i < n ? x[i] * y[i] : 0.0;
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (tid < stride) dot_partial[tid] += dot_partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) __nvvm_atom_add_gen_d(out, dot_partial[0]);
}

GLOBAL void dot(int n, const double *x, const double *y, double *out) { dot_body(n, x, y, out); }

REF void dot_ref(int n, const double *x, const double *y, double *out) {
  for (int i = 0; i < n; i++) *out += x[i] * y[i];
}

GLOBAL void dot_grad(int n, const double *x, double *dx, const double *y, double *dy, double *out,
                     double *dout) {
  __enzyme_autodiff_dot((void *)dot_body, enzyme_const, n, enzyme_dup, x, dx, enzyme_dup, y, dy,
                        enzyme_dup, out, dout);
}
