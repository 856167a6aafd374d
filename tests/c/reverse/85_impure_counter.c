/* A counter read inside the differentiated function: a non-inlined function returns and
 * bumps a call counter (integer global state) that picks the coefficient of each term.
 * The reverse pass must use the counts the forward pass saw. */
#include "enzyme.h"

#define N 5

static int calls;

__attribute__((noinline)) int next_count(void) { return calls++; }

double f(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    int c = next_count();
    s += (c % 3 + 1) * x[i] * x[(i + c) % n];
  }
  return s;
}

int main(void) {
  double x[N] = {0.3, -0.6, 0.9, 1.4, -0.2}, dx[N] = {0};
  calls = 1;
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    calls = 1;
    double fp = f(xp, N);
    calls = 1;
    double fm = f(xm, N);
    check("df/dx_j", dx[j], (fp - fm) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
