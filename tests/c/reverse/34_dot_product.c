/* Dot product with both operands duplicated: d(a.b)/da = b, d(a.b)/db = a. */
#include "enzyme.h"

#define N 100

double dot(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

int main(void) {
  double a[N], b[N], da[N] = {0}, db[N] = {0};
  for (int i = 0; i < N; i++) {
    a[i] = sin(i);
    b[i] = cos(0.5 * i);
  }
  __enzyme_autodiff((void *)dot, enzyme_dup, a, da, enzyme_dup, b, db, N);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += da[i] != b[i] || db[i] != a[i];
  check("mismatching entries of da=b, db=a", (double)bad, 0.0, EXACT_TOL);
  check("da[17]", da[17], b[17], EXACT_TOL);
  return check_done();
}
