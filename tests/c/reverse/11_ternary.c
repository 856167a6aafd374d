/* Ternaries (selects at -O2): smooth-abs and clamp built from ?: expressions. */
#include "enzyme.h"

double clamp_sq(double x, double lo, double hi) {
  double c = x < lo ? lo : (x > hi ? hi : x);
  return c * c + (x > 0.0 ? x : -x);
}

int main(void) {
  /* Inside the range: d/dx = 2x + sign(x); lo and hi are constant. */
  double lo = -1.0, hi = 2.0;
  check("inside", __enzyme_autodiff((void *)clamp_sq, 1.5, enzyme_const, lo, enzyme_const, hi),
        3.0 + 1.0, EXACT_TOL);
  check("below", __enzyme_autodiff((void *)clamp_sq, -3.0, enzyme_const, lo, enzyme_const, hi),
        -1.0, EXACT_TOL);
  check("above", __enzyme_autodiff((void *)clamp_sq, 5.0, enzyme_const, lo, enzyme_const, hi),
        1.0, EXACT_TOL);
  return check_done();
}
