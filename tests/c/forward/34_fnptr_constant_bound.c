/* Forward mode with a right-hand side passed to __enzyme_fwddiff as a constant function
 * address: as in reverse mode (tests/c/reverse/104_fnptr_constant_bound.c), adc
 * differentiates a copy of `integrate` with that parameter bound (specialize-args), so the
 * calls through it become direct. Two right-hand sides give two copies. Every
 * directional derivative along a unit vector is checked against central finite
 * differences. */
#include "fwd.h"

enum { DIM = 2, NPARAM = 3, NIN = DIM + NPARAM };

typedef void (*Rhs)(const double *y, const double *theta, double *dydt);

__attribute__((noinline)) void oscillator(const double *y, const double *theta, double *dydt) {
  dydt[0] = y[1];
  dydt[1] = -theta[0] * y[0] - theta[1] * y[1] + theta[2] * sin(y[0]);
}

__attribute__((noinline)) void logistic(const double *y, const double *theta, double *dydt) {
  dydt[0] = theta[0] * y[0] * (1.0 - y[0] / (1.0 + theta[1] * theta[1]));
  dydt[1] = -theta[2] * y[1] + y[0] * y[1];
}

double integrate(Rhs rhs, const double *in, int steps, double dt) {
  double y[DIM] = {in[0], in[1]}, k[DIM], mid[DIM];
  for (int s = 0; s < steps; s++) {
    rhs(y, in + DIM, k);
    for (int i = 0; i < DIM; i++)
      mid[i] = y[i] + 0.5 * dt * k[i];
    rhs(mid, in + DIM, k);
    for (int i = 0; i < DIM; i++)
      y[i] += dt * k[i];
  }
  return y[0] + 3.0 * y[1];
}

static const int steps = 30;
static const double dt = 0.05;

static double central_difference(Rhs rhs, const double *in, int j) {
  double plus[NIN], minus[NIN], h = 1e-6;
  for (int i = 0; i < NIN; i++)
    plus[i] = minus[i] = in[i];
  plus[j] += h;
  minus[j] -= h;
  return (integrate(rhs, plus, steps, dt) - integrate(rhs, minus, steps, dt)) / (2 * h);
}

int main(void) {
  double in[NIN] = {0.3, -0.2, 1.5, 0.2, 0.4};
  for (int j = 0; j < NIN; j++) {
    double direction[NIN] = {0};
    direction[j] = 1.0;
    double d_osc = __enzyme_fwddiff((void *)integrate, enzyme_const, oscillator, enzyme_dup, in,
                                    direction, enzyme_const, steps, enzyme_const, dt);
    double d_log = __enzyme_fwddiff((void *)integrate, enzyme_const, logistic, enzyme_dup, in,
                                    direction, enzyme_const, steps, enzyme_const, dt);
    check("oscillator tangent vs finite differences", d_osc, central_difference(oscillator, in, j),
          1e-6);
    check("logistic tangent vs finite differences", d_log, central_difference(logistic, in, j),
          1e-6);
  }
  return check_done();
}
