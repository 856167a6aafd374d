/* memset and memcpy on double data inside the differentiated function: a histogram-like
 * accumulator cleared with memset, a memcpy that overwrites part of the input's copy, and
 * a weighted sum. L = sum_j (j+1) * acc_j with acc_j = sum_{i: i%3==j} c_i^2, where c is
 * x with c_0 and c_1 replaced by x_4 and x_5 through memcpy. Checked against central finite
 * differences. */
#include <string.h>
#include "enzyme.h"

#define N 6

double f(const double *x) {
  double acc[3], c[N];
  memset(acc, 0, sizeof acc);
  memcpy(c, x, sizeof c);
  memcpy(c, x + 4, 2 * sizeof(double));
  for (int i = 0; i < N; i++)
    acc[i % 3] += c[i] * c[i];
  double l = 0.0;
  for (int j = 0; j < 3; j++)
    l += (j + 1) * acc[j];
  return l;
}

int main(void) {
  double x[N] = {0.5, -1.5, 2.0, 0.25, -0.75, 1.25}, dx[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    double save = x[i];
    x[i] = save + FD_STEP;
    double fp = f(x);
    x[i] = save - FD_STEP;
    double fm = f(x);
    x[i] = save;
    check("dL/dx_i", dx[i], (fp - fm) / (2.0 * FD_STEP), FD_TOL);
  }
  check("dL/dx_0 (overwritten in the copy)", dx[0], 0.0, EXACT_TOL);
  return check_done();
}
