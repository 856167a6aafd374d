/* A while loop whose exit depends on active data: s grows by x*x until it passes a
 * threshold, so s = k x^2 with k fixed near x, and ds/dx = 2 k x. */
#include "enzyme.h"

double f(double x) {
  double s = 0.0;
  int k = 0;
  while (s < 10.0) {
    s += x * x;
    k++;
  }
  return s + 0.0 * k;
}

int main(void) {
  double xs[] = {0.45, 1.1, 2.0};
  for (int i = 0; i < 3; i++) {
    double x = xs[i], s = 0.0;
    int k = 0;
    while (s < 10.0) {
      s += x * x;
      k++;
    }
    check("ds/dx = 2kx", __enzyme_autodiff((void *)f, x), 2.0 * k * x, 1e-12);
  }
  return check_done();
}
