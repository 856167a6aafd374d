/* An ODE integrator: RK4 steps of the damped oscillator y'' = -k y - c y' on a state array.
 * The tangent of the final state with respect to k (a duplicated double, written through
 * the state's shadow) is checked against central finite differences. An unmarked double
 * is duplicated in forward mode, so the step size is marked enzyme_const. */
#include "fwd.h"

/* The right-hand side as a macro: forward mode does not differentiate calls to other
 * defined functions yet (clang -O0 keeps a static helper out of line). */
#define RHS(k, c, s, ds)                                                                   \
  do {                                                                                     \
    (ds)[0] = (s)[1];                                                                      \
    (ds)[1] = -(k) * (s)[0] - (c) * (s)[1];                                                \
  } while (0)

void integrate(double k, double c, double *s, int steps, double h) {
  for (int n = 0; n < steps; n++) {
    double k1[2], k2[2], k3[2], k4[2], t[2];
    RHS(k, c, s, k1);
    for (int i = 0; i < 2; i++)
      t[i] = s[i] + 0.5 * h * k1[i];
    RHS(k, c, t, k2);
    for (int i = 0; i < 2; i++)
      t[i] = s[i] + 0.5 * h * k2[i];
    RHS(k, c, t, k3);
    for (int i = 0; i < 2; i++)
      t[i] = s[i] + h * k3[i];
    RHS(k, c, t, k4);
    for (int i = 0; i < 2; i++)
      s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
}

int main(void) {
  double k = 2.0, c = 0.3, h = 0.05;
  int steps = 40;
  double s[2] = {1.0, 0.0}, ds[2] = {0.0, 0.0};
  __enzyme_fwddiff((void *)integrate, k, 1.0, enzyme_const, c, s, ds, steps, enzyme_const, h);
  double e = FD_STEP;
  double sp[2] = {1.0, 0.0}, sm[2] = {1.0, 0.0};
  integrate(k + e, c, sp, steps, h);
  integrate(k - e, c, sm, steps, h);
  for (int i = 0; i < 2; i++)
    check("d state / dk vs FD", ds[i], (sp[i] - sm[i]) / (2.0 * e), FD_TOL);
  /* Initial-condition sensitivity: the tangent of y(0) = 1 propagates linearly. */
  double s2[2] = {1.0, 0.0}, ds2[2] = {1.0, 0.0};
  __enzyme_fwddiff((void *)integrate, enzyme_const, k, enzyme_const, c, s2, ds2, steps,
                   enzyme_const, h);
  double s3[2] = {1.0 + e, 0.0}, s4[2] = {1.0 - e, 0.0};
  integrate(k, c, s3, steps, h);
  integrate(k, c, s4, steps, h);
  for (int i = 0; i < 2; i++)
    check("d state / dy0 vs FD", ds2[i], (s3[i] - s4[i]) / (2.0 * e), FD_TOL);
  return check_done();
}
