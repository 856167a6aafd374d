/* Self recursion: x^n by squaring, recursing on n/2, with a float multiplier c applied at
 * every level so the value depends on a second active argument: power(x, 13, c) =
 * c^15 x^13. d/dx and d/dc against finite differences and the analytic derivatives. */
#include "enzyme.h"

typedef struct { double dx, dc; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

__attribute__((noinline)) double power(double x, int n, double c) {
  if (n == 0)
    return 1.0;
  double half = power(x, n / 2, c);
  double sq = half * half;
  return c * ((n % 2) ? sq * x : sq);
}

double f(double x, double c) { return power(x, 13, c); }

int main(void) {
  double x = 1.1, c = 0.9, h = FD_STEP;
  Pair g = __enzyme_autodiff_pair((void *)f, x, c);
  check("df/dx", g.dx, (f(x + h, c) - f(x - h, c)) / (2 * h), FD_TOL);
  check("df/dc", g.dc, (f(x, c + h) - f(x, c - h)) / (2 * h), FD_TOL);
  /* power(x, n, c) = c^e(n) x^n with e(0) = 0, e(n) = 2 e(n/2) + 1: e(13) = 15. */
  double value = pow(c, 15) * pow(x, 13);
  check("df/dx analytic", g.dx, 13 * value / x, 1e-10);
  check("df/dc analytic", g.dc, 15 * value / c, 1e-10);
  return check_done();
}
