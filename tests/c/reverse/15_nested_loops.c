/* Nested loops: the quadratic form x^T A x with A constant, gradient (A + A^T) x. */
#include "enzyme.h"

#define N 5

double quad(const double *x, const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      s += x[i] * a[i * n + j] * x[j];
  return s;
}

int main(void) {
  double x[N], a[N * N], dx[N] = {0};
  for (int i = 0; i < N; i++)
    x[i] = 0.3 * i - 0.5;
  for (int i = 0; i < N * N; i++)
    a[i] = sin(1.0 + i);
  __enzyme_autodiff((void *)quad, enzyme_dup, x, dx, enzyme_const, a, N);
  for (int i = 0; i < N; i++) {
    double want = 0.0;
    for (int j = 0; j < N; j++)
      want += (a[i * N + j] + a[j * N + i]) * x[j];
    check("d(x^T A x)/dx_i", dx[i], want, 1e-12);
  }
  return check_done();
}
