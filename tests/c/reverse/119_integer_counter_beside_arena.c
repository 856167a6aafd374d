/* A bump allocator handed its arena and the address of its integer offset (Enzyme's
 * ReverseMode/customalloc at -O0): the call returns a pointer into the arena that active
 * values are stored through, which makes every pointer argument of the call shadowed;
 * the offset, a global of integers only, was asked for a shadow too and the whole file
 * was refused. Its memory is constant now. Checked in reverse and split mode (before,
 * split mode declared no shadow globals); forward mode gives globals no shadow, as
 * tests/c/forward/errors/global_arena.c checks. */
#include <math.h>

#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} aug;
aug __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

static char arena[1024];
static int offset;

__attribute__((noinline)) static void *arena_alloc(void *base, int size, int *off) {
  char *cur = (char *)base;
  int prev = *off;
  *off += size;
  return &cur[prev];
}

__attribute__((noinline)) static double *store_pair(double x) {
  double *m = (double *)arena_alloc(arena, 2 * sizeof(double), &offset);
  m[0] = x * x;
  m[1] = sin(x);
  return m;
}

double model(double x) {
  offset = 0;
  double *m = store_pair(x);
  return m[0] * m[1] + m[1];
}

int main(void) {
  for (double x = -1.0; x <= 1.5; x += 0.5) {
    double want = 2 * x * sin(x) + x * x * cos(x) + cos(x);
    char what[64];
    snprintf(what, sizeof what, "reverse d/dx at %g", x);
    check(what, __enzyme_autodiff((void *)model, x), want, 1e-12);
    aug a = __enzyme_augmentfwd((void *)model, x);
    snprintf(what, sizeof what, "split primal at %g", x);
    check(what, a.primal, x * x * sin(x) + sin(x), 1e-12);
    snprintf(what, sizeof what, "split d/dx at %g", x);
    check(what, __enzyme_reverse((void *)model, x, 1.0, a.tape), want, 1e-12);
    snprintf(what, sizeof what, "offset after the calls at %g", x);
    check(what, offset, 16, 0);
  }
  return check_done();
}
