/* The differentiated function passes an active value to a function of variable
 * arguments: its va_arg reads cannot be differentiated (an inactive variadic helper, such
 * as a logging call, is fine: tests/c/reverse/107_variadic_check.c). */
// expect-error: variadic_active_call.c:15: an active call of @scale, which takes variable arguments
#include <stdarg.h>
double __enzyme_autodiff(void *, ...);

double scale(int n, ...) {
  va_list ap;
  va_start(ap, n);
  double x = va_arg(ap, double);
  va_end(ap);
  return x * n;
}
double f(double x) { return scale(2, x) * x; }

int main(void) { return __enzyme_autodiff((void *)f, 3.0) > 0.0; }
