/* A non-inlined call whose result is used several times (in the result and as the
 * argument of a second call): the split function's result adjoint collects every use.
 * f(x, y) = s + s*y + sq(s) with s = sq(x) + y (sq kept out of line). */
#include "enzyme.h"

typedef struct { double dx, dy; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

__attribute__((noinline)) double sq_plus(double a, double b) { return a * a + b; }

double f(double x, double y) {
  double s = sq_plus(x, y);
  return s + s * y + sq_plus(s, 0.5 * x);
}

int main(void) {
  double x = 0.7, y = -1.3, h = FD_STEP;
  Pair g = __enzyme_autodiff_pair((void *)f, x, y);
  check("df/dx", g.dx, (f(x + h, y) - f(x - h, y)) / (2 * h), FD_TOL);
  check("df/dy", g.dy, (f(x, y + h) - f(x, y - h)) / (2 * h), FD_TOL);
  /* Analytic: s = x^2 + y; f = s + s y + s^2 + x/2. */
  double s = x * x + y;
  check("df/dx analytic", g.dx, 2 * x * (1 + y + 2 * s) + 0.5, 1e-10);
  check("df/dy analytic", g.dy, 1 + y + s + 2 * s, 1e-10);
  return check_done();
}
