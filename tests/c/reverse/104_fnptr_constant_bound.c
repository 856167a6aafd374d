/* A right-hand side passed to __enzyme_autodiff as a constant function address: adc
 * differentiates a copy of `integrate` with that parameter bound (specialize-args), so the
 * call through it in `integrate` becomes direct and is inlined, and the noinline helper
 * `midpoint` receives it as a constant function address (whose shadow is the address
 * itself). Two right-hand sides give two copies; the third call shares the first's. Each
 * gradient is checked against central finite differences. */
#include "enzyme.h"

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

/* Midpoint step: the function pointer travels on to a helper. */
__attribute__((noinline)) void midpoint(Rhs rhs, double *y, const double *theta, double dt) {
  double k[DIM], mid[DIM];
  rhs(y, theta, k);
  for (int i = 0; i < DIM; i++)
    mid[i] = y[i] + 0.5 * dt * k[i];
  rhs(mid, theta, k);
  for (int i = 0; i < DIM; i++)
    y[i] += dt * k[i];
}

double integrate(Rhs rhs, const double *in, int steps, double dt) {
  double y[DIM] = {in[0], in[1]}, k[DIM];
  for (int s = 0; s < steps; s++) {
    midpoint(rhs, y, in + DIM, dt);
    rhs(y, in + DIM, k); /* a damping pull towards the slope's direction */
    for (int i = 0; i < DIM; i++)
      y[i] -= 0.01 * dt * k[i];
  }
  return y[0] + 3.0 * y[1];
}

static const int steps = 30;
static const double dt = 0.05;

static double with_oscillator(const double *in, int n) {
  (void)n;
  return integrate(oscillator, in, steps, dt);
}

static double with_logistic(const double *in, int n) {
  (void)n;
  return integrate(logistic, in, steps, dt);
}

int main(void) {
  double in[NIN] = {0.3, -0.2, 1.5, 0.2, 0.4};
  double d_osc[NIN] = {0}, d_log[NIN] = {0}, d_again[NIN] = {0};
  __enzyme_autodiff((void *)integrate, enzyme_const, oscillator, enzyme_dup, in, d_osc,
                    enzyme_const, steps, enzyme_const, dt);
  __enzyme_autodiff((void *)integrate, enzyme_const, logistic, enzyme_dup, in, d_log,
                    enzyme_const, steps, enzyme_const, dt);
  __enzyme_autodiff((void *)integrate, enzyme_const, oscillator, enzyme_dup, in, d_again,
                    enzyme_const, steps, enzyme_const, dt);
  check_fd_gradient(with_oscillator, in, d_osc, NIN);
  check_fd_gradient(with_logistic, in, d_log, NIN);
  for (int j = 0; j < NIN; j++)
    check("the shared copy's gradient", d_again[j], d_osc[j], EXACT_TOL);
  return check_done();
}
