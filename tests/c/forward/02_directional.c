/* Two inputs: the tangent is the directional derivative grad f . (dx, dy), checked against
 * the analytic gradient and against a central finite difference along the direction. */
#include "fwd.h"

double f(double x, double y) { return x * y + sin(x) * y * y - x / (1.0 + y * y); }

int main(void) {
  double x = 0.7, y = -1.3, dx = 0.6, dy = -0.8;
  double fx = y + cos(x) * y * y - 1.0 / (1.0 + y * y);
  double fy = x + 2.0 * sin(x) * y + 2.0 * x * y / ((1.0 + y * y) * (1.0 + y * y));
  double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy);
  check("directional derivative", t, fx * dx + fy * dy, EXACT_TOL);
  double h = FD_STEP;
  double fd = (f(x + h * dx, y + h * dy) - f(x - h * dx, y - h * dy)) / (2.0 * h);
  check("directional derivative vs FD", t, fd, FD_TOL);
  check("df/dx", __enzyme_fwddiff((void *)f, x, 1.0, y, 0.0), fx, EXACT_TOL);
  check("df/dy", __enzyme_fwddiff((void *)f, x, 0.0, y, 1.0), fy, EXACT_TOL);
  return check_done();
}
