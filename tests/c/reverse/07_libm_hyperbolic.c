/* Hyperbolic libm family: sinh cosh tanh asinh acosh atanh, analytic derivatives. */
#include "enzyme.h"

double f_sinh(double x) { return sinh(x); }
double f_cosh(double x) { return cosh(x); }
double f_tanh(double x) { return tanh(x); }
double f_asinh(double x) { return asinh(x); }
double f_acosh(double x) { return acosh(x); }
double f_atanh(double x) { return atanh(x); }

int main(void) {
  double x = 0.6;
  check("sinh'", __enzyme_autodiff((void *)f_sinh, x), cosh(x), 1e-12);
  check("cosh'", __enzyme_autodiff((void *)f_cosh, x), sinh(x), 1e-12);
  check("tanh'", __enzyme_autodiff((void *)f_tanh, x), 1.0 - tanh(x) * tanh(x), 1e-12);
  check("asinh'", __enzyme_autodiff((void *)f_asinh, x), 1.0 / sqrt(x * x + 1.0), 1e-12);
  double y = 1.8;
  check("acosh'", __enzyme_autodiff((void *)f_acosh, y), 1.0 / sqrt(y * y - 1.0), 1e-12);
  check("atanh'", __enzyme_autodiff((void *)f_atanh, x), 1.0 / (1.0 - x * x), 1e-12);
  return check_done();
}
