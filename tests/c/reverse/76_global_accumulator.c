/* A mutable global accumulator written and read inside the differentiated function: the
 * global needs a shadow global, or the derivative through it is lost. */
#include "enzyme.h"

#define N 5

double total;

double f(const double *x, int n) {
  total = 0.0;
  for (int i = 0; i < n; i++)
    total += x[i] * x[i] * (i + 1);
  return sin(total) + total * x[0];
}

int main(void) {
  double x[N] = {0.2, -0.4, 0.3, 0.1, -0.25}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    check("df/dx_j", dx[j], (f(xp, N) - f(xm, N)) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
