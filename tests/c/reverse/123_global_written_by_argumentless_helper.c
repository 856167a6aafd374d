/* A static array filled from the input, then updated in place by a noinline helper that
 * takes no pointer to it (`g[k] += g[k] * g[k]`), and read after the call. No argument
 * of the call carries a derivative and it returns nothing, so the call looked inactive:
 * the reverse pass skipped the helper's adjoint and d/dx[3] came out 1 instead of
 * 1 + 2 x[3] at -O1 and -O2, with no error (gradient fuzzer seed 210872). A call whose
 * callee may write a global shadowed from the start is active. Checked in reverse and
 * split mode, through a function pointer, for a helper that only overwrites the global
 * (its adjoint must be dropped, not passed on to x) and for one that reaches the global
 * through another helper. */
#include "enzyme.h"

typedef struct {
  void *tape;
  double primal;
} aug;
aug __enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);
extern int enzyme_dup, enzyme_const;

static double g[4];

__attribute__((noinline)) static void square_in_place(int n) {
  for (int k = 0; k < n; k++)
    g[k] += g[k] * g[k];
}

__attribute__((noinline)) static void halve_in_place(int n) {
  for (int k = 0; k < n; k++)
    g[k] *= 0.5;
}

double f(const double *x, int n) {
  for (int i = 0; i < n; i++)
    g[i] = x[i];
  square_in_place(n);
  return g[3] + g[1];
}

__attribute__((noinline)) static void reset(int n) {
  for (int k = 0; k < n; k++)
    g[k] = 1.0;
}

__attribute__((noinline)) static void square_twice(int n) {
  square_in_place(n);
  square_in_place(n);
}

/* g[3] is overwritten by a constant: only x[2] has a derivative. */
double overwritten(const double *x, int n) {
  for (int i = 0; i < n; i++)
    g[i] = x[i];
  reset(n);
  return g[3] + x[2];
}

/* Through two calls of the squaring helper: d/dx of (x + x^2) + (x + x^2)^2. */
double nested(const double *x, int n) {
  for (int i = 0; i < n; i++)
    g[i] = x[i];
  square_twice(n);
  return g[3];
}

void (*volatile update)(int) = square_in_place;

double through_pointer(const double *x, int n) {
  for (int i = 0; i < n; i++)
    g[i] = x[i];
  update(n);
  return g[3] + g[1];
}

static double want(const double *x, int i) { return i == 1 || i == 3 ? 1 + 2 * x[i] : 0; }

static void check_all(const char *mode, const double *x, const double *dx) {
  for (int i = 0; i < 4; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s d/dx[%d]", mode, i);
    check(what, dx[i], want(x, i), EXACT_TOL);
  }
}

int main(void) {
  double x[4] = {0.5, -1.5, 2.0, 0.25};
  double dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4);
  check_all("reverse", x, dx);

  double sx[4] = {0};
  aug a = __enzyme_augmentfwd((void *)f, enzyme_dup, x, sx, enzyme_const, 4);
  check("split primal", a.primal, (0.25 + 0.0625) + (-1.5 + 2.25), EXACT_TOL);
  __enzyme_reverse((void *)f, enzyme_dup, x, sx, enzyme_const, 4, 1.0, a.tape);
  check_all("split", x, sx);

  /* The other candidate of the function pointer writes the global too. */
  if (x[0] > 100)
    update = halve_in_place;
  double px[4] = {0};
  __enzyme_autodiff((void *)through_pointer, enzyme_dup, x, px, enzyme_const, 4);
  check_all("indirect", x, px);

  double ox[4] = {0};
  __enzyme_autodiff((void *)overwritten, enzyme_dup, x, ox, enzyme_const, 4);
  for (int i = 0; i < 4; i++) {
    char what[64];
    snprintf(what, sizeof what, "overwritten d/dx[%d]", i);
    check(what, ox[i], i == 2 ? 1.0 : 0.0, EXACT_TOL);
  }

  double nx[4] = {0};
  __enzyme_autodiff((void *)nested, enzyme_dup, x, nx, enzyme_const, 4);
  double y = x[3] + x[3] * x[3];
  check("nested d/dx[3]", nx[3], (1 + 2 * y) * (1 + 2 * x[3]), EXACT_TOL);
  check("nested d/dx[0]", nx[0], 0.0, EXACT_TOL);
  return check_done();
}
