/* A function returning a struct of two doubles: the call returns both tangents in the
 * caller's declared struct. */
#include "fwd.h"

typedef struct {
  double re, im;
} Complex;

Complex __enzyme_fwddiff_c(void *, ...);

/* exp(i * theta) * r, as a (re, im) pair. */
Complex polar(double r, double theta) {
  Complex z = {r * cos(theta), r * sin(theta)};
  return z;
}

int main(void) {
  double r = 1.5, th = 0.8;
  Complex dz = __enzyme_fwddiff_c((void *)polar, r, 0.0, th, 1.0);
  check("d re / d theta", dz.re, -r * sin(th), EXACT_TOL);
  check("d im / d theta", dz.im, r * cos(th), EXACT_TOL);
  dz = __enzyme_fwddiff_c((void *)polar, r, 1.0, enzyme_const, th);
  check("d re / d r", dz.re, cos(th), EXACT_TOL);
  check("d im / d r", dz.im, sin(th), EXACT_TOL);
  return check_done();
}
