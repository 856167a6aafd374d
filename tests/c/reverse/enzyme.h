/* Shared by the reverse-mode end-to-end programs: Enzyme's C API declarations and a
 * checker that prints one line per comparison and counts mismatches. Each program's main
 * returns check_done(), non-zero when any check failed. */
#ifndef ADC_REVERSE_ENZYME_H
#define ADC_REVERSE_ENZYME_H

#include <math.h>
#include <stdio.h>

extern int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);

static int check_failures;

/* |got - want| <= tol * max(1, |want|); a NaN never passes. */
static void check(const char *what, double got, double want, double tol) {
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  int ok = fabs(got - want) <= tol * scale;
  printf("%s %s: got %.12g want %.12g (tol %g)\n", ok ? "ok  " : "FAIL", what, got, want, tol);
  if (!ok)
    check_failures++;
}

static int check_done(void) {
  printf("%d check(s) failed\n", check_failures);
  return check_failures != 0;
}

/* Central finite-difference step and the tolerance its error allows. */
#define FD_STEP 1e-6
#define FD_TOL 1e-6
#define EXACT_TOL 1e-12

/* Checks each dx[j] against the central finite difference of f at x (n <= 64). */
static inline void check_fd_gradient(double (*f)(const double *, int), const double *x,
                                     const double *dx, int n) {
  double xp[64], xm[64];
  if (n > 64) {
    check("check_fd_gradient takes at most 64 entries", n, 64, 0.0);
    return;
  }
  for (int j = 0; j < n; j++) {
    for (int k = 0; k < n; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    check("df/dx_j", dx[j], (f(xp, n) - f(xm, n)) / (2 * FD_STEP), FD_TOL);
  }
}

#endif
