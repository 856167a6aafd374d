/* __enzyme_augmentsize is a compile-time constant that does not depend on how the
 * arguments are spelled (markers only, or the full argument list), and a tape in caller
 * memory of exactly that size works, also on the stack and reused for several calls.
 * q(a, b) = a^3 b - b^2 with a, b active. */
#include <stdlib.h>

#include "enzyme.h"

extern int enzyme_allocated, enzyme_tape;
typedef struct {
  double da, db;
} pair;
double __enzyme_augmentfwd(void *, ...);
pair __enzyme_reverse(void *, ...);
long __enzyme_augmentsize(void *, ...);

double q(double a, double b) { return a * a * a * b - b * b; }

int main(void) {
  long by_markers = __enzyme_augmentsize((void *)q, enzyme_out, enzyme_out);
  long by_args = __enzyme_augmentsize((void *)q, 1.0, 2.0);
  check("size by markers == size by arguments", by_markers, by_args, 0);
  check("size fits the stack buffer", by_markers <= 256, 1, 0);
  _Alignas(16) char buffer[256];
  for (int k = 0; k < 3; k++) {
    double a = 0.5 + k, b = 1.5 - k;
    double y = __enzyme_augmentfwd((void *)q, enzyme_allocated, by_markers, enzyme_tape,
                                   buffer, a, b);
    check("primal", y, q(a, b), EXACT_TOL);
    pair d = __enzyme_reverse((void *)q, enzyme_allocated, by_markers, enzyme_tape, buffer, a,
                              b, 1.0);
    check("dq/da", d.da, 3 * a * a * b, 1e-12);
    check("dq/db", d.db, a * a * a - 2 * b, 1e-12);
  }
  return check_done();
}
