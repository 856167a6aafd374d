/* A callee that is not inlined fills fresh memory with what its active argument carries
 * and hands the block back: returned (`box`), through an output argument (`make`), or as
 * float bits in an integer array (`box_bits`). The caller's loads from that memory carry
 * the derivative. clang -O2 keeps `noinline` calls, so the activity of the returned
 * pointer must come from the call itself: before, adc gave d = 0 at -O2 without an error.
 * f(x) = box(x)[0] * box(x)[1] + make(x)[0] + bits(x) with box = {x^2, 3}, make = {sin x},
 * bits = x^3 stored as the bits of a double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "enzyme.h"

__attribute__((noinline)) double *box(double x) {
  double *p = malloc(2 * sizeof(double));
  p[0] = x * x;
  p[1] = 3.0;
  return p;
}

__attribute__((noinline)) void make(double x, double **out) {
  double *p = malloc(sizeof(double));
  p[0] = sin(x);
  *out = p;
}

__attribute__((noinline)) unsigned long long *box_bits(double x) {
  unsigned long long *p = malloc(2 * sizeof(unsigned long long));
  double cube = x * x * x;
  memcpy(p, &cube, sizeof cube);
  p[1] = 7;
  return p;
}

double f(double x) {
  double *b = box(x);
  double *m;
  make(x, &m);
  unsigned long long *bits = box_bits(x);
  double cube;
  memcpy(&cube, bits, sizeof cube);
  double r = b[0] * b[1] + m[0] + cube;
  free(b);
  free(m);
  free(bits);
  return r;
}

int main(void) {
  double x = 0.7;
  double d = __enzyme_autodiff((void *)f, x);
  check("d/dx through returned, output and bit-typed fresh memory", d,
        6.0 * x + cos(x) + 3.0 * x * x, 1e-12);
  return check_done();
}
