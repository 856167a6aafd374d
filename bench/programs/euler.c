/* Euler: explicit Euler integration of the ODE in ode.h, right-hand side through a
 * function pointer; gradient of the final state with respect to the initial conditions
 * and the parameters. Size argument: the step count (10..10^5). */
#include "ode.h"

double integrate(Rhs rhs, const double *inputs, int steps, double dt, double *work) {
  double *y = work, *k = work + DIM;
  const double *theta = inputs + DIM;
  for (int i = 0; i < DIM; i++)
    y[i] = inputs[i];
  for (int s = 0; s < steps; s++) {
    rhs(y, theta, k);
    for (int i = 0; i < DIM; i++)
      y[i] += dt * k[i];
  }
  return y[0] + 2.0 * y[1];
}
