/* An ODE integrator with its right-hand side in a separate, non-inlined function (the
 * forward derivative calls the right-hand side's): RK4 on a Lotka-Volterra system,
 * tangent of the final state with respect to a rate parameter vs central differences. */
#include "fwd.h"

__attribute__((noinline)) static void rhs(const double *p, const double *s, double *ds) {
  ds[0] = p[0] * s[0] - p[1] * s[0] * s[1];
  ds[1] = p[2] * s[0] * s[1] - p[3] * s[1];
}

__attribute__((noinline)) static void axpy2(double *out, const double *s, double a,
                                            const double *k) {
  out[0] = s[0] + a * k[0];
  out[1] = s[1] + a * k[1];
}

void integrate(const double *p, double *s, int steps, double h) {
  for (int n = 0; n < steps; n++) {
    double k1[2], k2[2], k3[2], k4[2], t[2];
    rhs(p, s, k1);
    axpy2(t, s, 0.5 * h, k1);
    rhs(p, t, k2);
    axpy2(t, s, 0.5 * h, k2);
    rhs(p, t, k3);
    axpy2(t, s, h, k3);
    rhs(p, t, k4);
    for (int i = 0; i < 2; i++)
      s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
}

int main(void) {
  double p[4] = {1.1, 0.4, 0.1, 0.4}, dp[4] = {1.0, 0.0, 0.0, 0.0};
  double s[2] = {10.0, 10.0}, ds[2] = {0.0, 0.0};
  int steps = 50;
  double h = 0.02;
  __enzyme_fwddiff((void *)integrate, p, dp, s, ds, steps, enzyme_const, h);
  double e = FD_STEP;
  double pp[4] = {1.1 + e, 0.4, 0.1, 0.4}, pm[4] = {1.1 - e, 0.4, 0.1, 0.4};
  double sp[2] = {10.0, 10.0}, sm[2] = {10.0, 10.0};
  integrate(pp, sp, steps, h);
  integrate(pm, sm, steps, h);
  for (int i = 0; i < 2; i++)
    check("d state / d p0 vs FD", ds[i], (sp[i] - sm[i]) / (2.0 * e), 1e-5);
  return check_done();
}
