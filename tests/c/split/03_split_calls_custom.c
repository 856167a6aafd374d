/* Split mode of a function that calls a function with a registered gradient (with no
 * body: libm's j0), in a loop: the augmented forward call keeps the registered rule's
 * tapes inside the split-mode tape, and the reverse call consumes them.
 * s(x) = sum_k j0(k x); ds/dx = -sum_k k j1(k x). */
#define _DEFAULT_SOURCE
#include <math.h>

#include "../reverse/enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

double j0_rev(double x, double d_ret) { return -j1(x) * d_ret; }
void *__enzyme_register_gradient_j0[3] = {(void *)j0, (void *)j0, (void *)j0_rev};

double s(double x, int n) {
  double acc = 0;
  for (int k = 1; k <= n; k++)
    acc += j0(k * x);
  return acc;
}

int main(int argc, char **argv) {
  (void)argv;
  int n = 3 + argc;
  double x = 0.45;
  tape_and_primal f = __enzyme_augmentfwd((void *)s, x, enzyme_const, n);
  check("primal", f.primal, s(x, n), EXACT_TOL);
  double d = __enzyme_reverse((void *)s, x, enzyme_const, n, 1.0, f.tape);
  double want = 0;
  for (int k = 1; k <= n; k++)
    want -= k * j1(k * x);
  check("ds/dx", d, want, 1e-12);
  return check_done();
}
