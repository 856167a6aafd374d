/* Exponential and logarithm family: exp exp2 expm1 log log2 log10 log1p sqrt cbrt pow,
 * each against its analytic derivative. */
#include "enzyme.h"

typedef struct { double da, db; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

double f_exp(double x) { return exp(x); }
double f_exp2(double x) { return exp2(x); }
double f_expm1(double x) { return expm1(x); }
double f_log(double x) { return log(x); }
double f_log2(double x) { return log2(x); }
double f_log10(double x) { return log10(x); }
double f_log1p(double x) { return log1p(x); }
double f_sqrt(double x) { return sqrt(x); }
double f_cbrt(double x) { return cbrt(x); }
double f_pow(double x, double y) { return pow(x, y); }

int main(void) {
  double x = 1.3;
  check("exp'", __enzyme_autodiff((void *)f_exp, x), exp(x), 1e-12);
  check("exp2'", __enzyme_autodiff((void *)f_exp2, x), exp2(x) * log(2.0), 1e-12);
  check("expm1'", __enzyme_autodiff((void *)f_expm1, x), exp(x), 1e-12);
  check("log'", __enzyme_autodiff((void *)f_log, x), 1.0 / x, 1e-12);
  check("log2'", __enzyme_autodiff((void *)f_log2, x), 1.0 / (x * log(2.0)), 1e-12);
  check("log10'", __enzyme_autodiff((void *)f_log10, x), 1.0 / (x * log(10.0)), 1e-12);
  check("log1p'", __enzyme_autodiff((void *)f_log1p, x), 1.0 / (1.0 + x), 1e-12);
  check("sqrt'", __enzyme_autodiff((void *)f_sqrt, x), 0.5 / sqrt(x), 1e-12);
  check("cbrt'", __enzyme_autodiff((void *)f_cbrt, x), 1.0 / (3.0 * cbrt(x) * cbrt(x)), 1e-12);
  double y = 2.5;
  Pair g = __enzyme_autodiff_pair((void *)f_pow, x, y);
  check("pow d/dx", g.da, y * pow(x, y - 1.0), 1e-12);
  check("pow d/dy", g.db, pow(x, y) * log(x), 1e-12);
  return check_done();
}
