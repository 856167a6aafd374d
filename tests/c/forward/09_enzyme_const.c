/* enzyme_const on a double (no tangent passed) and on a pointer (no shadow passed): the
 * tangent only sees the duplicated arguments. */
#include "fwd.h"

double f(double a, double b, const double *w, double c) {
  double s = 0.0;
  for (int i = 0; i < 3; i++)
    s += w[i] * w[i];
  return a * b * s + c * c * b;
}

int main(void) {
  double w[3] = {0.5, 1.5, -1.0};
  double a = 2.0, b = 3.0, c = -0.5, s = 0.25 + 2.25 + 1.0;
  check("df/da", __enzyme_fwddiff((void *)f, a, 1.0, enzyme_const, b, enzyme_const, w,
                                  enzyme_const, c),
        b * s, EXACT_TOL);
  check("df/db", __enzyme_fwddiff((void *)f, enzyme_const, a, b, 1.0, enzyme_const, w,
                                  enzyme_const, c),
        a * s + c * c, EXACT_TOL);
  double dw[3] = {1.0, 0.0, 0.0};
  check("df/dw0", __enzyme_fwddiff((void *)f, enzyme_const, a, enzyme_const, b, w, dw,
                                   enzyme_const, c),
        a * b * 2.0 * w[0], EXACT_TOL);
  return check_done();
}
