/* A loop whose trip count is a runtime argument: f(x, n) = sum_{k=1..n} x^k / k,
 * f'(x) = sum_{k=1..n} x^(k-1). */
#include "enzyme.h"

double f(double x, long n) {
  double s = 0.0, p = 1.0;
  for (long k = 1; k <= n; k++) {
    p *= x;
    s += p / (double)k;
  }
  return s;
}

int main(void) {
  double x = 0.7;
  long ns[] = {0, 1, 5, 37};
  for (int i = 0; i < 4; i++) {
    double want = 0.0, p = 1.0;
    for (long k = 1; k <= ns[i]; k++) {
      want += p;
      p *= x;
    }
    char name[32];
    snprintf(name, sizeof name, "n=%ld", ns[i]);
    check(name, __enzyme_autodiff((void *)f, x, enzyme_const, ns[i]), want, 1e-12);
  }
  return check_done();
}
