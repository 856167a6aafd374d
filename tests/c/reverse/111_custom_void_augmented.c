/* A registered gradient whose augmented forward function returns nothing for a float
 * result (Enzyme's convention: it returns the primal only for pointer results), as in
 * Enzyme's invsqrt test: the primal function itself computes the result, the augmented
 * function still runs once per call, and the reverse function gives the (deliberately
 * 3x) slope. cube(x) = x^3 inside f(x) = cube(x) * x. */
#include "enzyme.h"

__attribute__((noinline)) double cube(double x) { return x * x * x; }

static int augmented_calls;

void cube_aug(double x) {
  (void)x;
  augmented_calls++;
}

double cube_rev(double x, double d_out) { return 3.0 * 3.0 * x * x * d_out; }

void *__enzyme_register_gradient_cube[3] = {(void *)cube, (void *)cube_aug, (void *)cube_rev};

double f(double x) { return cube(x) * x; }

int main(void) {
  double x = 1.5;
  double d = __enzyme_autodiff((void *)f, x);
  /* d/dx (cube(x) * x) = cube'(x) * x + cube(x), with the registered cube' = 9x^2. */
  check("d/dx with the registered rule and the primal from cube", d, 9.0 * x * x * x + x * x * x,
        1e-12);
  check("augmented forward ran once", augmented_calls, 1, 0);
  return check_done();
}
