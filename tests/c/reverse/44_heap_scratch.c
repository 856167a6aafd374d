/* A heap scratch buffer (malloc/free) inside the differentiated function: prefix sums
 * stored in it, then a weighted sum. L = sum_i (i+1) * P_i, P_i = sum_{j<=i} x_j^2:
 * dL/dx_j = 2 x_j * sum_{i>=j} (i+1). */
#include <stdlib.h>
#include "enzyme.h"

#define N 5

double f(const double *x, int n) {
  double *p = malloc(sizeof(double) * n);
  double run = 0.0;
  for (int i = 0; i < n; i++) {
    run += x[i] * x[i];
    p[i] = run;
  }
  double l = 0.0;
  for (int i = 0; i < n; i++)
    l += (i + 1) * p[i];
  free(p);
  return l;
}

int main(void) {
  double x[N] = {0.5, -1.0, 0.25, 2.0, -0.75}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  for (int j = 0; j < N; j++) {
    double weight = 0.0;
    for (int i = j; i < N; i++)
      weight += i + 1;
    check("dL/dx_j", dx[j], 2.0 * x[j] * weight, 1e-12);
  }
  return check_done();
}
