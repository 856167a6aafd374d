/* Vector forward mode through calls: width 4 over a function that calls a non-inlined
 * helper (whose forward derivative is synthesized at width 4 too) and a recursive one;
 * every lane against a width-1 call. */
#include "fwd.h"

__attribute__((noinline)) static double bump(double a, double b) { return exp(-a * a) * b + a * b; }

__attribute__((noinline)) double chain(double x, int n) {
  if (n == 0)
    return x;
  return sin(chain(x, n - 1)) + 0.5 * x;
}

double f(double x, double y) { return bump(x, y) * chain(x * y, 3) + bump(y, 2.0); }

int main(void) {
  double x = 0.7, y = -0.4;
  double dxs[4] = {1.0, 0.0, 0.3, -2.0}, dys[4] = {0.0, 1.0, 0.7, 0.5};
  tangents4 t = __enzyme_fwddiff_w4((void *)f, enzyme_width, 4, x, dxs[0], dxs[1], dxs[2],
                                    dxs[3], y, dys[0], dys[1], dys[2], dys[3]);
  for (int k = 0; k < 4; k++) {
    double one = __enzyme_fwddiff((void *)f, x, dxs[k], y, dys[k]);
    check("lane vs scalar call", t.d[k], one, EXACT_TOL);
  }
  double e = FD_STEP;
  check("lane 0 vs FD", t.d[0], (f(x + e, y) - f(x - e, y)) / (2.0 * e), FD_TOL);
  return check_done();
}
