/* Forward mode through pointers that callees hand back (tests/c/reverse/105 in reverse
 * mode): an allocating helper called with nothing active (its block's tangent must come
 * from its derivative), `&v[i]` accessors, and a struct filled by an initializer. Each
 * directional derivative is checked against central finite differences. */
#include <stdlib.h>

#include "fwd.h"

typedef struct {
  double *data;
  int n;
} Buffer;

__attribute__((noinline)) static double *fresh_block(int n) {
  return malloc(n * sizeof(double));
}

__attribute__((noinline)) static double *element(double *v, int i) { return &v[i]; }

__attribute__((noinline)) static void buffer_init(Buffer *b, int n) {
  b->data = malloc(n * sizeof(double));
  b->n = n;
}

__attribute__((noinline)) static double *buffer_at(Buffer *b, int i) { return b->data + i; }

__attribute__((noinline)) static void buffer_free(Buffer *b) { free(b->data); }

__attribute__((noinline)) double energy(const double *x, int n) {
  double *squares = fresh_block(n);
  for (int i = 0; i < n; i++)
    *element(squares, i) = x[i] * x[i];
  Buffer b;
  buffer_init(&b, n);
  for (int i = 0; i < b.n; i++)
    *buffer_at(&b, i) = sin(*element(squares, i)) * x[(i + 1) % n];
  double total = 0;
  for (int i = 0; i < n; i++)
    total += *buffer_at(&b, i) * *element(squares, i);
  buffer_free(&b);
  free(squares);
  return total;
}

int main(void) {
  double x[5] = {0.3, -0.7, 1.1, 0.4, -0.2};
  for (int k = 0; k < 5; k++) {
    double v[5] = {0};
    v[k] = 1;
    double tangent = __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_const, 5);
    double p[5], m[5];
    for (int i = 0; i < 5; i++)
      p[i] = m[i] = x[i];
    p[k] += FD_STEP;
    m[k] -= FD_STEP;
    check("d energy along e_k", tangent, (energy(p, 5) - energy(m, 5)) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
