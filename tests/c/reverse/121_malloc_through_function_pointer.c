/* `malloc` called through a function pointer kept in a global struct (Enzyme's
 * ReverseMode/metamalloc): the indirect call's only possible target is an allocator, so
 * the block it returns gets a zeroed shadow block of the same size, freed where the
 * reverse pass undoes the call. Before, adc refused the pointer's shadow at -O2. The
 * block is freed in the primal too, after a noinline helper squared it in place. Checked
 * in reverse and split mode, and in forward mode, whose shadow block comes from calling
 * the pointer again. */
#include <stdlib.h>

#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} aug;
aug __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct {
  int count;
  void *(*allocate)(unsigned long);
} allocator = {0, malloc};

__attribute__((noinline)) static void *allocate(unsigned long bytes) {
  return allocator.allocate(bytes);
}

__attribute__((noinline)) static void square(double *x) { *x *= *x; }

double cube_plus(double x) {
  double *mem = (double *)allocate(2 * sizeof(double));
  mem[0] = x;
  mem[1] = x + 1;
  square(mem);
  double r = mem[0] * x + mem[1];
  free(mem);
  return r;
}

int main(void) {
  for (double x = -1.5; x <= 1.5; x += 0.75) {
    double want = 3 * x * x + 1;
    char what[48];
    snprintf(what, sizeof what, "reverse d/dx at %g", x);
    check(what, __enzyme_autodiff((void *)cube_plus, x), want, EXACT_TOL);
    aug a = __enzyme_augmentfwd((void *)cube_plus, x);
    snprintf(what, sizeof what, "split primal at %g", x);
    check(what, a.primal, x * x * x + x + 1, EXACT_TOL);
    snprintf(what, sizeof what, "split d/dx at %g", x);
    check(what, __enzyme_reverse((void *)cube_plus, x, 1.0, a.tape), want, EXACT_TOL);
    snprintf(what, sizeof what, "forward d/dx at %g", x);
    check(what, __enzyme_fwddiff((void *)cube_plus, x, 1.0), want, EXACT_TOL);
  }
  return check_done();
}
