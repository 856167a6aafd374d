/* Forward over reverse: a Hessian-vector product. grad() computes the gradient of a
 * quadratic form f(x) = 1/2 x^T A x + b^T x with __enzyme_autodiff; __enzyme_fwddiff of
 * grad along v gives H v = A v (A symmetric). The inner request is lowered first, then
 * forward mode differentiates the synthesized gradient. Checked against A v for several
 * directions, which recovers the whole Hessian. */
#include "fwd.h"

#define N 4

static const double A[N][N] = {
    {4.0, 1.0, 0.5, 0.0}, {1.0, 3.0, -0.5, 0.2}, {0.5, -0.5, 2.0, 0.1}, {0.0, 0.2, 0.1, 1.5}};
static const double b[N] = {0.3, -0.2, 0.1, 0.7};

double quad(const double *x) {
  double s = 0.0;
  for (int i = 0; i < N; i++) {
    double ax = 0.0;
    for (int j = 0; j < N; j++)
      ax += A[i][j] * x[j];
    s += 0.5 * x[i] * ax + b[i] * x[i];
  }
  return s;
}

void grad(const double *x, double *g) {
  for (int i = 0; i < N; i++)
    g[i] = 0.0;
  __enzyme_autodiff((void *)quad, x, g);
}

int main(void) {
  double x[N] = {0.5, -1.0, 2.0, 0.25};
  double g[N];
  grad(x, g);
  for (int i = 0; i < N; i++) {
    double want = b[i];
    for (int j = 0; j < N; j++)
      want += A[i][j] * x[j];
    check("gradient = A x + b", g[i], want, 1e-12);
  }
  for (int k = 0; k <= N; k++) {
    double v[N], hv[N], gg[N];
    for (int i = 0; i < N; i++)
      v[i] = k < N ? (i == k) : 0.5 * i - 0.3;
    __enzyme_fwddiff((void *)grad, x, v, gg, hv);
    for (int i = 0; i < N; i++) {
      double want = 0.0;
      for (int j = 0; j < N; j++)
        want += A[i][j] * v[j];
      check("H v = A v", hv[i], want, 1e-12);
    }
  }
  return check_done();
}
