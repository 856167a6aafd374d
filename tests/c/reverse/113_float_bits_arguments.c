/* Doubles (and pairs of floats) passed to functions that are not inlined as the bits of an
 * integer argument, Enzyme's subdoublestore at clang -O2: `memcpy(&bits, &x, 8)` becomes a
 * bitcast, and the call takes an i64 that carries the derivative. The callee's derivative
 * takes the argument as active and returns its adjoint as bits of the same integer type.
 * Before, adc refused the call at -O2 ("an active i64 (float bits in an integer)").
 * f(x, y) = substore(x)[0] * y + scaled(x, y) with substore = {x, 3} (a fresh block) and
 * scaled = x^2 y. (Two floats packed into one i64 by shifts are refused with an error,
 * filetests gradient/error_float_bits_packed.) */
#include <stdlib.h>
#include <string.h>

#include "enzyme.h"

__attribute__((noinline)) unsigned long long *substore(unsigned long long flt,
                                                       unsigned long long integral) {
  unsigned long long *data = malloc(2 * sizeof(unsigned long long));
  double asflt;
  memcpy(&asflt, &flt, sizeof asflt);
  *(double *)data = asflt;
  data[1] = integral;
  return data;
}

/* Returns the double's bits: the result carries its derivative. */
__attribute__((noinline)) unsigned long long bits_of(double x) {
  unsigned long long b;
  memcpy(&b, &x, sizeof b);
  return b;
}

__attribute__((noinline)) double scaled(unsigned long long bits, double y) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v * v * y;
}

double f(double x, double y) {
  unsigned long long bits;
  memcpy(&bits, &x, sizeof bits);
  unsigned long long *data = substore(bits, 3);
  double first = ((double *)data)[0];
  free(data);
  return first * y + scaled(bits_of(x), y);
}

double g(double x) {
  unsigned long long bits;
  memcpy(&bits, &x, sizeof bits);
  unsigned long long *data = substore(bits, 3);
  double r = ((double *)data)[0];
  free(data);
  return r;
}

int main(void) {
  for (int i = -20; i <= 20; i += 5) {
    /* Enzyme's test: d/dx of substore(x)[0] is 1 everywhere. */
    check("subdoublestore: d/dx", __enzyme_autodiff((void *)g, i / 10.), 1.0, EXACT_TOL);
  }
  double x = 0.7, y = -1.3;
  double dx = __enzyme_autodiff((void *)f, x, enzyme_const, y);
  double dy = __enzyme_autodiff((void *)f, enzyme_const, x, y);
  check("df/dx", dx, y + 2 * x * y, EXACT_TOL);
  check("df/dy", dy, x + x * x, EXACT_TOL);
  return check_done();
}
