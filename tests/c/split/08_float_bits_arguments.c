/* Split mode (__enzyme_augmentfwd / __enzyme_reverse) of a function that passes a double
 * to callees that are not inlined as the bits of an i64 argument (Enzyme's subdoublestore
 * at clang -O2): the callees' split functions take the integer as active and return its
 * adjoint as bits of the same type. */
#include <stdlib.h>
#include <string.h>

#include "../reverse/enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

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

/* substore(x)[0] * y + x^2 y, with y constant. */
double f(double x, double y) {
  unsigned long long bits;
  memcpy(&bits, &x, sizeof bits);
  unsigned long long *data = substore(bits, 3);
  double first = ((double *)data)[0];
  free(data);
  return first * y + scaled(bits_of(x), y);
}

int main(void) {
  double x = 0.7, y = -1.3, dret = 1.5;
  tape_and_primal fwd = __enzyme_augmentfwd((void *)f, x, enzyme_const, y);
  check("primal", fwd.primal, x * y + x * x * y, EXACT_TOL);
  double dx = __enzyme_reverse((void *)f, x, enzyme_const, y, dret, fwd.tape);
  check("dL/dx", dx, dret * (y + 2 * x * y), EXACT_TOL);
  return check_done();
}
