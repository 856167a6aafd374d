/* Forward mode through mutual recursion: even/odd helpers that call each other, each
 * multiplying by a differentiable factor; the forward derivatives of both are synthesized
 * once and call each other. Against the analytic derivative of x^n cos-weighted products. */
#include "fwd.h"

double odd_part(double x, int n);

__attribute__((noinline)) double even_part(double x, int n) {
  if (n <= 0)
    return 1.0;
  return x * odd_part(x, n - 1);
}

__attribute__((noinline)) double odd_part(double x, int n) {
  if (n <= 0)
    return 1.0;
  return cos(x) * even_part(x, n - 1);
}

int main(void) {
  double x = 0.4;
  for (int n = 1; n <= 6; n++) {
    double got = __enzyme_fwddiff((void *)even_part, x, 1.0, n);
    /* even_part(x, n) = x^a cos(x)^b with a = ceil(n/2), b = floor(n/2). */
    int a = (n + 1) / 2, b = n / 2;
    double want = a * pow(x, a - 1) * pow(cos(x), b) - b * pow(x, a) * pow(cos(x), b - 1) * sin(x);
    check("d even_part / dx vs analytic", got, want, 1e-12);
  }
  return check_done();
}
