/* Function pointers passed down through non-inlined higher-order helpers: a split callee
 * makes the indirect call, and a function pointer is passed on as an argument of another
 * indirect call (twice(g, x) calls g through a pointer it received). */
#include "enzyme.h"

typedef double (*Unary)(double);
typedef double (*Combinator)(Unary, double);

__attribute__((noinline)) double logistic(double x) { return 1.0 / (1.0 + exp(-x)); }
__attribute__((noinline)) double wave(double x) { return sin(x) * cos(0.5 * x); }

__attribute__((noinline)) double twice(Unary g, double x) { return g(g(x)); }
__attribute__((noinline)) double shifted(Unary g, double x) { return g(x + 0.25) * x; }

double f(Combinator c, Unary g, double x) { return c(g, x) + c(g, 2.0 * x); }

static volatile int pick;

int main(void) {
  Unary gs[2] = {logistic, wave};
  Combinator cs[2] = {twice, shifted};
  double x = 0.45, h = FD_STEP;
  for (pick = 0; pick < 4; pick++) {
    Combinator c = cs[pick / 2];
    Unary g = gs[pick % 2];
    double d = __enzyme_autodiff((void *)f, enzyme_const, c, enzyme_const, g, x);
    char what[40];
    snprintf(what, sizeof what, "df/dx (combinator %d, g %d)", pick / 2, pick % 2);
    check(what, d, (f(c, g, x + h) - f(c, g, x - h)) / (2 * h), FD_TOL);
  }
  return check_done();
}
