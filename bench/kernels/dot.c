#include <stdlib.h>
#include "harness.h"
__attribute__((noinline)) double dot(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
int main(void) {
  int n = 1 << 20;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = (i % 7) * 0.5; b[i] = (i % 11) * 0.25; }
  double best = 1e9, s = 0;
  for (int r = 0; r < 30; r++) {
    double t = now(); s += dot(a, b, n); t = now() - t; if (t < best) best = t;
  }
  printf("checksum %.6e\n", s);
  fprintf(stderr, "%.6f\n", best);
  return 0;
}
