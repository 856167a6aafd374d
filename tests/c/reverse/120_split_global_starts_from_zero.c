/* A global read before and written after (`a = w * x; w = x;`), differentiated in split
 * mode again and again: the read leaves an adjoint in the global's shadow after the store
 * was undone. A reverse derivative zeroes shadow globals on entry; the augmented forward
 * pass of split mode (and reverse mode with the primal result, which runs through the
 * split function) must too, or the next call's undone store picks up the stale adjoint
 * (d/dx came out 6, 9, ... for 3). Before, split mode refused the global. */
#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} aug;
aug __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

double w = 2.0;

double f(double x) {
  double a = w * x;
  w = x;
  return a + w * w;
}

int main(void) {
  for (int k = 0; k < 3; k++) {
    double x = 1.5 + k;
    char what[48];
    w = 2.0;
    aug t = __enzyme_augmentfwd((void *)f, x);
    snprintf(what, sizeof what, "split primal, call %d", k);
    check(what, t.primal, 2.0 * x + x * x, EXACT_TOL);
    snprintf(what, sizeof what, "split d/dx, call %d", k);
    check(what, __enzyme_reverse((void *)f, x, 1.0, t.tape), 2.0 + 2 * x, EXACT_TOL);
    w = 2.0;
    snprintf(what, sizeof what, "reverse d/dx, call %d", k);
    check(what, __enzyme_autodiff((void *)f, x), 2.0 + 2 * x, EXACT_TOL);
  }
  return check_done();
}
