/* Forward mode through calls that stay calls: noinline helpers taking values and
 * pointers, called several times with different activity (one call has a constant
 * operand, one an active one), checked against central finite differences. */
#include "fwd.h"

__attribute__((noinline)) static double poly(double a, double b) { return a * a * b + sin(b); }

__attribute__((noinline)) static double dot3(const double *u, const double *v) {
  return u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
}

__attribute__((noinline)) static void scale3(double *u, double s) {
  for (int i = 0; i < 3; i++)
    u[i] *= s;
}

double f(double x, double *w) {
  double p = poly(x, 2.0);     /* constant second operand */
  double q = poly(1.5, x * x); /* constant first operand */
  double tmp[3] = {x, p, q};
  scale3(tmp, w[0]);
  return dot3(tmp, w) + q;
}

int main(void) {
  double x = 0.8, w[3] = {1.2, -0.4, 0.7}, dw[3] = {0.3, 0.1, -0.2};
  double dx = 1.0;
  double got = __enzyme_fwddiff((void *)f, x, dx, w, dw);
  double e = FD_STEP;
  double wp[3], wm[3];
  for (int i = 0; i < 3; i++) {
    wp[i] = w[i] + e * dw[i];
    wm[i] = w[i] - e * dw[i];
  }
  double fd = (f(x + e, wp) - f(x - e, wm)) / (2.0 * e);
  check("df along (dx, dw) vs FD", got, fd, FD_TOL);
  double only_x = __enzyme_fwddiff((void *)f, x, 1.0, enzyme_const, w);
  check("df/dx vs FD", only_x, (f(x + e, w) - f(x - e, w)) / (2.0 * e), FD_TOL);
  return check_done();
}
