/* GMM's scratch arrays: `q = exp(w[0..D])` is filled once in a first loop, only read in
 * the loop nest over points, and freed before the return; `t` is rewritten for every
 * point. The primal's frees move to the reverse pass (it reads `q` again instead of
 * taping it per point), so the derivative must neither read freed memory nor leak
 * (valgrind runs it too). */
#include <stdlib.h>
#include "enzyme.h"

#define P 5
#define D 3

static const double X[P * D] = {0.5, -0.25, 1.0, 0.75, 0.1, -0.6, -1.2, 0.3, 0.45,
                                0.05, 0.9, -0.35, 0.65, -0.8, 0.2};

double f(const double *w, int d) {
  double *q = malloc(sizeof(double) * d);
  double *t = malloc(sizeof(double) * d);
  for (int j = 0; j < d; j++)
    q[j] = exp(w[j]);
  double total = 0.0;
  for (int i = 0; i < P; i++) {
    for (int j = 0; j < d; j++)
      t[j] = q[j] * (X[i * d + j] - w[d + j]);
    double s = 0.0;
    for (int j = 0; j < d; j++)
      s += t[j] * t[j] * q[j];
    total += log(1.0 + s);
  }
  free(t);
  free(q);
  return total;
}

/* `check_fd_gradient` differentiates a function of all its entries. */
static double f_of_all(const double *w, int n) { return f(w, n / 2); }

int main(void) {
  double w[2 * D] = {0.2, -0.4, 0.1, 0.3, -0.15, 0.05}, dw[2 * D] = {0};
  __enzyme_autodiff((void *)f, w, dw, D);
  check_fd_gradient(f_of_all, w, dw, 2 * D);
  return check_done();
}
