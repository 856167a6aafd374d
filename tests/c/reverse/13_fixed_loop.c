/* A loop with a compile-time trip count: repeated squaring-and-scaling.
 * y_{k+1} = 0.5 * y_k * y_k + x, y_0 = x, 8 steps; the derivative follows the same
 * recurrence dy_{k+1} = y_k dy_k + 1, computed alongside in main. */
#include "enzyme.h"

double f(double x) {
  double y = x;
  for (int k = 0; k < 8; k++)
    y = 0.5 * y * y * 0.25 + x;
  return y;
}

int main(void) {
  double x = 0.9;
  double y = x, dy = 1.0;
  for (int k = 0; k < 8; k++) {
    dy = 0.25 * y * dy + 1.0;
    y = 0.5 * y * y * 0.25 + x;
  }
  check("8-step recurrence", __enzyme_autodiff((void *)f, x), dy, 1e-12);
  return check_done();
}
