/* Pointers that callees hand back: an allocating helper returning a fresh block, an
 * accessor returning `&v[i]` (readnone: it only computes an address), one returning a
 * pointer read from a struct the caller owns, and an initializer storing a fresh block
 * into that struct. At -O0 with
 * --ad-before-opt none of them is inlined: the returned pointers must keep the shadows of
 * the memory they point into (they were once taken for fresh memory, and the gradient
 * came out zero). Checked with central finite differences. */
#include <stdlib.h>

#include "enzyme.h"

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
  double x[5] = {0.3, -0.7, 1.1, 0.4, -0.2}, dx[5] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 5);
  check_fd_gradient(energy, x, dx, 5);
  return check_done();
}
