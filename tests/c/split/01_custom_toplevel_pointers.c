/* __enzyme_autodiff directly on a function with a registered gradient whose arguments are
 * pointers (Enzyme's customcombined pattern): the derivative is the registered pair,
 * called once each, with the shadows the call passes. The rule is deliberately
 * recognisable (it writes 13 into the shadow of src, as Enzyme's test does). */
#include "../reverse/enzyme.h"

__attribute__((noinline)) void square_(const double *src, double *dest) { *dest = *src * *src; }

static int augmented, reversed;

void *square_aug(const double *src, const double *d_src, double *dest, double *d_dest) {
  (void)d_src;
  (void)d_dest;
  augmented++;
  *dest = *src * *src;
  return 0;
}

void square_rev(const double *src, double *d_src, const double *dest, double *d_dest,
                void *tape) {
  (void)src;
  (void)dest;
  (void)d_dest;
  (void)tape;
  reversed++;
  *d_src = 13.0;
}

void *__enzyme_register_gradient_square[3] = {(void *)square_, (void *)square_aug,
                                              (void *)square_rev};

int main(void) {
  double x = 3.0, dx = 0.0, y = 0.0, dy = 1.0;
  __enzyme_autodiff((void *)square_, &x, &dx, &y, &dy);
  check("the registered reverse wrote the shadow", dx, 13.0, 0);
  check("the registered augmented forward computed the primal", y, 9.0, 0);
  check("augmented forward ran once", augmented, 1, 0);
  check("reverse ran once", reversed, 1, 0);
  return check_done();
}
