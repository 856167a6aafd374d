/* GMM's triangular loop (Qxcentered[row] += icf[idx] * xcentered[col], d = 64, K = 25,
 * 1k points) and its reverse as adc's gradient computes it (d_icf[idx] += dQ[row] * xc[col];
 * d_xc[col] += dQ[row] * icf[idx], the second a loop-carried sum), written out in C to
 * compare code generators on the loop that dominates the d = 64 gradient:
 *   clang-19 -O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops triangle.c -o t && ./t
 *   clang-19 ... -c -emit-llvm triangle.c -o t.bc && adc build t.bc -o t.o && cc t.o -o t && ./t
 * See docs/src/gradient-performance.md (GMM after session 5). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
// Reverse of Qxcentered[row] += icf[idx] * xc[col] over the triangle, per (i,k):
// d_icf[idx] += dQ[row] * xc[col]; d_xc[col] += dQ[row] * icf[idx]
__attribute__((noinline)) void rev(int d, const double *icf, double *d_icf, const double *xc, double *d_xc, const double *dQ) {
  int idx = d * (d - 1) / 2 - 1;
  for (int col = d - 1; col >= 0; col--) {
    double acc = 0.0;
    for (int row = d - 1; row > col; row--) {
      d_icf[idx] += dQ[row] * xc[col];
      acc += dQ[row] * icf[idx];
      idx--;
    }
    d_xc[col] += acc;
  }
}
__attribute__((noinline)) void fwd(int d, const double *icf, const double *xc, double *Q) {
  int idx = 0;
  for (int col = 0; col < d; col++)
    for (int row = col + 1; row < d; row++) { Q[row] += icf[idx] * xc[col]; idx++; }
}
int main(int argc, char **argv) {
  int d = 64, K = 25, n = 1000, T = d * (d - 1) / 2;
  double *icf = malloc(sizeof(double) * T * K), *d_icf = calloc(T * K, sizeof(double));
  double xc[64], d_xc[64] = {0}, dQ[64], Q[64] = {0};
  for (int i = 0; i < T * K; i++) icf[i] = 0.001 * (i % 97);
  for (int i = 0; i < d; i++) { xc[i] = 0.1 * i; dQ[i] = 0.2 - 0.01 * i; }
  for (int mode = 0; mode < 2; mode++) {
    clock_t t0 = clock();
    for (int i = 0; i < n; i++)
      for (int k = 0; k < K; k++)
        if (mode) rev(d, icf + k * T, d_icf + k * T, xc, d_xc, dQ); else fwd(d, icf + k * T, xc, Q);
    double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("%s %.3f ms, %.2f ns/iter\n", mode ? "rev" : "fwd", s * 1e3, s * 1e9 / ((double)n * K * T));
  }
  printf("%g %g %g\n", d_icf[5], d_xc[3], Q[7]);
}
