/* Single precision: float parameters (promoted to double through the variadic call and
 * narrowed back), a float result and float libm (sinf, expf). Tolerance 1e-5. */
#include "enzyme.h"

float __enzyme_autodiff_f(void *, ...);

float f(float x) { return sinf(x) * expf(0.5f * x) + x * x; }

float g(const float *v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += v[i] * v[i] * v[i];
  return s;
}

int main(void) {
  float x = 0.6f;
  double want = cos(x) * exp(0.5 * x) + 0.5 * sin(x) * exp(0.5 * x) + 2.0 * x;
  check("d/dx sinf(x)expf(x/2)+x^2", __enzyme_autodiff_f((void *)f, x), want, 1e-5);
  float v[3] = {1.0f, -0.5f, 2.0f}, dv[3] = {0};
  __enzyme_autodiff_f((void *)g, v, dv, 3);
  for (int i = 0; i < 3; i++)
    check("d/dv_i sum v^3", dv[i], 3.0 * v[i] * v[i], 1e-5);
  return check_done();
}
