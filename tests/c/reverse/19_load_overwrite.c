/* A value loaded, its memory overwritten, then the old value used again: the reverse pass
 * must use the value as loaded, not the memory's final contents. Checked with central
 * finite differences on copies. */
#include "enzyme.h"

__attribute__((noinline)) double f(double *x) {
  double a = x[0];
  x[0] = 3.0 * a * x[1];
  double b = x[0] * x[1];
  x[1] = b * a;
  return x[0] + x[1] * a + sin(a);
}

static double primal(const double *x) {
  double c[2] = {x[0], x[1]};
  return f(c);
}

int main(void) {
  double x0[2] = {0.8, -1.3};
  double x[2] = {x0[0], x0[1]}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < 2; i++) {
    double p[2] = {x0[0], x0[1]}, m[2] = {x0[0], x0[1]};
    p[i] += FD_STEP;
    m[i] -= FD_STEP;
    double fd = (primal(p) - primal(m)) / (2.0 * FD_STEP);
    check("dL/dx_i vs central differences", dx[i], fd, FD_TOL);
  }
  return check_done();
}
