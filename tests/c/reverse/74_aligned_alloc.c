/* aligned_alloc inside the differentiated function: a 64-byte aligned buffer of
 * exponentials, normalised (a softmax) and dotted with fixed weights. */
#include <stdlib.h>
#include "enzyme.h"

#define N 8

double f(const double *x, int n) {
  double *e = aligned_alloc(64, sizeof(double) * 8);
  double z = 0.0;
  for (int i = 0; i < n; i++) {
    e[i] = exp(x[i]);
    z += e[i];
  }
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += (i - 2.5) * e[i] / z;
  free(e);
  return r;
}

int main(void) {
  double x[N] = {0.1, -0.3, 0.8, 0.2, -1.0, 0.5, 0.0, 0.4}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
