/* An impure generator: a linear congruential generator keeping its state in a global
 * (integer state, inactive) draws the weights. The reverse pass must reuse the weights
 * the forward pass drew; drawing again would give other weights. */
#include "enzyme.h"

#define N 6

static unsigned state;

__attribute__((noinline)) double draw(void) {
  state = state * 1103515245u + 12345u;
  return (double)((state >> 8) & 0xffff) / 65536.0;
}

double f(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double w = draw();
    s += w * x[i] * x[i] + draw() * sin(x[i]);
  }
  return s;
}

int main(void) {
  double x[N] = {0.9, -0.3, 0.4, 1.2, -0.7, 0.05}, dx[N] = {0};
  state = 42;
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    for (int k = 0; k < N; k++)
      xp[k] = xm[k] = x[k];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    state = 42;
    double fp = f(xp, N);
    state = 42;
    double fm = f(xm, N);
    check("df/dx_j", dx[j], (fp - fm) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
