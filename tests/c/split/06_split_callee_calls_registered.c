/* A registered gradient two calls deep: outer() calls the helper step() in a loop (a split
 * function of reverse mode), and step() calls axpy_sin(), which has a registered gradient
 * whose tape is a heap copy of its input. The registered tapes live in step()'s split
 * tapes, one per loop trip, both under __enzyme_autodiff and under split mode of outer().
 *
 * axpy_sin(a, x, y): y[i] += a sin(x[i]) (n = 2). outer(a, x): for t < T, step(a, x) with
 * x updated in place; returns x[0] x[1]. */
#include <stdlib.h>
#include <string.h>

#include "../reverse/enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

#define N 2
#define T 4

static int augmented, reversed;

__attribute__((noinline)) void axpy_sin(double a, const double *x, double *y) {
  for (int i = 0; i < N; i++)
    y[i] += a * sin(x[i]);
}

double *axpy_sin_aug(double a, const double *x, double *d_x, double *y, double *d_y) {
  (void)d_x;
  (void)d_y;
  augmented++;
  double *kept = malloc(N * sizeof(double));
  memcpy(kept, x, N * sizeof(double));
  axpy_sin(a, x, y);
  return kept;
}

/* d_a = sum_i d_y[i] sin(x[i]); d_x[i] += d_y[i] a cos(x[i]); d_y passes through. */
double axpy_sin_rev(double a, const double *x, double *d_x, double *y, double *d_y,
                    double *kept) {
  (void)x;
  (void)y;
  reversed++;
  double d_a = 0;
  for (int i = 0; i < N; i++) {
    d_a += d_y[i] * sin(kept[i]);
    d_x[i] += d_y[i] * a * cos(kept[i]);
  }
  free(kept);
  return d_a;
}

void *__enzyme_register_gradient_axpy_sin[3] = {(void *)axpy_sin, (void *)axpy_sin_aug,
                                                (void *)axpy_sin_rev};

/* x <- x + a sin(x), through a scratch copy (the registered call reads x, writes y). */
__attribute__((noinline)) void step(double a, double *x) {
  double y[N];
  for (int i = 0; i < N; i++)
    y[i] = x[i];
  axpy_sin(a, x, y);
  for (int i = 0; i < N; i++)
    x[i] = y[i];
}

double outer(double a, double *x) {
  for (int t = 0; t < T; t++)
    step(a, x);
  return x[0] * x[1];
}

static double outer_copy(double a, const double *x0) {
  double x[N];
  memcpy(x, x0, sizeof x);
  return outer(a, x);
}

int main(void) {
  const double x0[N] = {0.4, -0.9};
  const double a = 0.35, h = 1e-6;
  double fd_x[N];
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    memcpy(xp, x0, sizeof xp);
    memcpy(xm, x0, sizeof xm);
    xp[j] += h;
    xm[j] -= h;
    fd_x[j] = (outer_copy(a, xp) - outer_copy(a, xm)) / (2 * h);
  }
  double fd_a = (outer_copy(a + h, x0) - outer_copy(a - h, x0)) / (2 * h);

  /* Reverse mode: step() becomes a split function holding axpy_sin's tapes. */
  double x[N], d_x[N] = {0, 0};
  memcpy(x, x0, sizeof x);
  double d_a = __enzyme_autodiff((void *)outer, a, x, d_x);
  check("autodiff: the registered augmented forward ran once per trip", augmented, T, 0);
  check("autodiff: the registered reverse ran once per trip", reversed, T, 0);
  check("autodiff: d/da", d_a, fd_a, 1e-6);
  for (int j = 0; j < N; j++)
    check("autodiff: d/dx", d_x[j], fd_x[j], 1e-6);

  /* Split mode of outer(). */
  double y[N], d_y[N] = {0, 0};
  memcpy(y, x0, sizeof y);
  tape_and_primal fwd = __enzyme_augmentfwd((void *)outer, a, y, d_y);
  check("split: primal", fwd.primal, outer_copy(a, x0), EXACT_TOL);
  double d_a2 = __enzyme_reverse((void *)outer, a, y, d_y, 1.0, fwd.tape);
  check("split: the registered pair ran once more per trip", augmented + reversed, 4 * T, 0);
  check("split: d/da", d_a2, fd_a, 1e-6);
  for (int j = 0; j < N; j++)
    check("split: d/dx", d_y[j], fd_x[j], 1e-6);
  return check_done();
}
