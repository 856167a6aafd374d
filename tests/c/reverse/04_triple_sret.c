/* Three active scalars: a struct of three doubles is returned through an sret pointer.
 * f(x, y, z) = x*y*z + sin(x) * z, checked analytically. */
#include "enzyme.h"

typedef struct { double dx, dy, dz; } Triple;
Triple __enzyme_autodiff_triple(void *, ...);

double f(double x, double y, double z) { return x * y * z + sin(x) * z; }

int main(void) {
  double x = 0.7, y = -1.3, z = 2.1;
  Triple g = __enzyme_autodiff_triple((void *)f, x, y, z);
  check("df/dx", g.dx, y * z + cos(x) * z, EXACT_TOL);
  check("df/dy", g.dy, x * z, EXACT_TOL);
  check("df/dz", g.dz, x * y + sin(x), EXACT_TOL);
  return check_done();
}
