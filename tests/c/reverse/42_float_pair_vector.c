/* Two active floats: clang returns a struct of two floats as <2 x float>, so the
 * derivative's {f32, f32} must be repacked into a vector. f(a, b) = a^2 b + sinf(b). */
#include "enzyme.h"

typedef struct { float da, db; } FPair;
FPair __enzyme_autodiff_fpair(void *, ...);

float f(float a, float b) { return a * a * b + sinf(b); }

int main(void) {
  float a = 1.5f, b = -0.5f;
  FPair g = __enzyme_autodiff_fpair((void *)f, a, b);
  check("df/da", g.da, 2.0 * a * b, 1e-5);
  check("df/db", g.db, a * a + cos(b), 1e-5);
  return check_done();
}
