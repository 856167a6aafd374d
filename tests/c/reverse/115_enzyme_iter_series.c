/* `__enzyme_iter(n, step)` (Enzyme's API): an integer raised by `step` in every
 * derivative's copy of the code, and `n` in the primal. A truncated series then keeps its
 * degree under differentiation: the primal sums x^0..x^3, its derivative runs the loop to
 * 4 (d/dx of x^0..x^4), and a tangent of that derivative (forward over reverse) to 5.
 * Before, adc left the call to the undefined `__enzyme_iter` (a link error). */
#include <math.h>

#include "enzyme.h"

unsigned long long __enzyme_iter(unsigned long long, unsigned long long);
double __enzyme_fwddiff(void *, ...);

double series(double x) {
  double r = 0;
  unsigned long long n = __enzyme_iter(3, 1);
  for (unsigned long long i = 0; i <= n; i++)
    r += pow(x, (double)i);
  return r;
}

double dseries(double x) { return __enzyme_autodiff((void *)series, x); }

double ddseries(double x) { return __enzyme_fwddiff((void *)dseries, x, 1.0); }

int main(void) {
  double x = 0.75;
  check("primal: degree 3", series(x), 1 + x + x * x + x * x * x, 1e-12);
  check("derivative: d/dx of degree 4", dseries(x), 1 + 2 * x + 3 * x * x + 4 * x * x * x,
        1e-12);
  check("forward over reverse: d2/dx2 of degree 5", ddseries(x),
        2 + 6 * x + 12 * x * x + 20 * x * x * x, 1e-12);
  return check_done();
}
