/* Split mode across separate functions: the augmented forward call runs in one function,
 * which keeps the tape in a struct; the reverse call runs later in another, after the
 * caller has overwritten the input (the tape holds what the reverse pass needs). The loop
 * has a run-time trip count, so its cache grows on the heap behind the tape.
 * g(x, n) = prod_{i<n} (x + i);  dg/dx = g * sum_i 1/(x + i). */
#include <stdlib.h>

#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

double g(double x, int n) {
  double p = 1.0;
  for (int i = 0; i < n; i++)
    p *= x + i;
  return p;
}

struct pending {
  void *tape;
  double x;
  int n;
};

__attribute__((noinline)) static double forward_step(struct pending *p, double x, int n) {
  tape_and_primal r = __enzyme_augmentfwd((void *)g, x, enzyme_const, n);
  p->tape = r.tape;
  p->x = x;
  p->n = n;
  return r.primal;
}

__attribute__((noinline)) static double reverse_step(struct pending *p, double seed) {
  return __enzyme_reverse((void *)g, p->x, enzyme_const, p->n, seed, p->tape);
}

int main(int argc, char **argv) {
  (void)argv;
  int n = 6 + argc; /* not a compile-time constant */
  double x = 0.8;
  struct pending first, second;
  double y1 = forward_step(&first, x, n);
  double y2 = forward_step(&second, x + 1.0, n - 2);
  check("primal g(x, n)", y1, g(x, n), 1e-12);
  check("primal g(x + 1, n - 2)", y2, g(x + 1.0, n - 2), 1e-12);
  /* Reverse in the opposite order, each with its own tape. */
  double d2 = reverse_step(&second, 1.0);
  double d1 = reverse_step(&first, 2.0);
  double s1 = 0, s2 = 0;
  for (int i = 0; i < n; i++)
    s1 += 1.0 / (x + i);
  for (int i = 0; i < n - 2; i++)
    s2 += 1.0 / (x + 1.0 + i);
  check("2 dg/dx at (x, n)", d1, 2.0 * y1 * s1, 1e-10);
  check("dg/dx at (x + 1, n - 2)", d2, y2 * s2, 1e-10);
  return check_done();
}
