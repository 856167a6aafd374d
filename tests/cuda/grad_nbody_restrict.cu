// grad_nbody.cu with the device body's pointers declared __restrict__, as code written for
// speed declares them: `vel` cannot overwrite `pos` or `mass`, so the gradient re-reads them
// instead of keeping a tape (bench/gpu builds it with 4096 bodies).
// One n-body force step in 2-D: each thread sums the softened gravitational pull of all
// bodies on its own and moves its velocity: v_i += dt * sum_j m_j (p_j - p_i) / r^3.
#include "cuda_kernel.h"
#ifndef BODIES
#define BODIES 24
#endif
extern "C" DEVICE void __enzyme_autodiff_nbody_restrict(void *, int, const double *, double *, int,
                                               const double *, double *, int, double *, double *);

DEVICE void nbody_restrict_body(const double *__restrict__ pos, const double *__restrict__ mass,
                                 double *__restrict__ vel) {
  int i = global_index_x();
  if (i >= BODIES) return;
  double px = pos[2 * i], py = pos[2 * i + 1], fx = 0.0, fy = 0.0;
  for (int j = 0; j < BODIES; j++) {
    double dx = pos[2 * j] - px, dy = pos[2 * j + 1] - py;
    double r2 = dx * dx + dy * dy + 0.01;
    double inv = mass[j] / (r2 * __nv_sqrt(r2));
    fx += dx * inv;
    fy += dy * inv;
  }
  vel[2 * i] += 0.01 * fx;
  vel[2 * i + 1] += 0.01 * fy;
}

GLOBAL void nbody_restrict(const double *pos, const double *mass, double *vel) {
  nbody_restrict_body(pos, mass, vel);
}

REF void nbody_restrict_ref(const double *pos, const double *mass, double *vel) {
  double f[2 * BODIES];
  for (int i = 0; i < BODIES; i++) {
    double px = pos[2 * i], py = pos[2 * i + 1], fx = 0.0, fy = 0.0;
    for (int j = 0; j < BODIES; j++) {
      double dx = pos[2 * j] - px, dy = pos[2 * j + 1] - py;
      double r2 = dx * dx + dy * dy + 0.01;
      double inv = mass[j] / (r2 * __nv_sqrt(r2));
      fx += dx * inv;
      fy += dy * inv;
    }
    f[2 * i] = fx;
    f[2 * i + 1] = fy;
  }
  for (int k = 0; k < 2 * BODIES; k++) vel[k] += 0.01 * f[k];
}

GLOBAL void nbody_restrict_grad(const double *pos, double *dpos, const double *mass,
                                double *dmass, double *vel, double *dvel) {
  __enzyme_autodiff_nbody_restrict((void *)nbody_restrict_body, enzyme_dup, pos, dpos, enzyme_dup,
                                   mass, dmass, enzyme_dup, vel, dvel);
}
