/* A switch on an integer (inactive) selects the formula of the active value. */
#include "enzyme.h"

double f(double x, int mode) {
  switch (mode) {
  case 0:
    return x * x;
  case 1:
    return exp(x);
  case 2:
  case 3:
    return x * (double)mode;
  default:
    return cos(x);
  }
}

int main(void) {
  double x = 0.8;
  check("mode 0", __enzyme_autodiff((void *)f, x, 0), 2.0 * x, EXACT_TOL);
  check("mode 1", __enzyme_autodiff((void *)f, x, 1), exp(x), EXACT_TOL);
  check("mode 2", __enzyme_autodiff((void *)f, x, 2), 2.0, EXACT_TOL);
  check("mode 3", __enzyme_autodiff((void *)f, x, enzyme_const, 3), 3.0, EXACT_TOL);
  check("mode 9", __enzyme_autodiff((void *)f, x, 9), -sin(x), EXACT_TOL);
  return check_done();
}
