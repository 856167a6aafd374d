/* The numerically stable log-sum-exp; its gradient is the softmax. The max is found with
 * a data-dependent comparison and subtracted (its derivative cancels). */
#include "enzyme.h"

#define N 6

double logsumexp(const double *x, int n) {
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > m)
      m = x[i];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += exp(x[i] - m);
  return m + log(s);
}

int main(void) {
  double x[N] = {0.1, 2.0, -1.0, 0.5, 1.9, -3.0}, dx[N] = {0};
  __enzyme_autodiff((void *)logsumexp, enzyme_dup, x, dx, N);
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s += exp(x[i]);
  double total = 0.0;
  for (int i = 0; i < N; i++) {
    check("softmax_i", dx[i], exp(x[i]) / s, 1e-12);
    total += dx[i];
  }
  check("softmax sums to 1", total, 1.0, 1e-12);
  return check_done();
}
