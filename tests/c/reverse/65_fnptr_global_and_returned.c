/* Function pointers that reach the differentiated code through a mutable global set by
 * main, and as the result of a non-inlined function: both are dispatched on the pointer
 * at run time. */
#include "enzyme.h"

typedef double (*Unary)(double);

__attribute__((noinline)) static double quartic(double x) { return x * x * x * x - x; }
__attribute__((noinline)) static double bump(double x) { return exp(-x * x) * cos(x); }
__attribute__((noinline)) static double soft(double x) { return x / sqrt(1.0 + x * x); }

Unary callback;

__attribute__((noinline)) Unary choose(int which) { return which ? soft : bump; }

double f(double x, int which) {
  Unary g = choose(which);
  return callback(g(x)) + g(callback(x));
}

static volatile int setting;

int main(void) {
  double x = 0.55, h = FD_STEP;
  for (setting = 0; setting < 4; setting++) {
    callback = setting < 2 ? quartic : bump;
    int which = setting % 2;
    double d = __enzyme_autodiff((void *)f, x, enzyme_const, which);
    char what[40];
    snprintf(what, sizeof what, "df/dx (setting %d)", setting);
    check(what, d, (f(x + h, which) - f(x - h, which)) / (2 * h), FD_TOL);
  }
  return check_done();
}
