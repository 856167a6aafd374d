/* Gradient benchmark kernel: a least-squares loss over an array,
 *   L(w) = sum_i (w[i % K] * x[i] - y[i])^2,
 * timed as the primal alone and as its gradient through __enzyme_autodiff (w duplicated,
 * x and y constant). Prints a checksum line (stdout) and "primal_s gradient_s" best-of-N
 * times (stderr). The gradient is also checked against the analytic one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

#define K 8

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) double loss(const double *w, const double *x, const double *y, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double r = w[i % K] * x[i] - y[i];
    s += r * r;
  }
  return s;
}

/* Out of line and not static, so clang neither unrolls nor SLP-vectorizes it into the
 * <4 x i1> bitcasts adc's importer rejects. */
__attribute__((noinline)) int count_bad(const double *got, const double *want, int k) {
  int bad = 0;
#pragma clang loop vectorize(disable) interleave(disable)
  for (int i = 0; i < k; i++)
    bad += fabs(got[i] - want[i]) > 1e-9 * (1.0 + fabs(want[i]));
  return bad;
}

int main(void) {
  int n = 1 << 20, reps = 20;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double w[K], dw[K], want[K];
  for (int i = 0; i < n; i++) {
    x[i] = (i % 7) * 0.25 - 0.5;
    y[i] = (i % 5) * 0.1;
  }
  for (int k = 0; k < K; k++)
    w[k] = 0.1 * k;
  double best_primal = 1e9, best_grad = 1e9, sink = 0.0;
  for (int r = 0; r < reps; r++) {
    double t = now();
    sink += loss(w, x, y, n);
    t = now() - t;
    if (t < best_primal)
      best_primal = t;
  }
  for (int r = 0; r < reps; r++) {
    for (int k = 0; k < K; k++)
      dw[k] = 0.0;
    double t = now();
    __enzyme_autodiff((void *)loss, enzyme_dup, w, dw, enzyme_const, x, enzyme_const, y,
                      enzyme_const, n);
    t = now() - t;
    if (t < best_grad)
      best_grad = t;
  }
  for (int k = 0; k < K; k++)
    want[k] = 0.0;
  for (int i = 0; i < n; i++)
    want[i % K] += 2.0 * (w[i % K] * x[i] - y[i]) * x[i];
  int bad = count_bad(dw, want, K);
  printf("checksum %.6e gradient %s\n", sink, bad ? "WRONG" : "ok");
  fprintf(stderr, "%.6f %.6f\n", best_primal, best_grad);
  return bad != 0;
}
