/* A Newton iteration with the residual and its derivative in separate functions: the
 * root r(a) of x^3 + a x - 1 = 0. The tangent dr/da is checked against the implicit
 * function theorem, dr/da = -r / (3 r^2 + a). */
#include "fwd.h"

__attribute__((noinline)) static double residual(double x, double a) { return x * x * x + a * x - 1.0; }

__attribute__((noinline)) static double slope(double x, double a) { return 3.0 * x * x + a; }

double root(double a) {
  double x = 1.0;
  for (int i = 0; i < 30; i++)
    x = x - residual(x, a) / slope(x, a);
  return x;
}

int main(void) {
  double a = 0.7;
  double r = root(a);
  double got = __enzyme_fwddiff((void *)root, a, 1.0);
  check("residual at the root", residual(r, a), 0.0, 1e-12);
  check("dr/da vs implicit", got, -r / (3.0 * r * r + a), 1e-10);
  return check_done();
}
