/* memcpy of active double data into a local buffer, then a computation on the copy.
 * L = sum_i copy_i * copy_{(i+1)%n}; dL/dx_i = x_{i-1} + x_{i+1} (cyclic). */
#include <string.h>
#include "enzyme.h"

#define N 6

double f(const double *x) {
  double buf[N];
  memcpy(buf, x, sizeof buf);
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s += buf[i] * buf[(i + 1) % N];
  return s;
}

int main(void) {
  double x[N], dx[N] = {0};
  for (int i = 0; i < N; i++)
    x[i] = cos(0.7 * i);
  __enzyme_autodiff((void *)f, x, dx);
  for (int i = 0; i < N; i++)
    check("dL/dx_i", dx[i], x[(i + N - 1) % N] + x[(i + 1) % N], 1e-12);
  return check_done();
}
