/* Loops clang -O2 vectorizes with runtime trip counts: an axpy whose arrays may overlap
 * (runtime alias checks), GMM's triangular L * x (a vector inner loop per row, most rows
 * shorter than the vector loop's minimum) and an elementwise product. Reverse mode
 * differentiates their scalar fallbacks (adc_passes::devectorize); forward mode keeps the
 * vector loops. Every length from 0 to N - 1 runs, so the guards go both ways, and each
 * gradient is checked against central differences. */
#include <stdio.h>

#include "enzyme.h"

void __enzyme_fwddiff(void *, ...);

#define N 23

__attribute__((noinline)) void axpy(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}

double f(const double *l, const double *x, double *scratch, int d) {
  for (int i = 0; i < d; i++)
    scratch[i] = x[i] * x[i];
  int k = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++)
      scratch[j] += l[k++] * x[i];
  axpy(d, 0.75, x, scratch);
  double s = 0;
  for (int i = 0; i < d; i++)
    s += scratch[i] * scratch[i] * (1 + 0.1 * i);
  return s;
}

void grad(const double *l, double *dl, const double *x, double *dx, double *scratch,
          double *dscratch, int d) {
  __enzyme_autodiff((void *)f, enzyme_dup, l, dl, enzyme_dup, x, dx, enzyme_dup, scratch,
                    dscratch, enzyme_const, d);
}

double directional(const double *l, const double *dl, const double *x, const double *dx,
                   double *scratch, double *dscratch, int d) {
  return ((double (*)(void *, ...))__enzyme_fwddiff)((void *)f, enzyme_dup, l, dl, enzyme_dup,
                                                     x, dx, enzyme_dup, scratch, dscratch,
                                                     enzyme_const, d);
}

int main(void) {
  double l[N * N], x[N], scratch[N], dscratch[N], dl[N * N], dx[N];
  const double h = 1e-6;
  for (int i = 0; i < N * N; i++)
    l[i] = ((i * 7) % 13) * 0.0625 - 0.375;
  for (int i = 0; i < N; i++)
    x[i] = 0.125 * ((i * 5) % 9) - 0.5;
  for (int d = 0; d < N; d++) {
    for (int i = 0; i < N * N; i++)
      dl[i] = 0;
    for (int i = 0; i < N; i++)
      dx[i] = dscratch[i] = 0;
    grad(l, dl, x, dx, scratch, dscratch, d);
    for (int i = 0; i < d; i++) {
      double keep = x[i];
      x[i] = keep + h;
      double up = f(l, x, scratch, d);
      x[i] = keep - h;
      double down = f(l, x, scratch, d);
      x[i] = keep;
      char what[64];
      snprintf(what, sizeof what, "d=%d dx[%d]", d, i);
      check(what, dx[i], (up - down) / (2 * h), 1e-6);
    }
    for (int k = 0; k < d * (d - 1) / 2; k += 3) {
      double keep = l[k];
      l[k] = keep + h;
      double up = f(l, x, scratch, d);
      l[k] = keep - h;
      double down = f(l, x, scratch, d);
      l[k] = keep;
      char what[64];
      snprintf(what, sizeof what, "d=%d dl[%d]", d, k);
      check(what, dl[k], (up - down) / (2 * h), 1e-6);
    }
    /* Forward mode along x's direction e_0 + e_{d-1}: the same partials summed. */
    if (d > 0) {
      double ex[N] = {0}, el[N * N] = {0}, es[N] = {0};
      ex[0] += 1;
      ex[d - 1] += 1;
      double tangent = directional(l, el, x, ex, scratch, es, d);
      char what[64];
      snprintf(what, sizeof what, "d=%d forward", d);
      check(what, tangent, d > 1 ? dx[0] + dx[d - 1] : dx[0] * 2, 1e-9);
    }
  }
  return check_done();
}
