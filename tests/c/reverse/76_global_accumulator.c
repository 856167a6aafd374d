/* A mutable global accumulator written and read inside the differentiated function: the
 * global needs a shadow global, or the derivative through it is lost. */
#include "enzyme.h"

#define N 5

double total;

double f(const double *x, int n) {
  total = 0.0;
  for (int i = 0; i < n; i++)
    total += x[i] * x[i] * (i + 1);
  return sin(total) + total * x[0];
}

int main(void) {
  double x[N] = {0.2, -0.4, 0.3, 0.1, -0.25}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
