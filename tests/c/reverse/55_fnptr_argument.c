/* A function pointer passed as a (constant) argument of the differentiated function and
 * called inside it: apply(g, x) = g(x) * g(x + 1) + x, with g chosen at run time from
 * two candidates (a volatile read keeps clang from resolving the call). */
#include "enzyme.h"

typedef double (*Unary)(double);

__attribute__((noinline)) double cube_plus(double x) { return x * x * x + 0.5 * x; }
__attribute__((noinline)) double damped(double x) { return exp(-0.5 * x) * sin(3.0 * x); }

double apply(Unary g, double x) { return g(x) * g(x + 1.0) + x; }

static volatile int choose;

int main(void) {
  Unary candidates[2] = {cube_plus, damped};
  double x = 0.35, h = FD_STEP;
  for (choose = 0; choose < 2; choose++) {
    Unary g = candidates[choose];
    double d = __enzyme_autodiff((void *)apply, enzyme_const, g, x);
    char what[40];
    snprintf(what, sizeof what, "d apply(g%d, x)/dx", choose);
    check(what, d, (apply(g, x + h) - apply(g, x - h)) / (2 * h), FD_TOL);
  }
  return check_done();
}
