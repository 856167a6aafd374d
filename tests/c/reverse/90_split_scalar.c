/* Split mode on a scalar function: __enzyme_augmentfwd returns {tape, primal} (Enzyme's
 * order), __enzyme_reverse takes the same arguments, the differential of the result and
 * the tape, and returns the adjoints of the active arguments.
 * f(x, y) = sin(x) y + x^2;  df/dx = cos(x) y + 2x,  df/dy = sin(x). */
#include <stdlib.h>

#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
typedef struct {
  double dx, dy;
} pair;

tape_and_primal __enzyme_augmentfwd(void *, ...);
pair __enzyme_reverse(void *, ...);

double f(double x, double y) { return sin(x) * y + x * x; }

int main(void) {
  double x = 0.7, y = -1.3;
  tape_and_primal fwd = __enzyme_augmentfwd((void *)f, x, y);
  check("primal from the augmented forward call", fwd.primal, f(x, y), EXACT_TOL);
  pair d = __enzyme_reverse((void *)f, x, y, 2.5, fwd.tape);
  check("df/dx scaled by d_ret", d.dx, 2.5 * (cos(x) * y + 2 * x), 1e-12);
  check("df/dy scaled by d_ret", d.dy, 2.5 * sin(x), 1e-12);
  /* A second, independent tape for other inputs. */
  tape_and_primal again = __enzyme_augmentfwd((void *)f, y, x);
  pair e = __enzyme_reverse((void *)f, y, x, 1.0, again.tape);
  check("second tape: df/dx", e.dx, cos(y) * x + 2 * y, 1e-12);
  check("second tape: df/dy", e.dy, sin(y), 1e-12);
  return check_done();
}
