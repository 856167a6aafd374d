/* Split mode with the tape in caller memory, as Enzyme's users write it:
 *   size = __enzyme_augmentsize(f, enzyme_dup, enzyme_dup, enzyme_const);
 *   __enzyme_augmentfwd(f, enzyme_allocated, size, enzyme_tape, mem, args...);
 *   __enzyme_reverse(f, enzyme_allocated, size, enzyme_tape, mem, args...);
 * f overwrites its input in a loop, so the reverse pass needs the tape.
 * out = sum_i x_i^2 (after x_i <- x_i * s for a constant s): d out/dx_i = 2 s^2 x_i. */
#include <stdlib.h>
#include <string.h>

#include "enzyme.h"

extern int enzyme_allocated, enzyme_tape;
void __enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
int __enzyme_augmentsize(void *, ...);

void f(double *x, double *out, int n) {
  double s = 1.5;
  double acc = 0;
  for (int i = 0; i < n; i++) {
    x[i] = x[i] * s;
    acc += x[i] * x[i];
  }
  *out = acc;
}

int main(void) {
  enum { N = 5 };
  double x0[N] = {0.5, -1.0, 2.0, 0.25, 3.0};
  double x[N], dx[N] = {0}, out = 0, dout = 1.0;
  memcpy(x, x0, sizeof x);
  int size = __enzyme_augmentsize((void *)f, enzyme_dup, enzyme_dup, enzyme_const);
  check("the tape size is positive", size > 0, 1, 0);
  void *mem = malloc(size);
  __enzyme_augmentfwd((void *)f, enzyme_allocated, size, enzyme_tape, mem, x, dx, &out, &dout,
                      enzyme_const, N);
  double want = 0;
  for (int i = 0; i < N; i++)
    want += 2.25 * x0[i] * x0[i];
  check("primal output", out, want, 1e-12);
  check("primal input overwritten", x[2], 1.5 * x0[2], EXACT_TOL);
  __enzyme_reverse((void *)f, enzyme_allocated, size, enzyme_tape, mem, x, dx, &out, &dout,
                   enzyme_const, N);
  for (int i = 0; i < N; i++) {
    char what[32];
    snprintf(what, sizeof what, "d out/d x[%d]", i);
    check(what, dx[i], 2 * 2.25 * x0[i], 1e-12);
  }
  /* The caller owns the memory: adc never frees it, so freeing it here is fine. */
  free(mem);
  return check_done();
}
