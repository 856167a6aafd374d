/* Rounding functions have zero derivative almost everywhere: floor ceil trunc round rint
 * nearbyint. f(x) = x * g(x) has f'(x) = g(x). */
#include "enzyme.h"

double f_floor(double x) { return x * floor(x); }
double f_ceil(double x) { return x * ceil(x); }
double f_trunc(double x) { return x * trunc(x); }
double f_round(double x) { return x * round(x); }
double f_rint(double x) { return x * rint(x); }
double f_nearbyint(double x) { return x * nearbyint(x); }

int main(void) {
  double x = -2.7;
  check("(x floor x)'", __enzyme_autodiff((void *)f_floor, x), floor(x), EXACT_TOL);
  check("(x ceil x)'", __enzyme_autodiff((void *)f_ceil, x), ceil(x), EXACT_TOL);
  check("(x trunc x)'", __enzyme_autodiff((void *)f_trunc, x), trunc(x), EXACT_TOL);
  check("(x round x)'", __enzyme_autodiff((void *)f_round, x), round(x), EXACT_TOL);
  check("(x rint x)'", __enzyme_autodiff((void *)f_rint, x), rint(x), EXACT_TOL);
  check("(x nearbyint x)'", __enzyme_autodiff((void *)f_nearbyint, x), nearbyint(x), EXACT_TOL);
  return check_done();
}
