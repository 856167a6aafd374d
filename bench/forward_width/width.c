/* Vector forward mode benchmark: the 8 partial derivatives of
 *   L(w) = sum_i tanh(w[i % 8] * x[i] + w[(i + 1) % 8]) * x[i]
 * with respect to the 8 weights, once as 8 width-1 __enzyme_fwddiff calls (one unit
 * direction each) and once as one width-8 call (enzyme_width 8, enzyme_dupv over the rows
 * of an identity matrix). Prints a checksum line (stdout) and "scalar_s vector_s"
 * best-of-N times (stderr); the two results are compared, and a mismatch exits 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_fwddiff(void *, ...);
typedef struct {
  double d[8];
} tangents8;
tangents8 __enzyme_fwddiff_w8(void *, ...);

#define K 8

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) double loss(const double *w, const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += tanh(w[i % K] * x[i] + w[(i + 1) % K]) * x[i];
  return s;
}

int main(void) {
  int n = 1 << 18, reps = 10;
  double *x = malloc(n * sizeof *x);
  for (int i = 0; i < n; i++)
    x[i] = (i % 11) * 0.1 - 0.5;
  double w[K], seed[K][K], scalar[K];
  for (int k = 0; k < K; k++) {
    w[k] = 0.05 * k - 0.2;
    for (int j = 0; j < K; j++)
      seed[k][j] = k == j;
  }
  tangents8 vec = {{0}};
  double best_scalar = 1e30, best_vector = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int k = 0; k < K; k++)
      scalar[k] = __enzyme_fwddiff((void *)loss, enzyme_dup, w, seed[k], enzyme_const, x,
                                   enzyme_const, n);
    double t1 = now();
    vec = __enzyme_fwddiff_w8((void *)loss, enzyme_width, 8, enzyme_dupv, sizeof(seed[0]), w,
                              seed, enzyme_const, x, enzyme_const, n);
    double t2 = now();
    if (t1 - t0 < best_scalar)
      best_scalar = t1 - t0;
    if (t2 - t1 < best_vector)
      best_vector = t2 - t1;
  }
  int bad = 0;
  double sum = 0.0;
  for (int k = 0; k < K; k++) {
    bad += fabs(vec.d[k] - scalar[k]) > 1e-12 * (1.0 + fabs(scalar[k]));
    sum += vec.d[k];
  }
  printf("checksum %.12g, %d mismatch(es)\n", sum, bad);
  fprintf(stderr, "%.6f %.6f\n", best_scalar, best_vector);
  free(x);
  return bad != 0;
}
