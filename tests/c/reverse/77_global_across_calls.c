/* A global that accumulates across calls: f(x) = (acc + x^2) * x with acc the value left
 * by earlier calls (a constant for the derivative). The gradient is taken three times:
 * an adjoint left in the shadow global by one call must not leak into the next. */
#include "enzyme.h"

double acc = 0.5;

double f(double x) {
  acc += x * x;
  return acc * x;
}

int main(void) {
  double x = 0.7;
  for (int round = 0; round < 3; round++) {
    double before = acc;
    double d = __enzyme_autodiff((void *)f, x);
    /* d/dx (before + x^2) x = before + 3 x^2; the call also updated acc. */
    check("df/dx", d, before + 3 * x * x, EXACT_TOL);
    check("acc after the gradient call", acc, before + x * x, EXACT_TOL);
  }
  return check_done();
}
