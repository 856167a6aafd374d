/* A registered gradient for a function with no body in the module: the Bessel function
 * j0 from libm, which adc has no rule for. j0'(x) = -j1(x). The augmented forward returns
 * {tape, primal} (here the tape is x itself, a double), the reverse takes the argument,
 * the differential of the result and the tape, and returns the adjoint of x. */
#define _DEFAULT_SOURCE
#include <math.h>

#include "enzyme.h"

typedef struct {
  double tape;
  double primal;
} j0_aug_result;

j0_aug_result j0_aug(double x) {
  j0_aug_result r = {x, j0(x)};
  return r;
}

double j0_rev(double x, double d_ret, double tape) {
  (void)x;
  return -j1(tape) * d_ret;
}

void *__enzyme_register_gradient_j0[3] = {(void *)j0, (void *)j0_aug, (void *)j0_rev};

double bessel_energy(double x) { return j0(x) * j0(x) + 0.5 * x; }

int main(void) {
  double x = 1.3;
  /* Directly on the registered function, and through a caller. */
  check("d/dx j0(x)", __enzyme_autodiff((void *)j0, x), -j1(x), 1e-12);
  check("d/dx (j0(x)^2 + x/2)", __enzyme_autodiff((void *)bessel_energy, x),
        -2.0 * j0(x) * j1(x) + 0.5, 1e-12);
  return check_done();
}
