/* GMM's triangle through `restrict` pointers: out = L x with L's strictly-lower part packed
 * column by column (inner loops of 8 down to 0 iterations, even and odd), value = |out|^2.
 * Both the primal's `out[j] += l[k] * x[i]` and the reversed `d_l[k] += d_out[j] * x[i];
 * d_x[i] += d_out[j] * l[k]` are loops adc's `vectorize` runs two iterations at a time
 * (the derivative keeps `l`'s `restrict`, so the store through `d_l` provably misses `l`).
 * Every entry of the gradient is checked against central finite differences. */
#include "enzyme.h"

#define N 9
#define NL (N * (N - 1) / 2)

double tri_sq(const double *restrict l, const double *restrict x, int n) {
  double out[N];
  for (int r = 0; r < n; r++)
    out[r] = 0.5 * x[r];
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      out[j] += l[k] * x[i];
      k++;
    }
  double s = 0.0;
  for (int r = 0; r < n; r++)
    s += out[r] * out[r];
  return s;
}

/* One argument varied at a time, for check_fd_gradient. */
static const double *fixed_l, *fixed_x;
static double tri_of_l(const double *l, int nl) {
  (void)nl;
  return tri_sq(l, fixed_x, N);
}
static double tri_of_x(const double *x, int n) { return tri_sq(fixed_l, x, n); }

int main(void) {
  double l[NL], x[N], dl[NL] = {0}, dx[N] = {0};
  for (int k = 0; k < NL; k++)
    l[k] = sin(0.7 * k + 0.1);
  for (int i = 0; i < N; i++)
    x[i] = cos(0.3 * i) + 0.2;
  __enzyme_autodiff((void *)tri_sq, enzyme_dup, l, dl, enzyme_dup, x, dx, enzyme_const, N);
  fixed_l = l;
  fixed_x = x;
  check_fd_gradient(tri_of_l, l, dl, NL);
  check_fd_gradient(tri_of_x, x, dx, N);
  return check_done();
}
