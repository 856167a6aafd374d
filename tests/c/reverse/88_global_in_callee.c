/* A mutable global written by the differentiated function and read by a non-inlined
 * callee (and the other way round): caller and callee must agree that the global carries
 * derivatives, through the same shadow global. */
#include "enzyme.h"

#define N 4

double level, echo;

__attribute__((noinline)) double scaled(double v) {
  echo = v * level;
  return level * v * v;
}

double f(const double *x, int n) {
  level = 0.0;
  for (int i = 0; i < n; i++)
    level += x[i];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += scaled(x[i]) + echo * x[i];
  return s;
}

int main(void) {
  double x[N] = {0.3, -0.7, 1.1, 0.4}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
