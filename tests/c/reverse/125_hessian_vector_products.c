/* Hessian-vector products three ways, each checked against central differences of the
 * gradient: forward over reverse, reverse over reverse (of v . grad f) and reverse over
 * forward (of the directional derivative). f has a malloc'd scratch array, a wrapped
 * index and libm calls. The reverse-over-forward wrapper calls `__enzyme_fwddiff`
 * through a cast to another prototype: LLVM calls the declaration with the call's own
 * function type, which adc imports as an indirect call of the entry point's address (it
 * was refused as "an indirect call of a variadic function type"). Before this session
 * reverse over reverse was refused too: the inner derivative's presized tape, kept across
 * calls in a global slot, had no shadow (enzyme_api/nesting.rs now turns the inlined
 * slot calls into malloc/free). */
#include <stdlib.h>

#include "enzyme.h"

void __enzyme_fwddiff(void *, ...);

#define N 5

double f(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++)
    t[i] = sin(x[i]) * x[(i + 1) % n];
  for (int i = 0; i < n; i++)
    s += t[i] * t[i] / (1 + i);
  double q = 0;
  for (int i = 0; i < n; i++)
    q += x[i] * x[i];
  free(t);
  return s + log(1 + q) + pow(fabs(x[0]) + 1, 2.5);
}

void grad(const double *x, double *dx, int n) {
  for (int i = 0; i < n; i++)
    dx[i] = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
}

void hvp_forward_over_reverse(const double *x, const double *v, double *hv, int n) {
  double dx[N];
  for (int i = 0; i < n; i++)
    hv[i] = 0;
  __enzyme_fwddiff((void *)grad, enzyme_dup, x, v, enzyme_dup, dx, hv, enzyme_const, n);
}

double v_dot_grad(const double *x, const double *v, int n) {
  double dx[N];
  grad(x, dx, n);
  double s = 0;
  for (int i = 0; i < n; i++)
    s += v[i] * dx[i];
  return s;
}

void hvp_reverse_over_reverse(const double *x, const double *v, double *hv, int n) {
  for (int i = 0; i < n; i++)
    hv[i] = 0;
  __enzyme_autodiff((void *)v_dot_grad, enzyme_dup, x, hv, enzyme_const, v, enzyme_const, n);
}

double directional(const double *x, const double *v, int n) {
  return ((double (*)(void *, ...))__enzyme_fwddiff)((void *)f, enzyme_dup, x, v,
                                                     enzyme_const, n);
}

void hvp_reverse_over_forward(const double *x, const double *v, double *hv, int n) {
  for (int i = 0; i < n; i++)
    hv[i] = 0;
  __enzyme_autodiff((void *)directional, enzyme_dup, x, hv, enzyme_const, v, enzyme_const, n);
}

int main(void) {
  double x[N] = {0.3, -0.7, 1.1, 0.25, -1.3}, v[N] = {1, 0.5, -0.25, 2, -1};
  double xp[N], xm[N], gp[N], gm[N], fr[N], rr[N], rf[N];
  const double h = 1e-5;
  for (int i = 0; i < N; i++) {
    xp[i] = x[i] + h * v[i];
    xm[i] = x[i] - h * v[i];
  }
  grad(xp, gp, N);
  grad(xm, gm, N);
  hvp_forward_over_reverse(x, v, fr, N);
  hvp_reverse_over_reverse(x, v, rr, N);
  hvp_reverse_over_forward(x, v, rf, N);
  for (int i = 0; i < N; i++) {
    double want = (gp[i] - gm[i]) / (2 * h);
    char what[64];
    snprintf(what, sizeof what, "(Hv)[%d] forward over reverse", i);
    check(what, fr[i], want, 1e-6);
    snprintf(what, sizeof what, "(Hv)[%d] reverse over reverse", i);
    check(what, rr[i], want, 1e-6);
    snprintf(what, sizeof what, "(Hv)[%d] reverse over forward", i);
    check(what, rf[i], want, 1e-6);
  }
  return check_done();
}
