/* Vector forward mode, width 3, with loops and a heap temporary: the full Jacobian of a
 * 3 -> 3 map in one call (three shadow pointers in, three out), against finite
 * differences. */
#include <stdlib.h>
#include "fwd.h"

void poly_map(const double *x, double *y) {
  double *pw = malloc(4 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    pw[0] = 1.0;
    for (int k = 1; k < 4; k++)
      pw[k] = pw[k - 1] * x[i];
    y[i] = pw[3] - 2.0 * pw[2] + x[(i + 1) % 3] * pw[1];
  }
  free(pw);
}

int main(void) {
  double x[3] = {0.3, -1.1, 0.8};
  double e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  double y[3], jt[3][3];
  __enzyme_fwddiff((void *)poly_map, enzyme_width, 3, x, e[0], e[1], e[2], y, jt[0], jt[1],
                   jt[2]);
  for (int j = 0; j < 3; j++) {
    double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]}, yp[3], ym[3];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    poly_map(xp, yp);
    poly_map(xm, ym);
    for (int i = 0; i < 3; i++)
      check("J[i][j] vs FD", jt[j][i], (yp[i] - ym[i]) / (2.0 * FD_STEP), FD_TOL);
  }
  return check_done();
}
