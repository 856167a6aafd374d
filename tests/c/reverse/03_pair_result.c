/* Two active scalars: the adjoints come back as a struct of two doubles (returned in
 * registers as {double, double}). f(x, y) = x*y + x/y. */
#include "enzyme.h"

typedef struct { double dx, dy; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

double f(double x, double y) { return x * y + x / y; }

int main(void) {
  double x = 1.75, y = -0.5;
  Pair g = __enzyme_autodiff_pair((void *)f, enzyme_out, x, enzyme_out, y);
  check("df/dx", g.dx, y + 1.0 / y, EXACT_TOL);
  check("df/dy", g.dy, x - x / (y * y), EXACT_TOL);
  /* Without markers, doubles are active by default. */
  Pair h = __enzyme_autodiff_pair((void *)f, 3.0, 2.0);
  check("df/dx default", h.dx, 2.0 + 0.5, EXACT_TOL);
  check("df/dy default", h.dy, 3.0 - 3.0 / 4.0, EXACT_TOL);
  return check_done();
}
