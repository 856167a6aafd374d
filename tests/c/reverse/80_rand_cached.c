/* rand() inside the differentiated function: an external without a derivative and with
 * no active operand, so it stays primal-only; its results must be cached for the reverse
 * pass, never re-executed. */
#include <stdlib.h>
#include "enzyme.h"

#define N 5

double f(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double w = (double)rand() / RAND_MAX;
    s += exp(w * x[i]);
  }
  return s;
}

int main(void) {
  double x[N] = {0.25, -0.5, 1.0, 0.75, -1.25}, dx[N] = {0};
  srand(7);
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    srand(7);
    double fp = f(xp, N);
    srand(7);
    double fm = f(xm, N);
    check("df/dx_j", dx[j], (fp - fm) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
