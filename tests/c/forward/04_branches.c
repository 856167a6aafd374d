/* Branches: if/else chains, a ternary, fabs and fmax; the tangent follows the taken side. */
#include "fwd.h"

double piecewise(double x) {
  if (x < -1.0)
    return -x * x;
  else if (x < 1.0)
    return 2.0 * x + 1.0;
  return x * x * x;
}

double clamp_sq(double x, double lo) { return (x > lo ? x : lo) * fabs(x) + fmax(x, 0.5 * x); }

int main(void) {
  check("piecewise' at -2", __enzyme_fwddiff((void *)piecewise, -2.0, 1.0), 4.0, EXACT_TOL);
  check("piecewise' at 0.3", __enzyme_fwddiff((void *)piecewise, 0.3, 1.0), 2.0, EXACT_TOL);
  check("piecewise' at 1.5", __enzyme_fwddiff((void *)piecewise, 1.5, 1.0), 3.0 * 1.5 * 1.5,
        EXACT_TOL);
  double lo = 0.2;
  /* x = 1.1 > lo: x * |x| + x -> 2x + 1. */
  check("clamp_sq' above", __enzyme_fwddiff((void *)clamp_sq, 1.1, 1.0, enzyme_const, lo),
        2.0 * 1.1 + 1.0, EXACT_TOL);
  /* x = -0.4 < lo: lo * |x| + 0.5 x -> -lo + 0.5. */
  check("clamp_sq' below", __enzyme_fwddiff((void *)clamp_sq, -0.4, 1.0, enzyme_const, lo),
        -lo + 0.5, EXACT_TOL);
  return check_done();
}
