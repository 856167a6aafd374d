/* The function pointer is chosen by a comparison of active values (a piecewise model):
 * each element calls one of two branches through a pointer. */
#include "enzyme.h"

typedef double (*Piece)(double, double);

__attribute__((noinline)) static double left(double x, double a) { return a * x * x; }
__attribute__((noinline)) static double right(double x, double a) { return a * log1p(x) + x; }

double model(const double *x, double a, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) {
    Piece p = x[i] < 0.5 ? left : right;
    acc += p(x[i], a);
  }
  return acc;
}

int main(void) {
  double x[5] = {0.1, 0.7, 0.3, 1.4, 0.45}, dx[5] = {0};
  double a = 1.3, h = FD_STEP;
  double da = __enzyme_autodiff((void *)model, enzyme_dup, x, dx, a, enzyme_const, 5);
  check("d/da", da, (model(x, a + h, 5) - model(x, a - h, 5)) / (2 * h), FD_TOL);
  for (int i = 0; i < 5; i++) {
    double saved = x[i];
    x[i] = saved + h;
    double up = model(x, a, 5);
    x[i] = saved - h;
    double down = model(x, a, 5);
    x[i] = saved;
    check("d/dx[i]", dx[i], (up - down) / (2 * h), FD_TOL);
  }
  return check_done();
}
