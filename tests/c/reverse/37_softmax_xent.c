/* Softmax cross-entropy against a fixed label: dL/dz_i = softmax_i - [i == label]. */
#include "enzyme.h"

#define N 5

double xent(const double *z, int label) {
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s += exp(z[i]);
  return -(z[label] - log(s));
}

int main(void) {
  double z[N] = {0.2, -1.0, 1.5, 0.0, 0.7}, dz[N] = {0};
  int label = 2;
  __enzyme_autodiff((void *)xent, enzyme_dup, z, dz, enzyme_const, label);
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s += exp(z[i]);
  for (int i = 0; i < N; i++)
    check("dL/dz_i", dz[i], exp(z[i]) / s - (i == label ? 1.0 : 0.0), 1e-12);
  return check_done();
}
