/* Split mode with the tape in caller memory for a function whose loop has a run-time trip
 * count: the caller's memory holds the fixed-size part of the tape, whose header points to
 * the loop cache that grows on the heap (freed by the reverse call). Run for several n
 * with one buffer of __enzyme_augmentsize bytes.
 * r(x, n) = x_n where x_{k+1} = cos(x_k) + 0.1 k; dr/dx = prod -sin(x_k). */
#include <stdlib.h>

#include "../reverse/enzyme.h"

extern int enzyme_allocated, enzyme_tape;
double __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
int __enzyme_augmentsize(void *, ...);

double r(double x, int n) {
  for (int k = 0; k < n; k++)
    x = cos(x) + 0.1 * k;
  return x;
}

int main(int argc, char **argv) {
  (void)argv;
  int size = __enzyme_augmentsize((void *)r, enzyme_out, enzyme_const);
  void *mem = malloc(size);
  for (int n = argc; n < argc + 40; n += 13) {
    double x = 0.3;
    double y = __enzyme_augmentfwd((void *)r, enzyme_allocated, size, enzyme_tape, mem, x,
                                   enzyme_const, n);
    check("primal", y, r(x, n), EXACT_TOL);
    double d = __enzyme_reverse((void *)r, enzyme_allocated, size, enzyme_tape, mem, x,
                                enzyme_const, n, 1.0);
    double want = 1.0, xk = x;
    for (int k = 0; k < n; k++) {
      want *= -sin(xk);
      xk = cos(xk) + 0.1 * k;
    }
    check("dr/dx", d, want, 1e-12);
  }
  free(mem);
  return check_done();
}
