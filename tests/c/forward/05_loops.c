/* Loops: Horner evaluation with a runtime trip count, nested loops, and a while loop whose
 * exit depends on the primal value. */
#include "fwd.h"

double horner(double x, const double *c, int n) {
  double acc = 0.0;
  for (int i = n - 1; i >= 0; i--)
    acc = acc * x + c[i];
  return acc;
}

double nested(double x, int n) {
  double s = 0.0;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= i; j++)
      s += sin(x * j) / i;
  return s;
}

double halve_until_small(double x) {
  double y = x;
  while (fabs(y) > 0.1)
    y = 0.5 * y + 0.01 * y * y;
  return y;
}

int main(void) {
  double c[5] = {1.0, -2.0, 0.5, 3.0, -1.0};
  double x = 0.9;
  double want = 0.0;
  for (int i = 1; i < 5; i++)
    want += i * c[i] * pow(x, i - 1);
  check("horner'", __enzyme_fwddiff((void *)horner, x, 1.0, enzyme_const, c, 5), want,
        EXACT_TOL);
  double nd = 0.0;
  for (int i = 1; i <= 4; i++)
    for (int j = 1; j <= i; j++)
      nd += j * cos(x * j) / i;
  check("nested'", __enzyme_fwddiff((void *)nested, x, 1.0, 4), nd, EXACT_TOL);
  double h = FD_STEP;
  double fd = (halve_until_small(x + h) - halve_until_small(x - h)) / (2.0 * h);
  check("while' vs FD", __enzyme_fwddiff((void *)halve_until_small, x, 1.0), fd, FD_TOL);
  return check_done();
}
