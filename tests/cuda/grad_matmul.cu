// Tiled matrix multiply C = A * B (N x N, N a multiple of TILE) with shared-memory tiles:
// each block loads one tile of A and one of B per step, synchronizes, accumulates, and
// synchronizes again. The gradient mirrors both barriers and accumulates into shadow
// tiles in shared memory.
#include "cuda_kernel.h"
#ifndef TILE
#define TILE 4
#endif
#ifndef N
#define N 8
#endif
extern "C" DEVICE void __enzyme_autodiff_matmul(void *, int, const double *, double *, int,
                                                const double *, double *, int, double *,
                                                double *);

SHARED double tile_a[TILE][TILE];
SHARED double tile_b[TILE][TILE];

DEVICE void matmul_body(const double *a, const double *b, double *c) {
  int tx = __nvvm_read_ptx_sreg_tid_x(), ty = __nvvm_read_ptx_sreg_tid_y();
  int col = __nvvm_read_ptx_sreg_ctaid_x() * TILE + tx;
  int row = __nvvm_read_ptx_sreg_ctaid_y() * TILE + ty;
  double acc = 0.0;
  for (int t = 0; t < N / TILE; t++) {
    tile_a[ty][tx] = a[row * N + t * TILE + tx];
    tile_b[ty][tx] = b[(t * TILE + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += tile_a[ty][k] * tile_b[k][tx];
    __syncthreads();
  }
  c[row * N + col] = acc;
}

GLOBAL void matmul(const double *a, const double *b, double *c) { matmul_body(a, b, c); }

REF void matmul_ref(const double *a, const double *b, double *c) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0.0;
      for (int k = 0; k < N; k++) acc += a[i * N + k] * b[k * N + j];
      c[i * N + j] = acc;
    }
}

GLOBAL void matmul_grad(const double *a, double *da, const double *b, double *db, double *c,
                        double *dc) {
  __enzyme_autodiff_matmul((void *)matmul_body, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_dup,
                           c, dc);
}
