/* Forward mode of outputs written through pointers loaded from argument memory (a struct's
 * pointer field, a `double **`, an array of row pointers): the tangent of what they point
 * to must be written through the shadow pointers loaded from the shadow memory. They once
 * stayed zero, with no error. Checked against the analytic tangents. */
#include "fwd.h"

typedef struct {
  int n;
  double *coef;
} Model;

static void scale(Model *m, double x) {
  for (int i = 0; i < m->n; i++)
    m->coef[i] *= x;
}

static void through_pp(double **p, double x) { (*p)[0] = x * x; }

static void rows(double *r[2], double x) { r[1][0] = x * x * x + r[0][0]; }

int main(void) {
  /* d(coef_i x) = dcoef_i x + coef_i dx. */
  double coef[3] = {1.5, -2.0, 0.25}, dcoef[3] = {0.5, 0.0, -1.0};
  double c0[3] = {1.5, -2.0, 0.25}, t0[3] = {0.5, 0.0, -1.0};
  Model m = {3, coef}, dm = {3, dcoef};
  double x = 1.7, dx = 0.3;
  __enzyme_fwddiff((void *)scale, enzyme_dup, &m, &dm, enzyme_dup, x, dx);
  for (int i = 0; i < 3; i++)
    check("scale: tangent of coef_i", dcoef[i], t0[i] * x + c0[i] * dx, EXACT_TOL);

  double a = 5.0, da = 0.0, *pa = &a, *pda = &da;
  __enzyme_fwddiff((void *)through_pp, enzyme_dup, &pa, &pda, enzyme_dup, 3.0, 1.0);
  check("through_pp: tangent", da, 6.0, EXACT_TOL);

  double r0 = 0.5, r1 = 9.0, dr0 = 0.25, dr1 = 0.0;
  double *r[2] = {&r0, &r1}, *dr[2] = {&dr0, &dr1};
  __enzyme_fwddiff((void *)rows, enzyme_dup, r, dr, enzyme_dup, 2.0, 1.0);
  check("rows: tangent", dr1, 12.0 + 0.25, EXACT_TOL);
  return check_done();
}
