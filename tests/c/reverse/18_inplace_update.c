/* In-place updates x[i] = f(x[i]): the function overwrites its input, then sums squares.
 * L = sum sin(x_i)^2, dL/dx_i = 2 sin(x_i) cos(x_i) with x the ORIGINAL input. */
#include "enzyme.h"

#define N 6

double f(double *x, int n) {
  for (int i = 0; i < n; i++)
    x[i] = sin(x[i]);
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
  return s;
}

int main(void) {
  double x[N], orig[N], dx[N] = {0};
  for (int i = 0; i < N; i++)
    orig[i] = x[i] = 0.2 * i - 0.4;
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int i = 0; i < N; i++) {
    check("dL/dx_i", dx[i], 2.0 * sin(orig[i]) * cos(orig[i]), 1e-12);
    check("x_i overwritten", x[i], sin(orig[i]), EXACT_TOL);
  }
  return check_done();
}
