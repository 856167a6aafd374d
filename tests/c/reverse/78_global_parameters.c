/* A global array of parameters, filled at run time by main and only read by the
 * differentiated function: the gradient with respect to the argument is checked against
 * finite differences. */
#include "enzyme.h"

#define K 4

double params[K];

double f(double x) {
  double r = 0.0, p = 1.0;
  for (int k = 0; k < K; k++) {
    r += params[k] * sin(p);
    p *= x;
  }
  return r;
}

int main(void) {
  for (int k = 0; k < K; k++)
    params[k] = 0.5 + 0.25 * k;
  double x = 1.3;
  double d = __enzyme_autodiff((void *)f, x);
  double fd = (f(x + FD_STEP) - f(x - FD_STEP)) / (2 * FD_STEP);
  check("df/dx with global parameters", d, fd, FD_TOL);
  for (int k = 0; k < K; k++)
    check("parameters unchanged", params[k], 0.5 + 0.25 * k, 0.0);
  return check_done();
}
