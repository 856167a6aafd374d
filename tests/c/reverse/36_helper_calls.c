/* Calls to other (non-inlined) functions inside the differentiated one, including a
 * helper that writes through a pointer. f = h(g(x)) * x with g(x) = x^2 + 1,
 * h(y) = log(y); f' = log(x^2+1) + 2x^2/(x^2+1). */
#include "enzyme.h"

__attribute__((noinline)) static double g(double x) { return x * x + 1.0; }
__attribute__((noinline)) static void h(double y, double *out) { *out = log(y); }

double f(double x) {
  double t;
  h(g(x), &t);
  return t * x;
}

int main(void) {
  double x = 1.4;
  double want = log(x * x + 1.0) + 2.0 * x * x / (x * x + 1.0);
  check("d/dx x log(x^2+1)", __enzyme_autodiff((void *)f, x), want, 1e-12);
  return check_done();
}
