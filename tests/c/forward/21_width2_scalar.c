/* Vector forward mode, width 2, on scalar arguments (Enzyme's own first vector test):
 * enzyme_width 2 and two tangents after each value give both partial derivatives in one
 * call, checked against two width-1 calls and the analytic gradient. */
#include "fwd.h"

double fun(double x1, double x2) {
  double w3 = x1 * x2;
  double w4 = 1.0 / x1;
  return w3 + w4 + sin(x1 * x2);
}

int main(void) {
  for (int i = 1; i < 5; i++) {
    double x = (double)i, y = x * x;
    tangents2 t = __enzyme_fwddiff_w2((void *)fun, enzyme_width, 2, x, 1.0, 0.0, y, 0.0, 1.0);
    double dx = __enzyme_fwddiff((void *)fun, x, 1.0, y, 0.0);
    double dy = __enzyme_fwddiff((void *)fun, x, 0.0, y, 1.0);
    check("lane 0 vs scalar call", t.d[0], dx, EXACT_TOL);
    check("lane 1 vs scalar call", t.d[1], dy, EXACT_TOL);
    check("lane 0 vs analytic", t.d[0], y - 1.0 / (x * x) + y * cos(x * y), 1e-12);
    check("lane 1 vs analytic", t.d[1], x + x * cos(x * y), 1e-12);
  }
  return check_done();
}
