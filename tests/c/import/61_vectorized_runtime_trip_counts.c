// Loops clang -O2 vectorizes with a scalar fallback: runtime trip counts (a guard for
// short counts, a remainder after the vector loop), runtime alias checks between
// arguments that may overlap, a triangular inner loop and an integer reduction. The
// corpus also runs each such module with every vector loop replaced by its scalar
// fallback (adc_passes::devectorize, what reverse mode differentiates): same output.
#include <stdio.h>
__attribute__((noinline)) void axpy(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
__attribute__((noinline)) void lower_times(int d, const double *l, const double *x, double *out) {
  for (int i = 0; i < d; i++) out[i] = x[i];
  int k = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] += l[k++] * x[i];
}
__attribute__((noinline)) long checksum(int n, const int *v) {
  long s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (long)(i + 1);
  return s;
}
int main(void) {
  double x[37], y[37], l[37 * 18], out[37];
  int v[41];
  for (int i = 0; i < 37; i++) { x[i] = 0.25 * i - 3.0; y[i] = 1.0 / (i + 1); }
  for (int i = 0; i < 37 * 18; i++) l[i] = (i % 7) * 0.125 - 0.375;
  for (int i = 0; i < 41; i++) v[i] = (i * 37) % 11 - 5;
  for (int n = 0; n < 37; n += 5) axpy(n, 1.5, x, y);
  axpy(30, -0.5, y, y + 3);  // overlapping: the alias check takes the scalar loop
  double s = 0.0;
  for (int d = 1; d < 14; d += 3) {
    lower_times(d, l, x, out);
    for (int i = 0; i < d; i++) s += out[i] * (i + 1);
  }
  long c = 0;
  for (int n = 1; n < 41; n += 7) c += checksum(n, v);
  for (int i = 0; i < 37; i++) s += y[i];
  printf("%.9f %ld\n", s, c);
  return 0;
}
