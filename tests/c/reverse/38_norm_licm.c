/* The design document's example: out_i = in_i / mag(in) with mag called inside the loop.
 * Loss = sum_i out_i * w_i; d/din_j = w_j / m - (sum_i w_i in_i) in_j / m^3. */
#include "enzyme.h"

#define N 8

__attribute__((noinline)) static double mag(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
  return sqrt(s);
}

void norm(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++)
    out[i] = in[i] / mag(in, n);
}

int main(void) {
  double in[N], din[N] = {0}, out[N], w[N], dout[N];
  for (int i = 0; i < N; i++) {
    in[i] = 0.5 + 0.25 * i;
    w[i] = cos(i);
    dout[i] = w[i];
  }
  __enzyme_autodiff((void *)norm, enzyme_dup, out, dout, enzyme_dup, in, din, N);
  double m = 0.0, wx = 0.0;
  for (int i = 0; i < N; i++) {
    m += in[i] * in[i];
    wx += w[i] * in[i];
  }
  m = sqrt(m);
  for (int j = 0; j < N; j++)
    check("dL/din_j", din[j], w[j] / m - wx * in[j] / (m * m * m), 1e-12);
  return check_done();
}
