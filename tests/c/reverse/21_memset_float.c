/* memset and memcpy on float data: an accumulator cleared with memset, filled from the
 * input, copied out with memcpy. out_j = sum_i x_i^2 * (i+j+1); the seed on out is 1 for
 * every j, so dx_i = sum_j 2 x_i (i+j+1). Single precision: tolerance 1e-5. */
#include <string.h>
#include "enzyme.h"

#define N 4
#define M 3

void f(const float *x, float *out) {
  float acc[M];
  memset(acc, 0, sizeof acc);
  for (int j = 0; j < M; j++)
    for (int i = 0; i < N; i++)
      acc[j] += x[i] * x[i] * (float)(i + j + 1);
  memcpy(out, acc, sizeof acc);
}

int main(void) {
  float x[N] = {0.5f, -1.0f, 1.5f, 0.25f}, dx[N] = {0};
  float out[M], dout[M] = {1.0f, 1.0f, 1.0f};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, out, dout);
  for (int i = 0; i < N; i++) {
    double want = 0.0;
    for (int j = 0; j < M; j++)
      want += 2.0 * x[i] * (i + j + 1);
    check("dx_i", dx[i], want, 1e-5);
  }
  for (int j = 0; j < M; j++)
    check("dout_j consumed", dout[j], 0.0, EXACT_TOL);
  return check_done();
}
