/* Defined marker globals (as Enzyme's own tests write them) and enzyme_dupnoneed on a
 * buffer that is both read and written: y_i = y_i * x + x^2, seed 1 on every y_i;
 * dx = sum_i (y_i + 2x) with the original y, dy_i = x (the shadow is overwritten). */
#include "enzyme.h"

int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_out;

#define N 4

double update(double x, double *y, int n) {
  for (int i = 0; i < n; i++)
    y[i] = y[i] * x + x * x;
  return 0.0;
}

int main(void) {
  double y[N] = {1.0, -2.0, 0.5, 3.0}, dy[N] = {1.0, 1.0, 1.0, 1.0};
  double orig[N] = {1.0, -2.0, 0.5, 3.0};
  double x = 0.6;
  double dx = __enzyme_autodiff((void *)update, x, enzyme_dupnoneed, y, dy, enzyme_const, N);
  double want = 0.0;
  for (int i = 0; i < N; i++)
    want += orig[i] + 2.0 * x;
  check("dx", dx, want, 1e-12);
  for (int i = 0; i < N; i++)
    check("dy_i", dy[i], x, 1e-12);
  return check_done();
}
