/* An array of structs: particles with position, velocity and an integer id.
 * E = sum (0.5 v^2 + 0.5 k x^2) * w(id), with w(id) = 1 + id%2. */
#include "enzyme.h"

typedef struct {
  double x, v;
  int id;
} Particle;

double energy(const Particle *p, int n, double k) {
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    double w = 1.0 + (p[i].id % 2);
    e += (0.5 * p[i].v * p[i].v + 0.5 * k * p[i].x * p[i].x) * w;
  }
  return e;
}

int main(void) {
  Particle p[4], dp[4] = {{0}};
  for (int i = 0; i < 4; i++) {
    p[i].x = 0.5 * i - 1.0;
    p[i].v = 1.0 / (i + 1.0);
    p[i].id = i + 3;
  }
  double k = 2.5;
  __enzyme_autodiff((void *)energy, enzyme_dup, p, dp, 4, enzyme_const, k);
  for (int i = 0; i < 4; i++) {
    double w = 1.0 + (p[i].id % 2);
    check("dE/dx_i", dp[i].x, k * p[i].x * w, 1e-12);
    check("dE/dv_i", dp[i].v, p[i].v * w, 1e-12);
    check("id shadow untouched", (double)dp[i].id, 0.0, EXACT_TOL);
  }
  return check_done();
}
