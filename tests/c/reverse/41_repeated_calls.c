/* Several API calls in one program: the same request twice (memoised derivative), and a
 * different activity pattern of the same function. f(x, y) = x^2 y. */
#include "enzyme.h"

typedef struct { double dx, dy; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

double f(double x, double y) { return x * x * y; }

int main(void) {
  double total = 0.0;
  for (int i = 1; i <= 3; i++)
    total += __enzyme_autodiff((void *)f, (double)i, enzyme_const, 2.0);
  check("sum of df/dx over x=1..3, y=2", total, 2.0 * 2.0 * (1 + 2 + 3), EXACT_TOL);
  double again = __enzyme_autodiff((void *)f, 0.5, enzyme_const, 4.0);
  check("df/dx at (0.5, 4)", again, 4.0, EXACT_TOL);
  Pair g = __enzyme_autodiff_pair((void *)f, 0.5, 4.0);
  check("df/dx (both active)", g.dx, 4.0, EXACT_TOL);
  check("df/dy (both active)", g.dy, 0.25, EXACT_TOL);
  double only_y = __enzyme_autodiff((void *)f, enzyme_const, 3.0, enzyme_out, 5.0);
  check("df/dy (x const)", only_y, 9.0, EXACT_TOL);
  return check_done();
}
