/* Arrays through pointers: the input shadow holds the input tangents, the output shadow
 * receives the output tangents (overwritten, not accumulated), and the result's tangent
 * is returned. */
#include "fwd.h"

double map_and_sum(const double *x, double *y, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    y[i] = x[i] * x[i] * sin(x[i]);
    s += y[i];
  }
  return s;
}

int main(void) {
  double x[4] = {0.3, -1.2, 2.0, 0.7}, dx[4] = {1.0, 0.5, -1.0, 2.0};
  double y[4], dy[4] = {99.0, 99.0, 99.0, 99.0};
  double ds = __enzyme_fwddiff((void *)map_and_sum, enzyme_dup, x, dx, enzyme_dup, y, dy, 4);
  double want_s = 0.0;
  for (int i = 0; i < 4; i++) {
    double d = (2.0 * x[i] * sin(x[i]) + x[i] * x[i] * cos(x[i])) * dx[i];
    check("dy[i]", dy[i], d, EXACT_TOL);
    check("primal y[i] written", y[i], x[i] * x[i] * sin(x[i]), EXACT_TOL);
    want_s += d;
  }
  check("d sum", ds, want_s, EXACT_TOL);
  return check_done();
}
