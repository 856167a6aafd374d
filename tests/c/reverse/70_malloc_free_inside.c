/* malloc/free inside the differentiated function: a scratch buffer of squared
 * differences feeds a softened sum; checked against central finite differences. */
#include <stdlib.h>
#include "enzyme.h"

#define N 6

double f(const double *x, int n) {
  double *d = malloc(sizeof(double) * (n - 1));
  for (int i = 0; i + 1 < n; i++)
    d[i] = (x[i + 1] - x[i]) * (x[i + 1] - x[i]);
  double s = 0.0;
  for (int i = 0; i + 1 < n; i++)
    s += sqrt(d[i] + 0.5) * x[i];
  free(d);
  return s;
}

int main(void) {
  double x[N] = {0.3, -1.2, 0.7, 2.0, -0.4, 1.1}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
