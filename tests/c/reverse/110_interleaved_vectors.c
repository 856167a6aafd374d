/* Loops that fill arrays of structs of 7 and of 3 doubles from one input each: at -O2 the
 * loop vectorizer writes the interleaved fields as one <14 x double> and one <6 x double>
 * store built by shuffles, so the derivative runs through vectors of odd chunk counts.
 * Checked against finite differences. */
#include "enzyme.h"

struct P7 { double v[7]; };
struct P3 { double x, y, z; };

__attribute__((noinline)) static void spread7(const double *x, struct P7 *q, int n) {
  for (int i = 0; i < n; i++) {
    double a = x[i];
    q[i].v[0] = a * 1.5;
    q[i].v[1] = a * a;
    q[i].v[2] = a - 1.0;
    q[i].v[3] = a * 3.0;
    q[i].v[4] = a + 2.0;
    q[i].v[5] = a * a * a;
    q[i].v[6] = a * 0.25;
  }
}

__attribute__((noinline)) static void spread3(const double *x, struct P3 *q, int n) {
  for (int i = 0; i < n; i++) {
    double a = x[i];
    q[i].x = a * 1.5;
    q[i].y = a * a;
    q[i].z = a - 1.0;
  }
}

static double f(const double *x, int n) {
  struct P7 q7[32];
  struct P3 q3[32];
  spread7(x, q7, n);
  spread3(x, q3, n);
  double s = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < 7; j++) s += q7[i].v[j] * (j + 1) * q7[i].v[j];
    s += q3[i].x * q3[i].y - q3[i].z * (i + 1);
  }
  return s;
}

int main(void) {
  enum { N = 19 };
  double x[N], dx[N];
  for (int i = 0; i < N; i++) x[i] = 0.1 * (i % 11) - 0.3 + 0.01 * i;
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
