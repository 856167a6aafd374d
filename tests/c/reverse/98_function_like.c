/* __enzyme_function_like: a function differentiated with a library function's rule, as in
 * Enzyme's customlog1p test. my_log1p computes its primal by a short series (so it has a
 * body, and differentiating that body would give a different slope); with the
 * registration its derivative is log1p's, 1/(1+x). */
#include "enzyme.h"

__attribute__((noinline)) double my_log1p(double x) { return x - x * x / 2 + x * x * x / 3; }

void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};

double loss(double x) { return 3.0 * my_log1p(x * x); }

int main(void) {
  double x = 0.3;
  check("primal still my_log1p", loss(x), 3.0 * my_log1p(x * x), EXACT_TOL);
  double d = __enzyme_autodiff((void *)loss, x);
  check("d/dx 3 log1p(x^2) by log1p's rule", d, 3.0 * 2.0 * x / (1.0 + x * x), 1e-12);
  return check_done();
}
