/* The function pointer and the markers go through local variables (at -O0 they are loads
 * of allocas holding loads of the marker globals); the lowering must still find them.
 * f(x, w, s) = s * sum x_i w_i: dx_i = s w_i, ds = sum x_i w_i, w constant. */
#include "enzyme.h"

#define N 4

double f(const double *x, const double *w, double s) {
  double acc = 0.0;
  for (int i = 0; i < N; i++)
    acc += x[i] * w[i];
  return s * acc;
}

int main(void) {
  double x[N] = {1.0, -2.0, 0.5, 3.0}, dx[N] = {0}, w[N] = {0.25, 1.0, -1.0, 2.0};
  double s = 1.5;
  void *fn = (void *)f;
  int dup = enzyme_dup, constant = enzyme_const, out = enzyme_out;
  double ds = __enzyme_autodiff(fn, dup, x, dx, constant, w, out, s);
  double dot = 0.0;
  for (int i = 0; i < N; i++) {
    dot += x[i] * w[i];
    check("dx_i", dx[i], s * w[i], EXACT_TOL);
  }
  check("ds", ds, dot, EXACT_TOL);
  return check_done();
}
