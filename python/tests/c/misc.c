/* Small functions for the tests of argument kinds. */
#include <math.h>

/* float32 arrays and scalars. */
float norm_f32(const float *x, float s, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; i++) acc += sinf(s * x[i]) * x[i];
  return acc;
}

/* An integer index array (never differentiated) and a long size. */
double gather_sq(const double *x, const int *idx, long k) {
  double s = 0.0;
  for (long i = 0; i < k; i++) s += x[idx[i]] * x[idx[i]];
  return s;
}

/* Writes into its argument: shows that arrays are passed without copies. */
double fill_iota(double *x, int n) {
  for (int i = 0; i < n; i++) x[i] = i;
  return 0.0;
}

/* Two outputs and two inputs, no return: y = A x (A is k x n), z = sum(x)^2 * c. */
void two_outputs(const double *a, const double *x, double c, double *y, double *z, int k, int n) {
  double s = 0.0;
  for (int j = 0; j < n; j++) s += x[j];
  for (int i = 0; i < k; i++) {
    double acc = 0.0;
    for (int j = 0; j < n; j++) acc += a[i * n + j] * x[j];
    y[i] = acc;
  }
  z[0] = s * s * c;
}
