/* enzyme_dupnoneed on an output array: only its tangents are read afterwards. */
#include "fwd.h"

void softplus(const double *x, double *y, int n) {
  for (int i = 0; i < n; i++)
    y[i] = log(1.0 + exp(x[i]));
}

int main(void) {
  double x[3] = {-1.0, 0.0, 2.5}, dx[3] = {1.0, 2.0, -0.5};
  double y[3], dy[3];
  __enzyme_fwddiff((void *)softplus, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy, 3);
  for (int i = 0; i < 3; i++)
    check("d softplus", dy[i], dx[i] / (1.0 + exp(-x[i])), EXACT_TOL);
  return check_done();
}
