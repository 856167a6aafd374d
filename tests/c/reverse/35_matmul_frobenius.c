/* Matrix product C = A B (3x4 times 4x2) and the loss 0.5 ||C||_F^2;
 * dA = C B^T, dB = A^T C, computed analytically in main. */
#include "enzyme.h"

#define R 3
#define K 4
#define S 2

double loss(const double *a, const double *b) {
  double l = 0.0;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < S; j++) {
      double c = 0.0;
      for (int k = 0; k < K; k++)
        c += a[i * K + k] * b[k * S + j];
      l += 0.5 * c * c;
    }
  return l;
}

int main(void) {
  double a[R * K], b[K * S], da[R * K] = {0}, db[K * S] = {0}, c[R * S];
  for (int i = 0; i < R * K; i++)
    a[i] = 0.1 * i - 0.4;
  for (int i = 0; i < K * S; i++)
    b[i] = cos(i);
  __enzyme_autodiff((void *)loss, a, da, b, db);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < S; j++) {
      c[i * S + j] = 0.0;
      for (int k = 0; k < K; k++)
        c[i * S + j] += a[i * K + k] * b[k * S + j];
    }
  for (int i = 0; i < R; i++)
    for (int k = 0; k < K; k++) {
      double want = 0.0;
      for (int j = 0; j < S; j++)
        want += c[i * S + j] * b[k * S + j];
      check("dA_ik", da[i * K + k], want, 1e-12);
    }
  for (int k = 0; k < K; k++)
    for (int j = 0; j < S; j++) {
      double want = 0.0;
      for (int i = 0; i < R; i++)
        want += a[i * K + k] * c[i * S + j];
      check("dB_kj", db[k * S + j], want, 1e-12);
    }
  return check_done();
}
