/* libm tangents: exp, log, sqrt, pow, tanh, atan, cos, log1p and hypot-like compositions. */
#include "fwd.h"

double f1(double x) { return exp(0.5 * x) * log(1.0 + x * x); }
double f2(double x) { return sqrt(x) + pow(x, 2.5) + tanh(x); }
double f3(double x) { return atan(x) * cos(3.0 * x) + log1p(x); }
double f4(double x, double y) { return pow(x, y); }

int main(void) {
  double x = 0.8;
  check("d f1", __enzyme_fwddiff((void *)f1, x, 1.0),
        0.5 * exp(0.5 * x) * log(1.0 + x * x) + exp(0.5 * x) * 2.0 * x / (1.0 + x * x),
        EXACT_TOL);
  double th = tanh(x);
  check("d f2", __enzyme_fwddiff((void *)f2, x, 1.0),
        0.5 / sqrt(x) + 2.5 * pow(x, 1.5) + 1.0 - th * th, EXACT_TOL);
  check("d f3", __enzyme_fwddiff((void *)f3, x, 1.0),
        cos(3.0 * x) / (1.0 + x * x) - 3.0 * atan(x) * sin(3.0 * x) + 1.0 / (1.0 + x), EXACT_TOL);
  double y = 1.7;
  check("d pow / dy", __enzyme_fwddiff((void *)f4, enzyme_const, x, enzyme_dup, y, 1.0),
        pow(x, y) * log(x), EXACT_TOL);
  check("d pow / dx", __enzyme_fwddiff((void *)f4, x, 1.0, enzyme_const, y),
        y * pow(x, y - 1.0), EXACT_TOL);
  return check_done();
}
