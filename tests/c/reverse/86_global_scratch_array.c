/* A mutable global array used as scratch by the differentiated function (written, then
 * read back): it carries derivatives, so it gets a shadow global. */
#include "enzyme.h"

#define N 6

double scratch[N];

double f(const double *x, int n) {
  for (int i = 0; i < n; i++)
    scratch[i] = exp(0.5 * x[i]);
  double s = 0.0;
  for (int i = 1; i < n; i++)
    s += scratch[i] * scratch[i - 1];
  return s;
}

int main(void) {
  double x[N] = {0.2, -0.1, 0.5, -0.7, 0.3, 0.9}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
