/* Mutual recursion: even_part and odd_part call each other with n - 1, each applying a
 * different nonlinear map to the running value. Gradient against finite differences. */
#include "enzyme.h"

typedef struct { double dx, dw; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

__attribute__((noinline)) double odd_part(double x, double w, int n);

__attribute__((noinline)) double even_part(double x, double w, int n) {
  if (n <= 0)
    return x;
  return odd_part(sin(x) * w + x, w, n - 1) + 0.1 * x;
}

__attribute__((noinline)) double odd_part(double x, double w, int n) {
  if (n <= 0)
    return x * x;
  return even_part(x * w - 0.3 * x * x, w, n - 1);
}

double f(double x, double w) { return even_part(x, w, 7); }

int main(void) {
  double x = 0.4, w = 0.8, h = FD_STEP;
  Pair g = __enzyme_autodiff_pair((void *)f, x, w);
  check("df/dx", g.dx, (f(x + h, w) - f(x - h, w)) / (2 * h), FD_TOL);
  check("df/dw", g.dw, (f(x, w + h) - f(x, w - h)) / (2 * h), FD_TOL);
  return check_done();
}
