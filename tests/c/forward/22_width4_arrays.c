/* Vector forward mode, width 4, on arrays: enzyme_dup with four shadow pointers for the
 * input and four for the output. One call gives four directional derivatives of a 3 -> 2
 * map with a loop and libm calls; each lane is checked against a width-1 call with the
 * same direction. */
#include "fwd.h"

void map(const double *x, double *y, int n) {
  double s = 0.0, p = 1.0;
  for (int i = 0; i < n; i++) {
    s += exp(0.3 * x[i]) * x[i];
    p *= 1.0 + x[i] * x[i];
  }
  y[0] = s;
  y[1] = log(p) + s * x[0];
}

int main(void) {
  double x[3] = {0.2, -0.5, 0.9};
  double dirs[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5, -1.0, 2.0}};
  double y[2], dy[4][2];
  __enzyme_fwddiff((void *)map, enzyme_width, 4, enzyme_dup, x, dirs[0], dirs[1], dirs[2],
                   dirs[3], enzyme_dupnoneed, y, dy[0], dy[1], dy[2], dy[3], enzyme_const, 3);
  for (int k = 0; k < 4; k++) {
    double y1[2], dy1[2];
    __enzyme_fwddiff((void *)map, x, dirs[k], y1, dy1, 3);
    check("lane k, y0 vs scalar call", dy[k][0], dy1[0], EXACT_TOL);
    check("lane k, y1 vs scalar call", dy[k][1], dy1[1], EXACT_TOL);
  }
  /* Lane 3 is the combination of lanes 0..2 (linearity). */
  for (int i = 0; i < 2; i++)
    check("lane 3 = 0.5 l0 - l1 + 2 l2", dy[3][i], 0.5 * dy[0][i] - dy[1][i] + 2.0 * dy[2][i],
          1e-12);
  return check_done();
}
