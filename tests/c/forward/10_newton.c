/* A Newton iteration for the cube root, x <- x - (x^3 - a) / (3 x^2), run to convergence
 * with a data-dependent exit: the tangent of the converged root with respect to a is
 * 1 / (3 a^(2/3)) (implicit function theorem). */
#include "fwd.h"

double cbrt_newton(double a) {
  double x = a > 1.0 ? a : 1.0;
  for (int it = 0; it < 100; it++) {
    double step = (x * x * x - a) / (3.0 * x * x);
    x -= step;
    if (fabs(step) < 1e-15 * fabs(x))
      break;
  }
  return x;
}

int main(void) {
  double as[3] = {2.0, 27.0, 0.5};
  for (int i = 0; i < 3; i++) {
    double a = as[i];
    double r = cbrt(a);
    check("root", cbrt_newton(a), r, 1e-12);
    check("d root / da", __enzyme_fwddiff((void *)cbrt_newton, a, 1.0), 1.0 / (3.0 * r * r),
          1e-9);
  }
  return check_done();
}
