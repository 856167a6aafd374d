/* Tape memory kept across calls: the gradients of two functions whose taped values live in
 * heap tapes sized from n on entry are called again and again with growing and shrinking
 * sizes, interleaved, so each call reuses (or outgrows, then replaces) the buffer an
 * earlier call gave back to its allocation site. Every gradient is checked against central
 * finite differences on copies of the input (one line per call: the worst entry). */
#include <stdlib.h>

#include "enzyme.h"

/* x[i] is overwritten while the sum runs: the reverse pass needs the taped old values. */
__attribute__((noinline)) double overwrite_sum(double *x, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++) {
    double a = x[i];
    x[i] = 0.5 * a;
    s += sin(a) * a;
  }
  return s;
}

/* Two loop nests (two allocation sites), the first one two loops deep. */
__attribute__((noinline)) double two_nests(double *x, long n, long m) {
  double s = 0.0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) {
      double a = x[i * m + j];
      x[i * m + j] = cos(a);
      s += a * a * a;
    }
  for (long k = 0; k < n * m; k++) {
    double b = x[k];
    x[k] = 0.0;
    s += exp(0.25 * b) * b;
  }
  return s;
}

static double input(long i) { return 0.3 + 0.7 * sin(1.7 * (double)i + 0.4); }

/* The worst |dx - fd| / max(1, |fd|) over every entry, checked once. */
static void check_against_fd(const char *what, long n, const double *dx,
                             double (*eval)(const double *, long, long), long a, long b) {
  double *p = malloc(n * sizeof(double));
  double worst = 0.0, worst_got = 0.0, worst_want = 0.0;
  for (long i = 0; i < n; i++) {
    for (long k = 0; k < n; k++)
      p[k] = input(k);
    p[i] += FD_STEP;
    double up = eval(p, a, b);
    for (long k = 0; k < n; k++)
      p[k] = input(k);
    p[i] -= FD_STEP;
    double fd = (up - eval(p, a, b)) / (2.0 * FD_STEP);
    double scale = fabs(fd) > 1.0 ? fabs(fd) : 1.0;
    double err = fabs(dx[i] - fd) / scale;
    if (!(err <= worst)) {
      worst = err;
      worst_got = dx[i];
      worst_want = fd;
    }
  }
  free(p);
  printf("%s, n = %ld: worst entry got %.12g want %.12g\n", what, n, worst_got, worst_want);
  check(what, worst, 0.0, FD_TOL);
}

static double eval_overwrite_sum(const double *x, long n, long unused) {
  (void)unused;
  double *c = malloc(n * sizeof(double));
  for (long i = 0; i < n; i++)
    c[i] = x[i];
  double s = overwrite_sum(c, n);
  free(c);
  return s;
}

static double eval_two_nests(const double *x, long n, long m) {
  double *c = malloc(n * m * sizeof(double));
  for (long i = 0; i < n * m; i++)
    c[i] = x[i];
  double s = two_nests(c, n, m);
  free(c);
  return s;
}

static void gradient_overwrite_sum(long n) {
  double *x = malloc(n * sizeof(double)), *dx = malloc(n * sizeof(double));
  for (long i = 0; i < n; i++) {
    x[i] = input(i);
    dx[i] = 0.0;
  }
  __enzyme_autodiff((void *)overwrite_sum, enzyme_dup, x, dx, enzyme_const, n);
  check_against_fd("overwrite_sum gradient vs central differences", n, dx,
                   eval_overwrite_sum, n, 0);
  free(x);
  free(dx);
}

static void gradient_two_nests(long n, long m) {
  double *x = malloc(n * m * sizeof(double)), *dx = malloc(n * m * sizeof(double));
  for (long i = 0; i < n * m; i++) {
    x[i] = input(i);
    dx[i] = 0.0;
  }
  __enzyme_autodiff((void *)two_nests, enzyme_dup, x, dx, enzyme_const, n, enzyme_const, m);
  check_against_fd("two_nests gradient vs central differences", n * m, dx, eval_two_nests,
                   n, m);
  free(x);
  free(dx);
}

int main(void) {
  /* Grows past the kept buffer, shrinks into it, grows by less than its spare room. */
  static const long sizes[] = {5, 60, 3, 300, 17, 300, 1, 310, 0, 8};
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    gradient_overwrite_sum(sizes[k]);
    gradient_two_nests(sizes[k] % 13 + 1, sizes[k] % 7 + 2);
  }
  return check_done();
}
