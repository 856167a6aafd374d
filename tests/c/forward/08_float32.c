/* Single precision: float parameters and tangents (promoted to double through the variadic
 * call and narrowed back), a float result, float libm and a float array. Tolerance 1e-5. */
#include "fwd.h"

float __enzyme_fwddiff_f(void *, ...);

float f(float x, float y) { return sinf(x) * expf(0.5f * y) + x * y * y; }

float cubes(const float *v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += v[i] * v[i] * v[i];
  return s;
}

int main(void) {
  float x = 0.6f, y = -0.4f;
  double fx = cos(x) * exp(0.5 * y) + y * y;
  double fy = 0.5 * sin(x) * exp(0.5 * y) + 2.0 * x * y;
  check("df along (1, 2)", __enzyme_fwddiff_f((void *)f, x, 1.0f, y, 2.0f), fx + 2.0 * fy,
        1e-5);
  float v[3] = {1.0f, -0.5f, 2.0f}, dv[3] = {1.0f, 1.0f, 0.5f};
  double want = 0.0;
  for (int i = 0; i < 3; i++)
    want += 3.0 * v[i] * v[i] * dv[i];
  check("d sum v^3", __enzyme_fwddiff_f((void *)cubes, v, dv, 3), want, 1e-5);
  return check_done();
}
