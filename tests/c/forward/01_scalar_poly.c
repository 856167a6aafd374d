/* A cubic polynomial: the tangent is p'(x) * dx, with the tangent passed after an unmarked
 * double (Enzyme's forward-mode default) and after an explicit enzyme_dup. */
#include "fwd.h"

double p(double x) { return x * x * x - 2.0 * x * x + 3.0 * x - 1.0; }

int main(void) {
  double xs[3] = {-1.5, 0.25, 2.0};
  for (int i = 0; i < 3; i++) {
    double x = xs[i];
    double want = 3.0 * x * x - 4.0 * x + 3.0;
    check("p'(x), unmarked", __enzyme_fwddiff((void *)p, x, 1.0), want, EXACT_TOL);
    check("p'(x) * 0.5, enzyme_dup", __enzyme_fwddiff((void *)p, enzyme_dup, x, 0.5),
          0.5 * want, EXACT_TOL);
  }
  return check_done();
}
