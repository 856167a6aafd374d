/* Doubles in a static `char` arena handed out by a bump allocator (memory pools, and
 * Enzyme's ReverseMode/customalloc): the arena has no float type, but the values stored in
 * it carry derivatives, so it gets a shadow global like a `double` array would. Before,
 * adc refused the arena as memory "whose type holds no floats". */
#include "enzyme.h"

static char arena[256];
static long used;

static void *bump(long bytes) {
  void *p = &arena[used];
  used += bytes;
  return p;
}

double poly(double x) {
  used = 0;
  double *a = bump(sizeof(double));
  double *b = bump(sizeof(double));
  *a = x * x;
  *b = 3.0 * x;
  return *a * *b + *b;
}

int main(void) {
  for (double x = -1.0; x <= 1.5; x += 0.5) {
    char what[48];
    snprintf(what, sizeof what, "d/dx (3x^3 + 3x) at %g", x);
    check(what, __enzyme_autodiff((void *)poly, x), 9 * x * x + 3, 1e-12);
  }
  return check_done();
}
