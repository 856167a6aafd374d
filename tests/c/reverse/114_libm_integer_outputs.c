/* libm functions that return a float and write an integer through a pointer: frexp's
 * exponent and lgamma_r's sign. The integer output carries no derivative; the result's
 * derivative is 2^-e (frexp) and digamma (lgamma_r). They used to be refused ("writes a
 * result through a pointer argument"). Checked against central differences, with the
 * integer outputs used by the caller. */
#include <math.h>

#include "enzyme.h"

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
    double x = xs[i];
    double d = __enzyme_autodiff((void *)f, x);
    double fd = (f(x + FD_STEP) - f(x - FD_STEP)) / (2 * FD_STEP);
    check("d/dx frexp(x) e + sign lgamma_r(x)", d, fd, FD_TOL);
  }
  return check_done();
}
