/* A 2-D five-point stencil (the discrete Laplacian) on an N x N grid; the loss is the sum
 * of squares of the interior Laplacian. Gradient vs central finite differences. */
#include "enzyme.h"

#define N 6

double energy(const double *u) {
  double e = 0.0;
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) {
      double lap = u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] +
                   u[i * N + j + 1] - 4.0 * u[i * N + j];
      e += lap * lap;
    }
  return e;
}

int main(void) {
  double u[N * N], du[N * N] = {0};
  for (int i = 0; i < N * N; i++)
    u[i] = sin(0.37 * i) + 0.1 * (i % N);
  __enzyme_autodiff((void *)energy, enzyme_dup, u, du);
  for (int i = 0; i < N * N; i++) {
    double save = u[i];
    u[i] = save + FD_STEP;
    double fp = energy(u);
    u[i] = save - FD_STEP;
    double fm = energy(u);
    u[i] = save;
    check("dE/du_i", du[i], (fp - fm) / (2.0 * FD_STEP), FD_TOL);
  }
  return check_done();
}
