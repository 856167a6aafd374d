/* Forward mode custom derivatives: void* __enzyme_register_derivative_NAME[2] = {f, f_fwd}
 * where f_fwd takes each argument followed by its tangent and returns {primal, tangent}.
 * Registered for j1 (libm, no body here: j1'(x) = j0(x) - j1(x)/x) and for a defined
 * function whose registered tangent is deliberately twice the true one (to prove it is
 * used, at the top level and inside a differentiated caller). */
#define _DEFAULT_SOURCE
#include <math.h>

#include "enzyme.h"

double __enzyme_fwddiff(void *, ...);

typedef struct {
  double primal, tangent;
} dual;

dual j1_fwd(double x, double dx) {
  dual r = {j1(x), (j0(x) - j1(x) / x) * dx};
  return r;
}
void *__enzyme_register_derivative_j1[2] = {(void *)j1, (void *)j1_fwd};

__attribute__((noinline)) double cube(double x) { return x * x * x; }
dual cube_fwd(double x, double dx) {
  dual r = {x * x * x, 2.0 * 3.0 * x * x * dx};
  return r;
}
void *__enzyme_register_derivative_cube[2] = {(void *)cube, (void *)cube_fwd};

double model(double x) { return j1(x) + cube(x) * 2.0; }

int main(void) {
  double x = 0.9;
  check("d j1 along 0.5", __enzyme_fwddiff((void *)j1, x, 0.5), 0.5 * (j0(x) - j1(x) / x),
        1e-12);
  check("d cube (registered, 2x)", __enzyme_fwddiff((void *)cube, x, 1.0), 6.0 * x * x, 1e-12);
  check("d model inside a caller", __enzyme_fwddiff((void *)model, x, 1.0),
        (j0(x) - j1(x) / x) + 2.0 * 6.0 * x * x, 1e-12);
  return check_done();
}
