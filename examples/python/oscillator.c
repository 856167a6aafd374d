/* A Duffing oscillator, the C model of examples/python/fit_oscillator.py:
 *
 *     x'' = -k x - a x^3 - c x' + F cos(omega t)
 *
 * integrated with classical Runge-Kutta (RK4). The parameters p = {k, a, c, F} are what
 * the example fits; adc synthesizes the gradients with respect to them. */
#include <math.h>

static void rhs(const double p[4], double omega, double t, const double s[2], double ds[2]) {
  double x = s[0], v = s[1];
  ds[0] = v;
  ds[1] = -p[0] * x - p[1] * x * x * x - p[2] * v + p[3] * cos(omega * t);
}

static void rk4_step(const double p[4], double omega, double t, double dt, double s[2]) {
  double k1[2], k2[2], k3[2], k4[2], tmp[2];
  rhs(p, omega, t, s, k1);
  for (int j = 0; j < 2; j++) tmp[j] = s[j] + 0.5 * dt * k1[j];
  rhs(p, omega, t + 0.5 * dt, tmp, k2);
  for (int j = 0; j < 2; j++) tmp[j] = s[j] + 0.5 * dt * k2[j];
  rhs(p, omega, t + 0.5 * dt, tmp, k3);
  for (int j = 0; j < 2; j++) tmp[j] = s[j] + dt * k3[j];
  rhs(p, omega, t + dt, tmp, k4);
  for (int j = 0; j < 2; j++) s[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
}

/* The trajectory: traj[i] = (x, v) after i + 1 steps from s0. */
void simulate(const double p[4], const double s0[2], double *traj, int steps, double dt,
              double omega) {
  double s[2] = {s0[0], s0[1]};
  for (int i = 0; i < steps; i++) {
    rk4_step(p, omega, i * dt, dt, s);
    traj[2 * i] = s[0];
    traj[2 * i + 1] = s[1];
  }
}

/* The mean squared error of the positions against observations obs[0..steps). */
double fit_loss(const double p[4], const double s0[2], const double *obs, int steps, double dt,
                double omega) {
  double s[2] = {s0[0], s0[1]};
  double loss = 0.0;
  for (int i = 0; i < steps; i++) {
    rk4_step(p, omega, i * dt, dt, s);
    double r = s[0] - obs[i];
    loss += r * r;
  }
  return loss / steps;
}
