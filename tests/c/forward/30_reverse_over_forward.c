/* Reverse over forward: __enzyme_autodiff of a function that calls __enzyme_fwddiff. The
 * directional derivative D(x) = f'(x; v) of f(x) = sum_i sin(x_i) x_{i+1}^2 along a fixed
 * v is itself differentiated in reverse mode: its gradient is H(x) v, checked against the
 * analytic Hessian-vector product. */
#include "fwd.h"

#define N 4

/* The direction v_i = 1 - 0.75 i, computed rather than copied from a constant array. */
static double dir(int i) { return 1.0 - 0.75 * i; }

double f(const double *x) {
  double s = 0.0;
  for (int i = 0; i + 1 < N; i++)
    s += sin(x[i]) * x[i + 1] * x[i + 1];
  return s;
}

double directional(const double *x) {
  double v[N];
  for (int i = 0; i < N; i++)
    v[i] = dir(i);
  return __enzyme_fwddiff((void *)f, x, v);
}

int main(void) {
  double x[N] = {0.3, -0.8, 1.1, 0.5}, hv[N] = {0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)directional, x, hv);
  /* H of f: d2/dxi2 = -sin(xi) x_{i+1}^2, d2/dxi dx_{i+1} = 2 cos(xi) x_{i+1},
   * d2/dx_{i+1}^2 = 2 sin(xi). */
  double hess[N][N] = {{0}};
  for (int i = 0; i + 1 < N; i++) {
    hess[i][i] += -sin(x[i]) * x[i + 1] * x[i + 1];
    hess[i][i + 1] += 2.0 * cos(x[i]) * x[i + 1];
    hess[i + 1][i] += 2.0 * cos(x[i]) * x[i + 1];
    hess[i + 1][i + 1] += 2.0 * sin(x[i]);
  }
  for (int i = 0; i < N; i++) {
    double want = 0.0;
    for (int j = 0; j < N; j++)
      want += hess[i][j] * dir(j);
    check("grad of f'(x; v) = H v", hv[i], want, 1e-12);
  }
  return check_done();
}
