/* realloc that grows then shrinks a block holding active data: the adjoints of the bytes
 * kept by each realloc go back to the old shadow. */
#include <stdlib.h>
#include "enzyme.h"

#define N 6

double f(const double *x, int n) {
  double *v = malloc(sizeof(double) * 2);
  v[0] = x[0];
  v[1] = x[1] * x[1];
  v = realloc(v, sizeof(double) * n);
  for (int i = 2; i < n; i++)
    v[i] = v[i - 1] * x[i] + v[i - 2];
  double tail = v[n - 1];
  v = realloc(v, sizeof(double) * 3);
  double r = v[0] * v[1] + v[2] * tail;
  free(v);
  return r;
}

int main(void) {
  double x[N] = {0.5, -0.7, 0.9, 0.4, -0.6, 1.1}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
