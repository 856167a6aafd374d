/* calloc inside the differentiated function: weights accumulated into zeroed buckets
 * (integer bucket indices, float contents), then a product of the buckets. */
#include <stdlib.h>
#include "enzyme.h"

#define N 7
#define B 3

double f(const double *x, int n) {
  double *bucket = calloc(B, sizeof(double));
  for (int i = 0; i < n; i++)
    bucket[i % B] += x[i] * x[i] + 0.25 * x[i];
  double r = 1.0;
  for (int b = 0; b < B; b++)
    r *= 1.0 + bucket[b];
  free(bucket);
  return r;
}

int main(void) {
  double x[N] = {0.5, -0.25, 1.5, 0.75, -1.0, 0.2, 0.9}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
