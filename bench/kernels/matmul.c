#include <stdlib.h>
#include "harness.h"
#define N 256
__attribute__((noinline)) void matmul(const double *a, const double *b, double *c) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) c[i * N + j] = 0.0;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++) {
      double x = a[i * N + k];
      for (int j = 0; j < N; j++) c[i * N + j] += x * b[k * N + j];
    }
}
int main(void) {
  double *a = malloc(N * N * sizeof *a), *b = malloc(N * N * sizeof *b), *c = malloc(N * N * sizeof *c);
  for (int i = 0; i < N * N; i++) { a[i] = (i % 13) * 0.1; b[i] = (i % 17) * 0.2; }
  double best = 1e9, s = 0;
  for (int r = 0; r < 5; r++) {
    double t = now(); matmul(a, b, c); t = now() - t; if (t < best) best = t;
    s += c[r * 31];
  }
  printf("checksum %.6e\n", s);
  fprintf(stderr, "%.6f\n", best);
  return 0;
}
