/* Explicit Euler integration of a damped oscillator; the loss is the final position.
 * Gradients with respect to the initial state and the parameters (k, damping) are checked
 * against central finite differences. */
#include "enzyme.h"

#define STEPS 200

/* s[0] = x, s[1] = v, s[2] = k, s[3] = damping. */
double simulate(const double *s) {
  double x = s[0], v = s[1], k = s[2], d = s[3], dt = 0.01;
  for (int t = 0; t < STEPS; t++) {
    double a = -k * x - d * v;
    x += dt * v;
    v += dt * a;
  }
  return x;
}

int main(void) {
  double s[4] = {1.0, 0.0, 4.0, 0.3}, ds[4] = {0};
  __enzyme_autodiff((void *)simulate, s, ds);
  for (int i = 0; i < 4; i++) {
    double save = s[i];
    s[i] = save + FD_STEP;
    double fp = simulate(s);
    s[i] = save - FD_STEP;
    double fm = simulate(s);
    s[i] = save;
    check("dx_T/ds_i", ds[i], (fp - fm) / (2.0 * FD_STEP), FD_TOL);
  }
  return check_done();
}
