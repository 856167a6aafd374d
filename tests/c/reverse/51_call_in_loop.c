/* A non-inlined callee called in a loop whose trip count is a parameter: every dynamic
 * call gets its own frame (a loop tape of frames in the caller). The callee reads and
 * writes through a pointer and returns a value. f(x, n) = sum of the running state. */
#include "enzyme.h"

__attribute__((noinline)) double step(double *state, double w) {
  double old = *state;
  *state = sin(old) * w + 0.1 * old;
  return old * *state;
}

double f(double *x, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; i++)
    acc += step(&x[i % 3], 1.0 + 0.25 * i);
  return acc;
}

static double run(const double *x0, int n) {
  double x[3] = {x0[0], x0[1], x0[2]};
  return f(x, n);
}

int main(void) {
  const double x0[3] = {0.3, -0.8, 1.1};
  double x[3] = {x0[0], x0[1], x0[2]}, dx[3] = {0, 0, 0};
  int n = 11;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
  for (int k = 0; k < 3; k++) {
    double up[3] = {x0[0], x0[1], x0[2]}, down[3] = {x0[0], x0[1], x0[2]};
    up[k] += FD_STEP;
    down[k] -= FD_STEP;
    char what[32];
    snprintf(what, sizeof what, "df/dx[%d]", k);
    check(what, dx[k], (run(up, n) - run(down, n)) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
