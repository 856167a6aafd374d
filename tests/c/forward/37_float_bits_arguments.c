/* Forward mode of Enzyme's subdoublestore at clang -O2: a double passed to a function that
 * is not inlined as the bits of an i64 argument (and stored into a fresh block it
 * returns), and a double passed as bits next to an active double. The tangent travels as
 * the bits of the integer argument. Checked against the analytic tangents. */
#include <stdlib.h>
#include <string.h>

#include "fwd.h"

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

/* substore(x)[0] * y + x^2 y */
double f(double x, double y) {
  unsigned long long bits;
  memcpy(&bits, &x, sizeof bits);
  unsigned long long *data = substore(bits, 3);
  double first = ((double *)data)[0];
  free(data);
  return first * y + scaled(bits_of(x), y);
}

int main(void) {
  double x = 0.7, y = -1.3, dx = 0.25, dy = 2.0;
  double t = __enzyme_fwddiff((void *)f, x, dx, y, dy);
  check("tangent", t, (y + 2 * x * y) * dx + (x + x * x) * dy, EXACT_TOL);
  return check_done();
}
