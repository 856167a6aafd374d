/* Vector forward over reverse: two Hessian-vector products in one call (enzyme_width 2
 * over a function that calls __enzyme_autodiff), for f(x) = sum exp(x_i x_{i+1}) + x_0^3,
 * against the analytic Hessian and against two width-1 products. */
#include "fwd.h"

#define N 3

double f(const double *x) {
  double s = x[0] * x[0] * x[0];
  for (int i = 0; i + 1 < N; i++)
    s += exp(x[i] * x[i + 1]);
  return s;
}

void grad(const double *x, double *g) {
  for (int i = 0; i < N; i++)
    g[i] = 0.0;
  __enzyme_autodiff((void *)f, x, g);
}

int main(void) {
  double x[N] = {0.3, -0.6, 0.9};
  double v0[N] = {1.0, 0.0, 0.5}, v1[N] = {0.0, 1.0, -1.0};
  double g[N], hv0[N], hv1[N];
  __enzyme_fwddiff((void *)grad, enzyme_width, 2, x, v0, v1, g, hv0, hv1);
  double hess[N][N] = {{6.0 * x[0]}};
  for (int i = 0; i + 1 < N; i++) {
    double e = exp(x[i] * x[i + 1]);
    hess[i][i] += x[i + 1] * x[i + 1] * e;
    hess[i + 1][i + 1] += x[i] * x[i] * e;
    hess[i][i + 1] += e + x[i] * x[i + 1] * e;
    hess[i + 1][i] += e + x[i] * x[i + 1] * e;
  }
  for (int i = 0; i < N; i++) {
    double w0 = 0.0, w1 = 0.0;
    for (int j = 0; j < N; j++) {
      w0 += hess[i][j] * v0[j];
      w1 += hess[i][j] * v1[j];
    }
    check("lane 0: H v0", hv0[i], w0, 1e-12);
    check("lane 1: H v1", hv1[i], w1, 1e-12);
  }
  double gs[N], one[N];
  __enzyme_fwddiff((void *)grad, x, v1, gs, one);
  for (int i = 0; i < N; i++)
    check("lane 1 vs width-1 product", hv1[i], one[i], EXACT_TOL);
  return check_done();
}
