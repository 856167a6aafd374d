/* Integer powers: pow with an integral exponent, a repeated-multiplication loop and
 * powi-style code at -O2. f(x) = pow(x, 3) + x^5 (loop) ; f' = 3x^2 + 5x^4. */
#include "enzyme.h"

double f(double x, int e) {
  double r = 1.0;
  for (int i = 0; i < e; i++)
    r *= x;
  return pow(x, 3.0) + r;
}

int main(void) {
  double xs[] = {-1.5, 0.5, 2.0};
  for (int i = 0; i < 3; i++) {
    double x = xs[i];
    check("d/dx x^3 + x^5", __enzyme_autodiff((void *)f, x, 5),
          3.0 * x * x + 5.0 * x * x * x * x, 1e-12);
  }
  return check_done();
}
