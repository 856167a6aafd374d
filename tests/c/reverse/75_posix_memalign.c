/* posix_memalign inside the differentiated function: the block comes back through an
 * out-pointer, so its shadow must go through the shadow of that pointer's slot. */
#include <stdlib.h>
#include "enzyme.h"

#define N 5

double f(const double *x, int n) {
  void *raw = NULL;
  if (posix_memalign(&raw, 32, sizeof(double) * n) != 0)
    return 0.0;
  double *t = raw;
  for (int i = 0; i < n; i++)
    t[i] = tanh(x[i]) * x[(i + 1) % n];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += t[i] * t[i];
  free(raw);
  return s;
}

int main(void) {
  double x[N] = {0.7, -0.2, 1.1, -0.9, 0.3}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
