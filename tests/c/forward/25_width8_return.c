/* Vector forward mode, width 8, returning all eight tangents of a scalar result (a struct
 * of eight doubles, returned through an sret pointer by the C ABI): the gradient of a
 * Rosenbrock-like function of eight variables in one call, against the analytic one. */
#include "fwd.h"

double rosen(const double *x) {
  double s = 0.0;
  for (int i = 0; i < 7; i++) {
    double a = x[i + 1] - x[i] * x[i], b = 1.0 - x[i];
    s += 100.0 * a * a + b * b;
  }
  return s;
}

int main(void) {
  double x[8], e[8][8];
  for (int i = 0; i < 8; i++) {
    x[i] = 0.9 + 0.05 * i;
    for (int j = 0; j < 8; j++)
      e[i][j] = i == j;
  }
  tangents8 g = __enzyme_fwddiff_w8((void *)rosen, enzyme_width, 8, x, e[0], e[1], e[2], e[3],
                                    e[4], e[5], e[6], e[7]);
  for (int j = 0; j < 8; j++) {
    double want = 0.0;
    if (j < 7)
      want += -400.0 * x[j] * (x[j + 1] - x[j] * x[j]) - 2.0 * (1.0 - x[j]);
    if (j > 0)
      want += 200.0 * (x[j] - x[j - 1] * x[j - 1]);
    check("d rosen / dx_j vs analytic", g.d[j], want, 1e-10);
  }
  return check_done();
}
