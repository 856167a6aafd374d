/* Outputs written through pointers that were themselves loaded from argument memory: a
 * struct's pointer field, a `double **`, an array of row pointers, and a LULESH-style
 * gather/scatter through `double **` arguments with repeated indices (Enzyme's remat
 * test). The activity analysis once counted only memory reached directly from arguments
 * as the caller's, so every derivative here came out zero, with no error; and a location
 * written several times must keep only the last write's adjoint (its shadow is zeroed
 * when the store is undone). Checked against central finite differences of the weighted
 * outputs. */
#include <stdlib.h>

#include "enzyme.h"

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

/* e[idx[r][i]] = delv[idx[r][i]]^2: each e[k] is overwritten by the last pass. */
static void gather_scatter(double **p_delv, double **p_e, int **idx, int nreg, int nelem) {
  double *delv = *p_delv;
  double *e = *p_e;
  for (int r = 0; r < nreg; r++) {
    double *tmp = malloc(nelem * sizeof(double));
    for (int i = 0; i < nelem; i++)
      tmp[i] = delv[idx[r][i]];
    for (int i = 0; i < nelem; i++)
      e[idx[r][i]] = tmp[i] * tmp[i];
    free(tmp);
  }
}

#define NREG 3
#define NELEM 5
#define NV 4

int main(void) {
  /* scale: L = sum_i w_i coef_i x; dL/dx = sum_i w_i coef_i, dL/dcoef_i = w_i x. */
  double coef[3] = {1.5, -2.0, 0.25}, w[3] = {0.5, 1.0, -2.0}, dcoef[3];
  for (int i = 0; i < 3; i++)
    dcoef[i] = w[i];
  Model m = {3, coef}, dm = {3, dcoef};
  double x = 1.7;
  double dx = __enzyme_autodiff((void *)scale, enzyme_dup, &m, &dm, x);
  double want_dx = 0;
  for (int i = 0; i < 3; i++) {
    want_dx += w[i] * coef[i] / x; /* coef was scaled in place by the call */
    check("scale: dL/dcoef_i", dcoef[i], w[i] * x, EXACT_TOL);
  }
  check("scale: dL/dx", dx, want_dx, EXACT_TOL);

  /* through_pp: *p[0] = x^2 overwrites; its shadow's seed is consumed. */
  double a = 5.0, da = 0.75, *pa = &a, *pda = &da;
  dx = __enzyme_autodiff((void *)through_pp, enzyme_dup, &pa, &pda, 3.0);
  check("through_pp: dL/dx", dx, 0.75 * 6.0, EXACT_TOL);
  check("through_pp: overwritten output's shadow", da, 0.0, 0.0);

  /* rows: r1[0] = x^3 + r0[0]. */
  double r0 = 0.5, r1 = 9.0, dr0 = 0.0, dr1 = 2.0;
  double *r[2] = {&r0, &r1}, *dr[2] = {&dr0, &dr1};
  dx = __enzyme_autodiff((void *)rows, enzyme_dup, r, dr, 2.0);
  check("rows: dL/dx", dx, 2.0 * 12.0, EXACT_TOL);
  check("rows: dL/dr0", dr0, 2.0, EXACT_TOL);
  check("rows: overwritten output's shadow", dr1, 0.0, 0.0);

  /* gather_scatter with repeated indices (k = (3r + 2i) mod NV). */
  int idx_rows[NREG][NELEM], *idx[NREG];
  for (int rr = 0; rr < NREG; rr++) {
    for (int i = 0; i < NELEM; i++)
      idx_rows[rr][i] = (3 * rr + 2 * i) % NV;
    idx[rr] = idx_rows[rr];
  }
  double delv[NV], e[NV], d_delv[NV], d_e[NV], we[NV];
  for (int k = 0; k < NV; k++) {
    delv[k] = 0.3 * k - 0.4;
    e[k] = 7.0;
    we[k] = 1.0 + k;
    d_delv[k] = 0.0;
    d_e[k] = we[k];
  }
  double *pdelv = delv, *pe = e, *pd_delv = d_delv, *pd_e = d_e;
  __enzyme_autodiff((void *)gather_scatter, enzyme_dup, &pdelv, &pd_delv, enzyme_dup, &pe,
                    &pd_e, enzyme_const, idx, enzyme_const, NREG, enzyme_const, NELEM);
  for (int k = 0; k < NV; k++) {
    /* Every e[k] is written (its seed is consumed); d/d delv[k] of sum_k we[k] e[k]. */
    int written = 0;
    for (int rr = 0; rr < NREG; rr++)
      for (int i = 0; i < NELEM; i++)
        written |= idx[rr][i] == k;
    double fd;
    {
      double dp[NV], dm_[NV], ep[NV], em[NV];
      for (int j = 0; j < NV; j++) {
        dp[j] = dm_[j] = delv[j];
        ep[j] = em[j] = 7.0;
      }
      dp[k] += FD_STEP;
      dm_[k] -= FD_STEP;
      double *pdp = dp, *pdm = dm_, *pep = ep, *pem = em;
      gather_scatter(&pdp, &pep, idx, NREG, NELEM);
      gather_scatter(&pdm, &pem, idx, NREG, NELEM);
      fd = 0;
      for (int j = 0; j < NV; j++)
        fd += we[j] * (ep[j] - em[j]) / (2 * FD_STEP);
    }
    check("gather_scatter: dL/ddelv_k", d_delv[k], fd, FD_TOL);
    check("gather_scatter: overwritten output's shadow", d_e[k], written ? 0.0 : we[k], 0.0);
  }
  return check_done();
}
