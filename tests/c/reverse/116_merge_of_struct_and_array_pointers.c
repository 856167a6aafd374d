/* One pointer that is either a struct's field or an array element: clang -O2 merges
 * `&m->s` and `&a[2]` into one phi (or select) of `m` and `a` and a shared offset 16. The
 * struct holds a pointer at offset 8 where the array holds a double; the type analysis
 * joined both and refused the copy of the struct's array (gradient fuzzer seed 121096). Now the merge
 * keeps what both agree on. Checked in reverse, forward and split mode, on both branches. */
#include <string.h>

#include "enzyme.h"

extern int enzyme_tape;
double __enzyme_fwddiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

typedef struct {
  long n;
  double *coef;
  double s;
} M;

void scale_one(M *m, double *a, double x) {
  double copy[3];
  double factor;
  double *slot;
  /* A copy of run-time length: a memcpy whose bytes only the type analysis can tell. */
  memcpy(copy, m->coef, m->n * sizeof(double));
  if (x > 0) {
    slot = &a[2];
    factor = x + copy[1];
  } else {
    slot = &m->s;
    factor = x * a[1];
  }
  *slot *= factor;
}

typedef struct {
  double coef[3], a[3], s;
} Point;

static void reset(Point *p, M *m, double *a, const Point *from) {
  *p = *from;
  m->n = 3;
  m->coef = p->coef;
  m->s = p->s;
  for (int i = 0; i < 3; i++)
    a[i] = p->a[i];
}

/* Not inlined: with `x` a constant at the call, the branch would fold away. */
__attribute__((noinline)) static void check_branch(const char *branch, double x) {
  const Point at = {{0.25, -0.75, 1.5}, {0.5, 1.25, -2.0}, 0.625};
  const Point zero = {{0}, {0}, 0};
  M m, dm;
  double a[3], da[3];
  Point p, dp;
  char what[96];
  int positive = x > 0;
  /* d out / d (x, coef[1], a[1], a[2], s) for the slot the branch writes. */
  double slot_in = positive ? at.a[2] : at.s;
  double factor = positive ? x + at.coef[1] : x * at.a[1];
  double d_x = positive ? slot_in : slot_in * at.a[1];
  double d_coef1 = positive ? slot_in : 0;
  double d_a1 = positive ? 0 : slot_in * x;

  /* Reverse: seed the written slot's shadow; it becomes factor (the old value's adjoint). */
  reset(&p, &m, a, &at);
  reset(&dp, &dm, da, &zero);
  if (positive)
    da[2] = 1;
  else
    dm.s = 1;
  double dx = __enzyme_autodiff((void *)scale_one, enzyme_dup, &m, &dm, enzyme_dup, a, da, x);
  snprintf(what, sizeof what, "%s reverse: d/dx", branch);
  check(what, dx, d_x, EXACT_TOL);
  snprintf(what, sizeof what, "%s reverse: d/dcoef[1]", branch);
  check(what, dp.coef[1], d_coef1, EXACT_TOL);
  snprintf(what, sizeof what, "%s reverse: d/da[1]", branch);
  check(what, da[1], d_a1, EXACT_TOL);
  snprintf(what, sizeof what, "%s reverse: adjoint of the old slot", branch);
  check(what, positive ? da[2] : dm.s, factor, EXACT_TOL);
  snprintf(what, sizeof what, "%s reverse: primal written", branch);
  check(what, positive ? a[2] : m.s, slot_in * factor, EXACT_TOL);

  /* Forward: tangents of x, coef[1], a[1] and the slot's old value. */
  reset(&p, &m, a, &at);
  reset(&dp, &dm, da, &zero);
  dp.coef[1] = 0.5;
  da[1] = -1.5;
  if (positive)
    da[2] = 2;
  else
    dm.s = 2;
  double dx_in = 0.25;
  __enzyme_fwddiff((void *)scale_one, enzyme_dup, &m, &dm, enzyme_dup, a, da, x, dx_in);
  double tangent = 2 * factor + d_x * dx_in + d_coef1 * 0.5 + d_a1 * -1.5;
  snprintf(what, sizeof what, "%s forward: tangent of the slot", branch);
  check(what, positive ? da[2] : dm.s, tangent, EXACT_TOL);

  /* Split: the augmented forward pass, then the reverse pass from its tape. */
  reset(&p, &m, a, &at);
  reset(&dp, &dm, da, &zero);
  void *tape = __enzyme_augmentfwd((void *)scale_one, enzyme_dup, &m, &dm, enzyme_dup, a, da, x);
  if (positive)
    da[2] = 1;
  else
    dm.s = 1;
  dx = __enzyme_reverse((void *)scale_one, enzyme_dup, &m, &dm, enzyme_dup, a, da, x,
                        enzyme_tape, tape);
  snprintf(what, sizeof what, "%s split: d/dx", branch);
  check(what, dx, d_x, EXACT_TOL);
  snprintf(what, sizeof what, "%s split: d/dcoef[1]", branch);
  check(what, dp.coef[1], d_coef1, EXACT_TOL);
  snprintf(what, sizeof what, "%s split: adjoint of the old slot", branch);
  check(what, positive ? da[2] : dm.s, factor, EXACT_TOL);
}

int main(void) {
  check_branch("array slot", 0.5);
  check_branch("struct slot", -0.5);
  return check_done();
}
