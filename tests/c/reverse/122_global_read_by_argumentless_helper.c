/* A static array filled from the input and read by a noinline helper that takes no
 * pointer to it (clang's constant propagation drops the argument `g` of `sum(g, n)` at
 * -O2; here it never had one). No argument of the call carries a derivative, so the call
 * looked inactive and the gradient was silently zero (gradient fuzzer seed 171322). A call
 * whose callee reads a global shadowed from the start now carries. Checked in reverse and
 * split mode. */
#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} aug;
aug __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_const;

static double g[4];

__attribute__((noinline)) static double sum_of_squares(int n) {
  double s = 0;
  for (int k = 0; k < n; k++)
    s += g[k] * g[k];
  return s;
}

double f(const double *x, int n) {
  for (int i = 0; i < n; i++)
    g[i] = 2 * x[i];
  return sum_of_squares(n);
}

int main(void) {
  double x[4] = {0.5, -1.5, 2.0, 0.25}, dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    char what[48];
    snprintf(what, sizeof what, "reverse d/dx[%d]", i);
    check(what, dx[i], 8 * x[i], EXACT_TOL);
  }
  double sx[4] = {0};
  aug a = __enzyme_augmentfwd((void *)f, enzyme_dup, x, sx, enzyme_const, 4);
  check("split primal", a.primal, 4 * (0.25 + 2.25 + 4.0 + 0.0625), EXACT_TOL);
  __enzyme_reverse((void *)f, enzyme_dup, x, sx, enzyme_const, 4, 1.0, a.tape);
  for (int i = 0; i < 4; i++) {
    char what[48];
    snprintf(what, sizeof what, "split d/dx[%d]", i);
    check(what, sx[i], 8 * x[i], EXACT_TOL);
  }
  return check_done();
}
