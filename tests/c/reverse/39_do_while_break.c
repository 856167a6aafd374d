/* A do-while loop with break and continue on integer conditions:
 * f(x) = sum over k in 0..19, k%3 != 0, stopping after k == 13, of x^2 * k. */
#include "enzyme.h"

double f(double x) {
  double s = 0.0;
  int k = 0;
  do {
    if (k % 3 == 0) {
      k++;
      continue;
    }
    s += x * x * k;
    if (k == 13)
      break;
    k++;
  } while (k < 20);
  return s;
}

int main(void) {
  double x = 0.75, weight = 0.0;
  for (int k = 0; k <= 13; k++)
    if (k % 3 != 0)
      weight += k;
  check("d/dx", __enzyme_autodiff((void *)f, x), 2.0 * x * weight, 1e-12);
  return check_done();
}
