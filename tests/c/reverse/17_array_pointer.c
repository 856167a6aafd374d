/* An array through a pointer (enzyme_dup): f = sum x_i^2 * w_i; dx_i = 2 x_i w_i,
 * dw_i = x_i^2. Shadows accumulate (+=), so pre-filled shadows keep their contents. */
#include "enzyme.h"

#define N 7

double f(const double *x, const double *w, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i] * w[i];
  return s;
}

int main(void) {
  double x[N], w[N], dx[N], dw[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.5 + i;
    w[i] = 1.0 / (1.0 + i);
    dx[i] = 1.0; /* accumulated into */
    dw[i] = 0.0;
  }
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, w, dw, N);
  for (int i = 0; i < N; i++) {
    check("dx_i", dx[i], 1.0 + 2.0 * x[i] * w[i], 1e-12);
    check("dw_i", dw[i], x[i] * x[i], 1e-12);
  }
  return check_done();
}
