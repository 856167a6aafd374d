/* realloc growth in a loop: a dynamic array doubles its capacity while terms x_i * x_{i+1}
 * are appended, starting from NULL; then a weighted sum of the array. The shadow must grow
 * alongside and keep the adjoints of the elements copied by each realloc. */
#include <stdlib.h>
#include "enzyme.h"

#define N 11

double f(const double *x, int n) {
  double *buf = NULL;
  int len = 0, cap = 0;
  for (int i = 0; i + 1 < n; i++) {
    if (len == cap) {
      cap = cap ? 2 * cap : 1;
      buf = realloc(buf, sizeof(double) * cap);
    }
    buf[len++] = x[i] * x[i + 1];
  }
  double s = 0.0;
  for (int i = 0; i < len; i++)
    s += (i + 1) * sin(buf[i]);
  free(buf);
  return s;
}

int main(void) {
  double x[N], dx[N] = {0};
  for (int i = 0; i < N; i++)
    x[i] = 0.3 * i - 1.1;
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
