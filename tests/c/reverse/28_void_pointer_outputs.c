/* A void function whose only outputs are through pointers: out = F(x). Seeding the
 * shadow of out with a vector w gives dx = J^T w. J is computed analytically. */
#include "enzyme.h"

void F(const double *x, double *out) {
  out[0] = x[0] * x[1];
  out[1] = sin(x[0]) + x[2] * x[2];
  out[2] = exp(x[1]) * x[2];
}

int main(void) {
  double x[3] = {0.3, -0.7, 1.1}, dx[3] = {0};
  double out[3], w[3] = {1.0, -2.0, 0.5};
  double dout[3] = {w[0], w[1], w[2]};
  __enzyme_autodiff((void *)F, enzyme_dup, x, dx, enzyme_dup, out, dout);
  double j[3][3] = {{x[1], x[0], 0.0},
                    {cos(x[0]), 0.0, 2.0 * x[2]},
                    {0.0, exp(x[1]) * x[2], exp(x[1])}};
  for (int i = 0; i < 3; i++) {
    double want = 0.0;
    for (int r = 0; r < 3; r++)
      want += j[r][i] * w[r];
    check("(J^T w)_i", dx[i], want, 1e-12);
  }
  check("primal out[0] written", out[0], x[0] * x[1], EXACT_TOL);
  return check_done();
}
