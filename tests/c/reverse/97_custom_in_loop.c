/* A registered gradient called inside a loop: every iteration's augmented forward call
 * returns its own tape (the iteration's input, heap-allocated), the caller's reverse pass
 * hands each tape back to the matching reverse call, last iteration first. The rule for
 * step(x, a) = a sin(x) is the exact one, so the result must match the analytic chain:
 * x_{k+1} = a_k sin(x_k), dx_n/dx_0 = prod_k a_k cos(x_k). */
#include <stdlib.h>

#include "enzyme.h"

__attribute__((noinline)) double step(double x, double a) { return a * sin(x); }

static int order_errors, next_expected;

typedef struct {
  double *tape;
  double primal;
} step_aug_result;

step_aug_result step_aug(double x, double a) {
  double *tape = malloc(2 * sizeof(double));
  tape[0] = x;
  tape[1] = a;
  step_aug_result r = {tape, a * sin(x)};
  return r;
}

typedef struct {
  double dx, da;
} step_adjoints;

step_adjoints step_rev(double x, double a, double d_ret, double *tape) {
  if (tape[0] != x || tape[1] != a)
    order_errors++;
  step_adjoints d = {a * cos(tape[0]) * d_ret, sin(tape[0]) * d_ret};
  free(tape);
  return d;
}

void *__enzyme_register_gradient_step[3] = {(void *)step, (void *)step_aug, (void *)step_rev};

double iterate(double x, const double *a, int n) {
  for (int k = 0; k < n; k++)
    x = step(x, a[k]);
  return x;
}

int main(int argc, char **argv) {
  (void)argv;
  double a[6] = {1.1, 0.9, 1.3, 0.7, 1.05, 0.95}, da[6] = {0};
  int n = 5 + argc; /* 6, not known at compile time */
  double x0 = 0.4;
  double dx = __enzyme_autodiff((void *)iterate, x0, enzyme_dup, a, da, enzyme_const, n);
  double x = x0, want = 1.0;
  double xs[6];
  for (int k = 0; k < n; k++) {
    xs[k] = x;
    want *= a[k] * cos(x);
    x = a[k] * sin(x);
  }
  check("dx_n/dx_0 through the registered rule", dx, want, 1e-12);
  /* d x_n / d a_k = sin(x_k) * prod_{j>k} a_j cos(x_j) */
  double tail = 1.0;
  for (int k = n - 1; k >= 0; k--) {
    char what[32];
    snprintf(what, sizeof what, "dx_n/da[%d]", k);
    check(what, da[k], sin(xs[k]) * tail, 1e-12);
    tail *= a[k] * cos(xs[k]);
  }
  check("each reverse call got its own iteration's tape", order_errors, 0, 0);
  (void)next_expected;
  return check_done();
}
