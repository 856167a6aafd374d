/* Forward mode through recursion: a recursive power and a recursive sum over an array
 * (the derivative calls its own forward derivative), against analytic values. */
#include "fwd.h"

__attribute__((noinline)) double rpow(double x, int n) {
  if (n == 0)
    return 1.0;
  return x * rpow(x, n - 1);
}

__attribute__((noinline)) double rsum_sq(const double *a, int n) {
  if (n == 0)
    return 0.0;
  return a[n - 1] * a[n - 1] + rsum_sq(a, n - 1);
}

double f(double x, const double *a) { return rpow(x, 7) + rsum_sq(a, 5); }

int main(void) {
  double x = 1.3;
  double a[5] = {0.5, -1.0, 2.0, 0.25, 1.5}, da[5] = {1.0, 2.0, -1.0, 0.5, 0.0};
  double got = __enzyme_fwddiff((void *)f, x, 1.0, a, da);
  double want = 7.0 * pow(x, 6);
  for (int i = 0; i < 5; i++)
    want += 2.0 * a[i] * da[i];
  check("d f vs analytic", got, want, 1e-10);
  double zero = 0.0;
  double only_a = __enzyme_fwddiff((void *)f, enzyme_const, x, a, da);
  check("d f along da vs analytic", only_a, want - 7.0 * pow(x, 6) + zero, 1e-10);
  return check_done();
}
