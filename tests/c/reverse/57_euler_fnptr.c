/* Explicit Euler integration with the right-hand side reached through a function
 * pointer (as an integrator library would take it): a damped pendulum with parameters.
 * Gradient of a weighted final state with respect to the initial state and parameters. */
#include "enzyme.h"

enum { DIM = 2, NPARAM = 2, NIN = DIM + NPARAM };

typedef void (*Rhs)(const double *y, const double *theta, double *dydt);

__attribute__((noinline)) void pendulum(const double *y, const double *theta, double *dydt) {
  dydt[0] = y[1];
  dydt[1] = -theta[0] * sin(y[0]) - theta[1] * y[1];
}

double integrate(Rhs rhs, const double *in, int steps, double dt, double *work) {
  double *y = work, *k = work + DIM;
  for (int i = 0; i < DIM; i++)
    y[i] = in[i];
  for (int s = 0; s < steps; s++) {
    rhs(y, in + DIM, k);
    for (int i = 0; i < DIM; i++)
      y[i] += dt * k[i];
  }
  return y[0] + 2.0 * y[1];
}

static volatile Rhs chosen = pendulum;

int main(void) {
  double in[NIN] = {0.8, 0.1, 2.0, 0.3}, din[NIN] = {0};
  double work[2 * DIM] = {0}, dwork[2 * DIM] = {0};
  int steps = 50;
  double dt = 0.05;
  Rhs rhs = chosen;
  __enzyme_autodiff((void *)integrate, enzyme_const, rhs, enzyme_dup, in, din, enzyme_const,
                    steps, enzyme_const, dt, enzyme_dup, work, dwork);
  for (int i = 0; i < NIN; i++) {
    double saved = in[i];
    in[i] = saved + FD_STEP;
    double up = integrate(rhs, in, steps, dt, work);
    in[i] = saved - FD_STEP;
    double down = integrate(rhs, in, steps, dt, work);
    in[i] = saved;
    char what[32];
    snprintf(what, sizeof what, "d/din[%d]", i);
    check(what, din[i], (up - down) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
