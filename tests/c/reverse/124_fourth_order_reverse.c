/* Reverse over reverse over reverse over reverse (Enzyme's ReverseMode/mycos, reduced).
 * Each level inlines the derivative below it before differentiating it; that inlined code
 * is raw synthesis output, with tape offsets and shadow addresses computed inside its
 * loops. Differentiated as it was, the second level taped them per iteration beside the
 * doubles, and the third could not tell those record fields apart ("cannot deduce the
 * type of the copied bytes ... Float@double vs Pointer"). Presized tapes kept across calls
 * (`__adc_tape_take` from a global slot) were refused as a pointer held in a global.
 * Both are gone once the inlined code is cleaned up and its kept tapes become plain
 * `malloc`/`free` (enzyme_api/nesting.rs). Derivatives that are differentiated again
 * keep active floats, pointers and other values in separate tapes (`tapes-by-kind`):
 * before, a `pow` exponent taped beside active values counted as active at the next
 * level, and its zero adjoint times log(x) made the third derivative NaN at x < 0
 * (--ad-before-opt, -cache-ivs), and cosh's growing tape was refused at -O2. */
#include <math.h>

#include "enzyme.h"

unsigned long long __enzyme_iter(unsigned long long, unsigned long long);

/* Recursive, so never inlined: the loop keeps a call next to the active `pow`. */
__attribute__((noinline)) unsigned long long factorial(unsigned long long n) {
  return n == 0 ? 1 : n * factorial(n - 1);
}

/* The sine series to degree 12 in every derivative (`__enzyme_iter` raises the bound by
 * one per level), with `i <= n`: an unsigned inclusive bound. */
double series_sin(double x) {
  double sum = 0;
  unsigned long long n = __enzyme_iter(12, 1);
  for (unsigned long long i = 0; i <= n; i++) {
    if (i % 2 == 0)
      continue;
    sum += pow(x, i) / factorial(i) * (i % 4 == 1 ? 1 : -1);
  }
  return sum;
}

/* The cosine series with a strict bound and a unit step, whose trip count is known on
 * entry: the first level's tape is presized (and kept across calls). */
double series_cos(double x) {
  double sum = 0;
  unsigned long long n = __enzyme_iter(14, 1);
  for (unsigned long long i = 0; i < n; i++) {
    if (i % 2 == 1)
      continue;
    sum += pow(x, i) / factorial(i) * (i % 4 == 0 ? 1 : -1);
  }
  return sum;
}

/* cosh with a step of two against a run-time bound: no trip count without `nuw`, so
 * the first level's tape grows (at -O2), and the second level's records would mix
 * doubles with the pointers of that buffer. */
double series_cosh(double x) {
  double sum = 0;
  unsigned long long n = __enzyme_iter(14, 1);
  for (unsigned long long i = 0; i < n; i += 2)
    sum += pow(x, i) / factorial(i);
  return sum;
}

double d_sin(double x) { return __enzyme_autodiff((void *)series_sin, x); }
double dd_sin(double x) { return __enzyme_autodiff((void *)d_sin, x); }
double ddd_sin(double x) { return __enzyme_autodiff((void *)dd_sin, x); }
double dddd_sin(double x) { return __enzyme_autodiff((void *)ddd_sin, x); }

double d_cos(double x) { return __enzyme_autodiff((void *)series_cos, x); }
double dd_cos(double x) { return __enzyme_autodiff((void *)d_cos, x); }
double ddd_cos(double x) { return __enzyme_autodiff((void *)dd_cos, x); }
double dddd_cos(double x) { return __enzyme_autodiff((void *)ddd_cos, x); }

double d_cosh(double x) { return __enzyme_autodiff((void *)series_cosh, x); }
double dd_cosh(double x) { return __enzyme_autodiff((void *)d_cosh, x); }
double ddd_cosh(double x) { return __enzyme_autodiff((void *)dd_cosh, x); }
double dddd_cosh(double x) { return __enzyme_autodiff((void *)ddd_cosh, x); }

int main(void) {
  for (double x = -1.25; x <= 1.5; x += 0.75) {
    char what[64];
    snprintf(what, sizeof what, "sin' at %g", x);
    check(what, d_sin(x), cos(x), 1e-7);
    snprintf(what, sizeof what, "sin'' at %g", x);
    check(what, dd_sin(x), -sin(x), 1e-7);
    snprintf(what, sizeof what, "sin''' at %g", x);
    check(what, ddd_sin(x), -cos(x), 1e-7);
    snprintf(what, sizeof what, "sin'''' at %g", x);
    check(what, dddd_sin(x), sin(x), 1e-7);
    snprintf(what, sizeof what, "cos' at %g", x);
    check(what, d_cos(x), -sin(x), 1e-7);
    snprintf(what, sizeof what, "cos'' at %g", x);
    check(what, dd_cos(x), -cos(x), 1e-7);
    snprintf(what, sizeof what, "cos''' at %g", x);
    check(what, ddd_cos(x), sin(x), 1e-7);
    snprintf(what, sizeof what, "cos'''' at %g", x);
    check(what, dddd_cos(x), cos(x), 1e-7);
    snprintf(what, sizeof what, "cosh' at %g", x);
    check(what, d_cosh(x), sinh(x), 1e-7);
    snprintf(what, sizeof what, "cosh'' at %g", x);
    check(what, dd_cosh(x), cosh(x), 1e-7);
    snprintf(what, sizeof what, "cosh''' at %g", x);
    check(what, ddd_cosh(x), sinh(x), 1e-7);
    snprintf(what, sizeof what, "cosh'''' at %g", x);
    check(what, dddd_cosh(x), cosh(x), 1e-7);
    /* A second call reuses what the first kept. */
    snprintf(what, sizeof what, "cos'''' again at %g", x);
    check(what, dddd_cos(x), cos(x), 1e-7);
  }
  return check_done();
}
