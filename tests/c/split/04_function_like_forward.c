/* __enzyme_function_like in forward mode, and a library rule that calls another libm
 * function: fast_sin computes its primal by a truncated series, its tangent comes from
 * sin's rule (cos(x) dx). */
#include "../reverse/enzyme.h"

double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double fast_sin(double x) {
  double x2 = x * x;
  return x * (1 - x2 / 6 * (1 - x2 / 20));
}

void *__enzyme_function_like[2] = {(void *)fast_sin, "sin"};

double wave(double x) { return 2.0 * fast_sin(3.0 * x); }

int main(void) {
  double x = 0.2;
  check("forward: 2 sin'(3x) 3", __enzyme_fwddiff((void *)wave, x, 1.0), 6.0 * cos(3.0 * x),
        1e-12);
  check("reverse: 2 sin'(3x) 3", __enzyme_autodiff((void *)wave, x), 6.0 * cos(3.0 * x), 1e-12);
  return check_done();
}
