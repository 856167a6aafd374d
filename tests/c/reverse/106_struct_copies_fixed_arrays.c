/* Structs holding fixed arrays and integers, copied whole (a local copy of an array
 * element, a struct passed by value) and indexed by a variable: the copies must know
 * which bytes are doubles. A variable index into `double pos[3]` stays in that array, so
 * the integers after it stay integers (before, the doubles spread to every offset of the
 * struct and the copy was a "conflicting facts" error at -O0). */
#include "enzyme.h"

typedef struct {
  double pos[3];
  double vel[3];
  int id;
  int alive;
} Particle;

typedef struct {
  double a[4];
  int n;
} Pack;

__attribute__((noinline)) static double pack_sum(Pack p) {
  double s = 0;
  for (int i = 0; i < p.n; i++)
    s += p.a[i] * p.a[i] / p.n;
  return s;
}

__attribute__((noinline)) double energy(Particle *ps, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    Particle q = ps[i];
    if (!q.alive)
      continue;
    Pack p = {{q.pos[0], q.vel[1], q.pos[2] * q.vel[0], 1.0}, 3 + i % 2};
    for (int k = 0; k < 3; k++)
      e += 0.5 * q.vel[k] * q.vel[k] + q.pos[k] * q.id;
    e += pack_sum(p);
  }
  return e;
}

static Particle start[3] = {{{1, 2, 3}, {0.1, 0.2, 0.3}, 1, 1},
                            {{4, 5, 6}, {0.4, 0.5, 0.6}, 2, 0},
                            {{7, 8, 9}, {0.7, 0.8, 0.9}, 3, 1}};

/* The energy as a function of the 18 doubles of the three particles. */
static double energy_of(const double *x, int n) {
  Particle ps[3];
  for (int i = 0; i < 3; i++) {
    ps[i] = start[i];
    for (int k = 0; k < 3; k++) {
      ps[i].pos[k] = x[6 * i + k];
      ps[i].vel[k] = x[6 * i + 3 + k];
    }
  }
  (void)n;
  return energy(ps, 3);
}

int main(void) {
  Particle ps[3], dps[3] = {0};
  double x[18], dx[18];
  for (int i = 0; i < 3; i++) {
    ps[i] = start[i];
    for (int k = 0; k < 3; k++) {
      x[6 * i + k] = start[i].pos[k];
      x[6 * i + 3 + k] = start[i].vel[k];
    }
  }
  __enzyme_autodiff((void *)energy, enzyme_dup, ps, dps, enzyme_const, 3);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) {
      dx[6 * i + k] = dps[i].pos[k];
      dx[6 * i + 3 + k] = dps[i].vel[k];
    }
  check_fd_gradient(energy_of, x, dx, 18);
  check("integers untouched", dps[0].id + dps[2].alive, 0, 0);
  return check_done();
}
