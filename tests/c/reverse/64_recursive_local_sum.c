/* Recursion with local memory: a pairwise (tree) reduction of f(x_i) = x_i^2 sin(x_i)
 * whose every level copies its partial sums into a local array before combining them. */
#include "enzyme.h"

__attribute__((noinline)) double tree_sum(const double *x, int n) {
  if (n == 1)
    return x[0] * x[0] * sin(x[0]);
  double parts[2];
  parts[0] = tree_sum(x, n / 2);
  parts[1] = tree_sum(x + n / 2, n - n / 2);
  return parts[0] * 0.9 + parts[1] * 1.1 + 0.01 * parts[0] * parts[1];
}

double f(const double *x) { return tree_sum(x, 7); }

int main(void) {
  double x[7] = {0.2, -0.5, 0.8, 1.2, -0.1, 0.6, 0.3}, dx[7] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < 7; i++) {
    double saved = x[i];
    x[i] = saved + FD_STEP;
    double up = f(x);
    x[i] = saved - FD_STEP;
    double down = f(x);
    x[i] = saved;
    check("df/dx[i]", dx[i], (up - down) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
