/* Structs through pointers: a particle's position and velocity with tangents in a shadow
 * struct; the kinetic plus potential energy's tangent and an updated state's tangents. */
#include "fwd.h"

typedef struct {
  double pos[2];
  double vel[2];
  int id;
} Particle;

double energy_step(Particle *p, double dt) {
  for (int k = 0; k < 2; k++)
    p->pos[k] += dt * p->vel[k];
  double r2 = p->pos[0] * p->pos[0] + p->pos[1] * p->pos[1];
  double v2 = p->vel[0] * p->vel[0] + p->vel[1] * p->vel[1];
  return 0.5 * v2 - 1.0 / sqrt(r2);
}

int main(void) {
  Particle p = {{1.0, 0.5}, {0.2, -0.3}, 7}, dp = {{0.1, 0.0}, {0.0, 1.0}, 0};
  Particle start = p;
  double dt = 0.1;
  double de = __enzyme_fwddiff((void *)energy_step, enzyme_dup, &p, &dp, enzyme_const, dt);
  double x = start.pos[0] + dt * start.vel[0], y = start.pos[1] + dt * start.vel[1];
  double dxt = 0.1 + dt * 0.0, dyt = 0.0 + dt * 1.0;
  double r2 = x * x + y * y;
  double want = start.vel[1] * 1.0 + (x * dxt + y * dyt) / (r2 * sqrt(r2));
  check("d energy", de, want, EXACT_TOL);
  check("d pos[0]", dp.pos[0], dxt, EXACT_TOL);
  check("d pos[1]", dp.pos[1], dyt, EXACT_TOL);
  check("id untouched", p.id, 7, 0.0);
  return check_done();
}
