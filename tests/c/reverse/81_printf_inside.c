/* printf inside differentiated code, of active values: an output-only call, inactive
 * whatever its arguments; the derivative is unchanged and the lines are printed once per
 * forward run. */
#include "enzyme.h"

double f(double x, double y) {
  double a = x * y + sin(x);
  printf("trace: a = %g\n", a);
  double b = a * a - y;
  printf("trace: b = %g, y = %g\n", b, y);
  return b * x;
}

double dfdx(double x, double y) {
  double a = x * y + sin(x), da = y + cos(x);
  double b = a * a - y;
  return 2 * a * da * x + b;
}

int main(void) {
  double x = 0.8, y = -1.3;
  double dx = __enzyme_autodiff((void *)f, enzyme_out, x, enzyme_const, y);
  check("df/dx with printf inside", dx, dfdx(x, y), EXACT_TOL);
  return check_done();
}
