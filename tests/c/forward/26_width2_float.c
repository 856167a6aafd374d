/* Vector forward mode on float (f32) code, width 2, with branches: the tangents arrive
 * as doubles through the variadic call and are narrowed; the result is a struct of two
 * floats. Checked against width-1 calls. */
#include "fwd.h"

typedef struct {
  float d[2];
} ftangents2;
ftangents2 __enzyme_fwddiff_f2(void *, ...);
float __enzyme_fwddiff_f(void *, ...);

float g(float x, float y) {
  float r = x * y;
  if (r > 0.5f)
    r = sqrtf(r) + x;
  else
    r = r * r - y;
  return r * expf(-0.1f * x);
}

int main(void) {
  float pts[3][2] = {{0.9f, 1.2f}, {0.2f, 0.4f}, {-0.5f, 0.3f}};
  for (int p = 0; p < 3; p++) {
    float x = pts[p][0], y = pts[p][1];
    ftangents2 t = __enzyme_fwddiff_f2((void *)g, enzyme_width, 2, x, 1.0f, 0.0f, y, 0.0f, 1.0f);
    float dx = __enzyme_fwddiff_f((void *)g, x, 1.0f, y, 0.0f);
    float dy = __enzyme_fwddiff_f((void *)g, x, 0.0f, y, 1.0f);
    check("lane 0 vs scalar call", t.d[0], dx, 1e-6);
    check("lane 1 vs scalar call", t.d[1], dy, 1e-6);
  }
  return check_done();
}
