/* RK4: classical fourth-order Runge-Kutta integration of the ODE in ode.h, right-hand side
 * through a function pointer; gradient of the final state with respect to the initial
 * conditions and the parameters. Size argument: the step count (10..10^5). */
#include "ode.h"

double integrate(Rhs rhs, const double *inputs, int steps, double dt, double *work) {
  double *y = work, *k1 = work + DIM, *k2 = work + 2 * DIM, *k3 = work + 3 * DIM;
  double *k4 = work + 4 * DIM;
  const double *theta = inputs + DIM;
  double tmp[DIM];
  for (int i = 0; i < DIM; i++)
    y[i] = inputs[i];
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
