/* Reverse over reverse where the inner derivative's tape grows: the series runs until its
 * terms fall below a tolerance, so no trip count is known on entry and the first
 * derivative pushes through `__adc_tape_push`, whose `realloc` the second derivative then
 * differentiates (its shadow tape grows with it). Before, adc refused that `realloc` as
 * one of memory allocated elsewhere (Enzyme's ReverseMode/mycos needs it). */
#include <math.h>

#include "enzyme.h"

/* exp(x) = sum x^k / k!, summed until the terms stop mattering. */
double series_exp(double x) {
  double sum = 1, term = 1;
  for (int k = 1; fabs(term) > 1e-17 * fabs(sum); k++) {
    term *= x / k;
    sum += term;
  }
  return sum;
}

double d_series_exp(double x) { return __enzyme_autodiff((void *)series_exp, x); }

double dd_series_exp(double x) { return __enzyme_autodiff((void *)d_series_exp, x); }

double ddd_series_exp(double x) { return __enzyme_autodiff((void *)dd_series_exp, x); }

int main(void) {
  for (double x = -1.5; x <= 2.5; x += 1.0) {
    char what[64];
    snprintf(what, sizeof what, "d/dx at %g", x);
    check(what, d_series_exp(x), exp(x), 1e-12);
    snprintf(what, sizeof what, "d2/dx2 at %g", x);
    check(what, dd_series_exp(x), exp(x), 1e-12);
    snprintf(what, sizeof what, "d3/dx3 at %g", x);
    check(what, ddd_series_exp(x), exp(x), 1e-12);
  }
  return check_done();
}
