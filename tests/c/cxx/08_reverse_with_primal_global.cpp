/* ReverseWithPrimal runs through the split function; a global read before it is written
 * (`a = w * x; w = x;`) leaves an adjoint in the global's shadow after its store was
 * undone. Like a reverse derivative, the call zeroes the shadow globals first, or a
 * second call picks up the stale adjoint (tests/c/reverse/120 for split mode). */
#include <enzyme/enzyme>

#include "enzyme.h"

double w = 2.0;

static double f(double x) {
  double a = w * x;
  w = x;
  return a + w * w;
}

int main() {
  using namespace enzyme;
  for (int k = 0; k < 3; k++) {
    double x = 1.5 + k;
    w = 2.0;
    auto r = autodiff<ReverseWithPrimal>(f, Active{x});
    char what[48];
    snprintf(what, sizeof what, "ReverseWithPrimal primal, call %d", k);
    check(what, get<1>(r), 2.0 * x + x * x, EXACT_TOL);
    snprintf(what, sizeof what, "ReverseWithPrimal d/dx, call %d", k);
    check(what, get<0>(get<0>(r)), 2.0 + 2 * x, EXACT_TOL);
  }
  return check_done();
}
