/* A non-inlined callee with a local array that carries derivatives (its shadow must live
 * until the callee's reverse phase), called twice from the differentiated function. */
#include "enzyme.h"

__attribute__((noinline)) double smooth3(const double *x, int n) {
  double local[8];
  for (int i = 0; i < n; i++)
    local[i] = x[i] * x[i];
  double acc = 0.0;
  for (int i = 1; i + 1 < n; i++)
    acc += sin(local[i - 1] + 2.0 * local[i] + local[i + 1]);
  return acc;
}

double f(double *x) { return smooth3(x, 6) * smooth3(x + 1, 5); }

int main(void) {
  double x[6] = {0.1, 0.5, -0.3, 0.8, 0.2, -0.6}, dx[6] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < 6; i++) {
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
