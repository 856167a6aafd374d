/* Forward mode through a function of variable arguments: an error naming it. */
// expect-error: variadic_active_call.c:14: @scale, a function of variable arguments
#include <stdarg.h>
double __enzyme_fwddiff(void *, ...);

double scale(int n, ...) {
  va_list ap;
  va_start(ap, n);
  double x = va_arg(ap, double);
  va_end(ap);
  return x * n;
}
double f(double x) {
  return scale(2, x) * x;
}

int main(void) { return __enzyme_fwddiff((void *)f, 3.0, 1.0) > 0.0; }
