/* Integer-only code that must stay inactive: a bit-twiddling hash and an integer loop
 * choose a multiplier; only the double path carries a derivative.
 * f(x, seed) = x^2 * m(seed) + x, with m computed from integers only. */
#include "enzyme.h"

static unsigned mix(unsigned h) {
  h ^= h >> 16;
  h *= 0x7feb352dU;
  h ^= h >> 15;
  return h;
}

double f(double x, unsigned seed) {
  unsigned h = mix(seed);
  int count = 0;
  for (unsigned b = h; b != 0; b &= b - 1)
    count++;
  double m = (double)(count % 7 + 1);
  return x * x * m + x;
}

int main(void) {
  unsigned seeds[] = {1u, 42u, 0xdeadbeefu};
  double x = 1.25;
  for (int i = 0; i < 3; i++) {
    unsigned h = mix(seeds[i]);
    int count = __builtin_popcount(h);
    double m = (double)(count % 7 + 1);
    check("d/dx with integer multiplier", __enzyme_autodiff((void *)f, x, seeds[i]),
          2.0 * x * m + 1.0, EXACT_TOL);
  }
  return check_done();
}
