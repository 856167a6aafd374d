/* enzyme_dupnoneed: the caller does not need the primal output buffer, only the gradient
 * through it. out_i = x_i^3, seed 1 on every out_i: dx_i = 3 x_i^2. */
#include "enzyme.h"

#define N 5

void cube(const double *x, double *out, int n) {
  for (int i = 0; i < n; i++)
    out[i] = x[i] * x[i] * x[i];
}

int main(void) {
  double x[N], dx[N] = {0}, out[N], dout[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.4 * i - 0.6;
    dout[i] = 1.0;
  }
  __enzyme_autodiff((void *)cube, enzyme_dup, x, dx, enzyme_dupnoneed, out, dout, N);
  for (int i = 0; i < N; i++)
    check("dx_i", dx[i], 3.0 * x[i] * x[i], 1e-12);
  return check_done();
}
