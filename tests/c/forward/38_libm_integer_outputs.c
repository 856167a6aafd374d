/* Forward mode of libm functions that write an integer through a pointer (frexp's
 * exponent, lgamma_r's sign): the tangent of the result is 2^-e dx and digamma(x) dx. */
#include <math.h>

#include "fwd.h"

double lgamma_r(double, int *);

double f(double x) {
  int e, sign;
  double m = frexp(x, &e);
  double l = lgamma_r(x, &sign);
  return m * (double)e + sign * l;
}

int main(void) {
  double xs[] = {0.9, 1.2, 2.3, 33.0, -0.26, -2.5};
  for (int i = 0; i < 6; i++) {
    double x = xs[i], dx = 0.75;
    double t = __enzyme_fwddiff((void *)f, x, dx);
    double fd = (f(x + FD_STEP) - f(x - FD_STEP)) / (2 * FD_STEP);
    check("tangent of frexp(x) e + sign lgamma_r(x)", t, fd * dx, FD_TOL);
  }
  return check_done();
}
