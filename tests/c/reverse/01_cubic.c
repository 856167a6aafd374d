/* Scalar polynomial: f(x) = x^3 + 2x - 5, f'(x) = 3x^2 + 2 (analytic, exact). */
#include "enzyme.h"

double f(double x) { return x * x * x + 2.0 * x - 5.0; }

int main(void) {
  double xs[] = {0.0, 1.5, -2.25, 10.0};
  for (int i = 0; i < 4; i++) {
    double x = xs[i];
    double d = __enzyme_autodiff((void *)f, x);
    check("d/dx (x^3+2x-5)", d, 3.0 * x * x + 2.0, EXACT_TOL);
  }
  return check_done();
}
