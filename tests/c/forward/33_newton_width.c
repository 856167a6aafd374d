/* A 2-D Newton iteration (solving F(u; p) = 0 for u with an explicit 2 x 2 inverse in a
 * helper) differentiated with respect to both parameters at once (enzyme_width 2), against
 * the implicit function theorem du/dp = -(dF/du)^{-1} dF/dp at the solution. */
#include "fwd.h"

__attribute__((noinline)) static void residual(const double *u, const double *p, double *r) {
  r[0] = u[0] * u[0] + u[1] - p[0];
  r[1] = u[0] - u[1] * u[1] * u[1] + p[1] * u[1];
}

__attribute__((noinline)) static void jacobian(const double *u, const double *p, double *j) {
  j[0] = 2.0 * u[0];
  j[1] = 1.0;
  j[2] = 1.0;
  j[3] = -3.0 * u[1] * u[1] + p[1];
}

void solve(const double *p, double *u) {
  u[0] = 1.0;
  u[1] = 0.5;
  for (int it = 0; it < 40; it++) {
    double r[2], j[4];
    residual(u, p, r);
    jacobian(u, p, j);
    double det = j[0] * j[3] - j[1] * j[2];
    u[0] -= (j[3] * r[0] - j[1] * r[1]) / det;
    u[1] -= (-j[2] * r[0] + j[0] * r[1]) / det;
  }
}

int main(void) {
  double p[2] = {2.0, 0.5}, e0[2] = {1.0, 0.0}, e1[2] = {0.0, 1.0};
  double u[2], du0[2], du1[2];
  __enzyme_fwddiff((void *)solve, enzyme_width, 2, p, e0, e1, u, du0, du1);
  double r[2], j[4];
  residual(u, p, r);
  check("converged", fabs(r[0]) + fabs(r[1]), 0.0, 1e-12);
  jacobian(u, p, j);
  /* dF/dp columns: dF/dp0 = (-1, 0), dF/dp1 = (0, u1). */
  double det = j[0] * j[3] - j[1] * j[2];
  double fp[2][2] = {{-1.0, 0.0}, {0.0, u[1]}};
  double *du[2] = {du0, du1};
  for (int k = 0; k < 2; k++) {
    double want0 = -(j[3] * fp[k][0] - j[1] * fp[k][1]) / det;
    double want1 = -(-j[2] * fp[k][0] + j[0] * fp[k][1]) / det;
    check("du0/dp_k vs implicit", du[k][0], want0, 1e-9);
    check("du1/dp_k vs implicit", du[k][1], want1, 1e-9);
  }
  return check_done();
}
