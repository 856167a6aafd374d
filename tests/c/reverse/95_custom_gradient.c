/* A registered gradient replaces synthesis for a call inside differentiated code, as in
 * Enzyme: void* __enzyme_register_gradient_NAME[3] = {f, f_aug, f_rev}. The registered
 * pair is deliberately distinguishable from the true derivative of square_ (it reports
 * 3x the slope), so the check proves the rule was used, and counters prove each half ran
 * once per call. square(x) = x^2 through a pointer helper; with the rule, d/dx = 3 * 2x. */
#include <stdlib.h>

#include "enzyme.h"

__attribute__((noinline)) void square_(const double *src, double *dest) { *dest = *src * *src; }

static int augmented_calls, reverse_calls;

void *square_aug(const double *src, const double *d_src, double *dest, double *d_dest) {
  (void)d_src;
  (void)d_dest;
  augmented_calls++;
  *dest = *src * *src;
  double *tape = malloc(sizeof(double));
  *tape = *src; /* the reverse half reads x from the tape, not from src */
  return tape;
}

void square_rev(const double *src, double *d_src, const double *dest, double *d_dest,
                void *tape) {
  (void)src;
  (void)dest;
  reverse_calls++;
  double x = *(double *)tape;
  *d_src += 3.0 * 2.0 * x * *d_dest;
  *d_dest = 0;
  free(tape);
}

void *__enzyme_register_gradient_square[3] = {(void *)square_, (void *)square_aug,
                                              (void *)square_rev};

double square_plus(double x) {
  double y;
  square_(&x, &y);
  return y + x;
}

int main(void) {
  double x = 1.75;
  double d = __enzyme_autodiff((void *)square_plus, x);
  check("d/dx (x^2 + x) with the registered 3x rule", d, 3.0 * 2.0 * x + 1.0, 1e-12);
  check("augmented forward ran once", augmented_calls, 1, 0);
  check("reverse ran once", reverse_calls, 1, 0);
  return check_done();
}
