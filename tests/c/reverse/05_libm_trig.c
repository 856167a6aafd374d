/* Trigonometric libm family: sin cos tan asin acos atan atan2, each checked against its
 * analytic derivative. */
#include "enzyme.h"

typedef struct { double da, db; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

double f_sin(double x) { return sin(x); }
double f_cos(double x) { return cos(x); }
double f_tan(double x) { return tan(x); }
double f_asin(double x) { return asin(x); }
double f_acos(double x) { return acos(x); }
double f_atan(double x) { return atan(x); }
double f_atan2(double y, double x) { return atan2(y, x); }

int main(void) {
  double x = 0.4;
  check("sin'", __enzyme_autodiff((void *)f_sin, x), cos(x), EXACT_TOL);
  check("cos'", __enzyme_autodiff((void *)f_cos, x), -sin(x), EXACT_TOL);
  check("tan'", __enzyme_autodiff((void *)f_tan, x), 1.0 / (cos(x) * cos(x)), 1e-12);
  check("asin'", __enzyme_autodiff((void *)f_asin, x), 1.0 / sqrt(1.0 - x * x), 1e-12);
  check("acos'", __enzyme_autodiff((void *)f_acos, x), -1.0 / sqrt(1.0 - x * x), 1e-12);
  check("atan'", __enzyme_autodiff((void *)f_atan, x), 1.0 / (1.0 + x * x), 1e-12);
  double y = -1.1;
  Pair g = __enzyme_autodiff_pair((void *)f_atan2, y, x);
  check("atan2 d/dy", g.da, x / (x * x + y * y), 1e-12);
  check("atan2 d/dx", g.db, -y / (x * x + y * y), 1e-12);
  return check_done();
}
