/* Split mode (__enzyme_augmentfwd / __enzyme_reverse) of a function whose outputs are
 * written through pointers loaded from argument memory (a struct's pointer field and an
 * array of row pointers): the reverse call must take the adjoints out of the shadows the
 * loaded shadow pointers reach, and zero those it overwrote. They once stayed at their
 * seeds, with zero derivatives and no error. */
#include "../reverse/enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

typedef struct {
  int n;
  double *coef;
  double *out;
} Model;

/* out[i] = sin(coef[i] x) (overwrites), coef[i] *= x (in place); returns x^2. */
__attribute__((noinline)) double apply(Model *m, double x) {
  for (int i = 0; i < m->n; i++) {
    m->out[i] = sin(m->coef[i] * x);
    m->coef[i] *= x;
  }
  return x * x;
}

int main(void) {
  double coef[3] = {1.5, -2.0, 0.25}, out[3] = {9, 9, 9};
  double dcoef[3] = {0.5, 1.0, -2.0}, dout[3] = {1.0, -0.5, 0.25};
  double c0[3] = {1.5, -2.0, 0.25}, wc[3] = {0.5, 1.0, -2.0}, wo[3] = {1.0, -0.5, 0.25};
  Model m = {3, coef, out}, dm = {3, dcoef, dout};
  double x = 0.7, dret = 1.5;
  tape_and_primal fwd = __enzyme_augmentfwd((void *)apply, enzyme_dup, &m, &dm, x);
  check("primal", fwd.primal, x * x, EXACT_TOL);
  double dx = __enzyme_reverse((void *)apply, enzyme_dup, &m, &dm, x, dret, fwd.tape);
  /* L = dret x^2 + sum wo_i sin(c_i x) + sum wc_i c_i x. */
  double want_dx = dret * 2 * x;
  for (int i = 0; i < 3; i++) {
    want_dx += wo[i] * cos(c0[i] * x) * c0[i] + wc[i] * c0[i];
    check("dL/dcoef_i", dcoef[i], wo[i] * cos(c0[i] * x) * x + wc[i] * x, 1e-12);
    check("overwritten output's shadow", dout[i], 0.0, 0.0);
  }
  check("dL/dx", dx, want_dx, 1e-12);
  return check_done();
}
