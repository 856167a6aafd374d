/* Vector forward mode, width 8, with enzyme_dupv: the eight input shadows are the rows of
 * one 8 x 8 identity matrix (a stride of 64 bytes) and the eight output shadows the rows
 * of another buffer, so one call gives the full Jacobian of an 8 -> 8 map (a smoothing
 * stencil with a nonlinearity), checked against eight width-1 calls and finite
 * differences. */
#include "fwd.h"

#define N 8

void stencil(const double *x, double *y) {
  for (int i = 0; i < N; i++) {
    double l = i > 0 ? x[i - 1] : 0.0, r = i < N - 1 ? x[i + 1] : 0.0;
    y[i] = tanh(0.25 * l + 0.5 * x[i] + 0.25 * r) + x[i] * x[i] * 0.1;
  }
}

int main(void) {
  double x[N], seed[N][N], y[N], jac[N][N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.1 * i - 0.3;
    for (int j = 0; j < N; j++)
      seed[i][j] = i == j ? 1.0 : 0.0;
  }
  __enzyme_fwddiff((void *)stencil, enzyme_width, 8, enzyme_dupv, sizeof(seed[0]), x, seed,
                   enzyme_dupv, sizeof(jac[0]), y, jac);
  for (int j = 0; j < N; j++) {
    double y1[N], dy1[N];
    __enzyme_fwddiff((void *)stencil, x, seed[j], y1, dy1);
    double xp[N], xm[N], yp[N], ym[N];
    for (int i = 0; i < N; i++)
      xp[i] = xm[i] = x[i];
    xp[j] += FD_STEP;
    xm[j] -= FD_STEP;
    stencil(xp, yp);
    stencil(xm, ym);
    for (int i = 0; i < N; i++) {
      check("J[:, j] vs scalar call", jac[j][i], dy1[i], EXACT_TOL);
      check("J[:, j] vs FD", jac[j][i], (yp[i] - ym[i]) / (2.0 * FD_STEP), FD_TOL);
    }
  }
  return check_done();
}
