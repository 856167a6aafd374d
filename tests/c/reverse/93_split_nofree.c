/* enzyme_nofree: the reverse call leaves an adc-allocated tape alone, so the caller frees
 * it (a double free would abort the program). Also checks enzyme_tape naming the tape of
 * the reverse call instead of passing it last.
 * h(v) = v[0] v[1] + exp(v[2]); gradient (v[1], v[0], exp(v[2])). */
#include <stdlib.h>

#include "enzyme.h"

extern int enzyme_nofree, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

void h(const double *v, double *out) { *out = v[0] * v[1] + exp(v[2]); }

int main(void) {
  double v[3] = {1.25, -0.5, 0.3}, dv[3] = {0}, out, dout = 1.0;
  void *tape = __enzyme_augmentfwd((void *)h, v, dv, &out, &dout);
  check("primal", out, v[0] * v[1] + exp(v[2]), EXACT_TOL);
  __enzyme_reverse((void *)h, enzyme_nofree, enzyme_tape, tape, v, dv, &out, &dout);
  check("dh/dv0", dv[0], v[1], 1e-12);
  check("dh/dv1", dv[1], v[0], 1e-12);
  check("dh/dv2", dv[2], exp(v[2]), 1e-12);
  check("the seed is consumed", dout, 0.0, 0);
  free(tape);
  return check_done();
}
