/* Classical RK4 with the right-hand side through a function pointer and a stage buffer
 * local to the integrator (its shadow carries the stage adjoints): Lotka-Volterra.
 * Gradient of a weighted final state against central finite differences. */
#include "enzyme.h"

enum { DIM = 2, NPARAM = 4, NIN = DIM + NPARAM };

typedef void (*Rhs)(const double *y, const double *theta, double *dydt);

__attribute__((noinline)) void lotka(const double *y, const double *theta, double *dydt) {
  dydt[0] = theta[0] * y[0] - theta[1] * y[0] * y[1];
  dydt[1] = -theta[2] * y[1] + theta[3] * y[0] * y[1];
}

double integrate(Rhs rhs, const double *in, int steps, double dt, double *y) {
  double k1[DIM], k2[DIM], k3[DIM], k4[DIM], tmp[DIM];
  const double *theta = in + DIM;
  for (int i = 0; i < DIM; i++)
    y[i] = in[i];
  for (int s = 0; s < steps; s++) {
    rhs(y, theta, k1);
    for (int i = 0; i < DIM; i++)
      tmp[i] = y[i] + 0.5 * dt * k1[i];
    rhs(tmp, theta, k2);
    for (int i = 0; i < DIM; i++)
      tmp[i] = y[i] + 0.5 * dt * k2[i];
    rhs(tmp, theta, k3);
    for (int i = 0; i < DIM; i++)
      tmp[i] = y[i] + dt * k3[i];
    rhs(tmp, theta, k4);
    for (int i = 0; i < DIM; i++)
      y[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
  }
  return y[0] + 2.0 * y[1];
}

static volatile Rhs chosen = lotka;

int main(void) {
  double in[NIN] = {1.0, 0.5, 1.1, 0.4, 0.4, 0.1}, din[NIN] = {0};
  double y[DIM], dy[DIM] = {0};
  int steps = 40;
  double dt = 0.1;
  Rhs rhs = chosen;
  __enzyme_autodiff((void *)integrate, enzyme_const, rhs, enzyme_dup, in, din, enzyme_const,
                    steps, enzyme_const, dt, enzyme_dup, y, dy);
  for (int i = 0; i < NIN; i++) {
    double saved = in[i];
    in[i] = saved + FD_STEP;
    double up = integrate(rhs, in, steps, dt, y);
    in[i] = saved - FD_STEP;
    double down = integrate(rhs, in, steps, dt, y);
    in[i] = saved;
    char what[32];
    snprintf(what, sizeof what, "d/din[%d]", i);
    check(what, din[i], (up - down) / (2 * FD_STEP), 1e-5);
  }
  return check_done();
}
