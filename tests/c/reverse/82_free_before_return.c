/* Memory freed before the function returns, then more allocated (the allocator may reuse
 * the freed block): values read from the first block are needed by the reverse pass
 * after it was freed, so they must come from the cache, not from freed memory. */
#include <stdlib.h>
#include "enzyme.h"

#define N 6

double f(const double *x, int n) {
  double *a = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++)
    a[i] = x[i] * x[i] + 1.0;
  double p = 0.0;
  for (int i = 0; i < n; i++)
    p += log(a[i]) * a[i];
  free(a);
  double *b = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++)
    b[i] = p * x[i];
  double q = 0.0;
  for (int i = 0; i < n; i++)
    q += b[i] * b[i];
  free(b);
  return q;
}

int main(void) {
  double x[N] = {0.5, -0.75, 0.2, 1.1, -0.3, 0.6}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
