/* Branches on the active value: each side has its own derivative. */
#include "enzyme.h"

__attribute__((noinline)) double f(double x) {
  double y;
  if (x > 1.0) {
    y = x * x;
  } else if (x > -1.0) {
    y = sin(x) + 2.0;
  } else {
    y = -3.0 * x;
  }
  return y * 2.0;
}

int main(void) {
  check("branch x>1", __enzyme_autodiff((void *)f, 2.5), 2.0 * 2.0 * 2.5, EXACT_TOL);
  check("branch -1<x<=1", __enzyme_autodiff((void *)f, 0.25), 2.0 * cos(0.25), EXACT_TOL);
  check("branch x<=-1", __enzyme_autodiff((void *)f, -4.0), -6.0, EXACT_TOL);
  return check_done();
}
