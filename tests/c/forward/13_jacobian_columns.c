/* A full Jacobian of a 3 -> 3 map, one column per forward call with a unit tangent,
 * checked entry by entry against central finite differences. */
#include "fwd.h"

void map3(const double *x, double *y) {
  y[0] = x[0] * x[1] + sin(x[2]);
  y[1] = exp(x[0]) - x[1] * x[2] * x[2];
  y[2] = x[0] / (1.0 + x[1] * x[1]) + x[2];
}

int main(void) {
  double x[3] = {0.4, -0.7, 1.1};
  for (int j = 0; j < 3; j++) {
    double dx[3] = {0.0, 0.0, 0.0}, y[3], dy[3];
    dx[j] = 1.0;
    __enzyme_fwddiff((void *)map3, x, dx, y, dy);
    double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]}, yp[3], ym[3];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    map3(xp, yp);
    map3(xm, ym);
    for (int i = 0; i < 3; i++)
      check("J[i][j] vs FD", dy[i], (yp[i] - ym[i]) / (2.0 * FD_STEP), FD_TOL);
  }
  return check_done();
}
