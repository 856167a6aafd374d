#include <math.h>
#include <stdlib.h>
#include "harness.h"
__attribute__((noinline)) double f(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += sin(x[i]) * exp(-x[i] * 0.1) + sqrt(x[i] + 1.0);
  return s;
}
int main(void) {
  int n = 1 << 18;
  double *x = malloc(n * sizeof *x);
  for (int i = 0; i < n; i++) x[i] = (i % 1000) * 0.003;
  double best = 1e9, s = 0;
  for (int r = 0; r < 10; r++) {
    double t = now(); s += f(x, n); t = now() - t; if (t < best) best = t;
  }
  printf("checksum %.6e\n", s);
  fprintf(stderr, "%.6f\n", best);
  return 0;
}
