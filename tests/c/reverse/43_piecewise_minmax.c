/* Piecewise-smooth code on arrays: a ReLU layer and a max-pool written with comparisons,
 * fmax and fabs. L = max_i relu(x_i) + sum |x_i| * 0.5; gradients picked by hand. */
#include "enzyme.h"

#define N 6

double f(const double *x) {
  double best = 0.0, s = 0.0;
  for (int i = 0; i < N; i++) {
    double r = x[i] > 0.0 ? x[i] : 0.0;
    best = fmax(best, r);
    s += fabs(x[i]) * 0.5;
  }
  return best + s;
}

int main(void) {
  double x[N] = {-1.0, 0.5, 2.5, -0.25, 1.0, 2.0}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx);
  for (int i = 0; i < N; i++) {
    double want = (x[i] > 0 ? 0.5 : -0.5) + (i == 2 ? 1.0 : 0.0);
    check("dL/dx_i", dx[i], want, EXACT_TOL);
  }
  return check_done();
}
