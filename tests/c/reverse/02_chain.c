/* A chain of libm calls: f(x) = sin(exp(x) * cos(x)), analytic derivative
 * f'(x) = cos(u) * (exp(x) cos(x) - exp(x) sin(x)), u = exp(x) cos(x). */
#include "enzyme.h"

double f(double x) { return sin(exp(x) * cos(x)); }

int main(void) {
  double xs[] = {-1.0, 0.0, 0.3, 1.2};
  for (int i = 0; i < 4; i++) {
    double x = xs[i];
    double u = exp(x) * cos(x);
    double want = cos(u) * (exp(x) * cos(x) - exp(x) * sin(x));
    check("d/dx sin(exp(x)cos(x))", __enzyme_autodiff((void *)f, x), want, 1e-12);
  }
  return check_done();
}
