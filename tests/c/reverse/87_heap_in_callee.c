/* Heap memory across a call: a non-inlined helper allocates and fills a block that the
 * differentiated function reads and frees; its shadow is made in the helper's forward
 * phase and freed in the helper's reverse phase, after the caller's reverse uses. */
#include <stdlib.h>
#include "enzyme.h"

#define N 5

__attribute__((noinline)) double *squares(const double *x, int n) {
  double *s = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++)
    s[i] = x[i] * x[i];
  return s;
}

double f(const double *x, int n) {
  double *s = squares(x, n);
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += sqrt(1.0 + s[i]) * (i + 1);
  free(s);
  return r;
}

int main(void) {
  double x[N] = {0.4, -1.1, 0.8, 0.25, -0.6}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
