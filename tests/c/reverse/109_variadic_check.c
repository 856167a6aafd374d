/* A self-check helper that defines varargs (va_start/vsnprintf/va_end), as real test code
 * has, next to a differentiated function: the helper is never differentiated and must
 * simply work, at every optimization level (issue 24). A second variadic function reads
 * its arguments with va_arg (ints, doubles, more than fit in registers) and va_copy. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);

static int failures;

static void check(double got, double want, double rtol, double atol, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  int ok = fabs(got - want) <= atol + rtol * fabs(want);
  printf("%s %s: got %.12g want %.12g\n", ok ? "ok  " : "FAIL", what, got, want);
  if (!ok)
    failures++;
}

/* sum of n weighted terms: each term is an int weight then a double value; va_copy walks
 * the list twice (the second walk counts the weights). */
static double weighted(int n, ...) {
  va_list ap, again;
  va_start(ap, n);
  va_copy(again, ap);
  double s = 0;
  for (int i = 0; i < n; i++) {
    int w = va_arg(ap, int);
    s += w * va_arg(ap, double);
  }
  int total = 0;
  for (int i = 0; i < n; i++) {
    total += va_arg(again, int);
    (void)va_arg(again, double);
  }
  va_end(again);
  va_end(ap);
  return s + total;
}

static double f(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += sin(x[i]) * x[i];
  return s;
}

int main(void) {
  double x[4] = {0.5, -1.25, 2.0, 3.5}, dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    check(dx[i], cos(x[i]) * x[i] + sin(x[i]), 1e-12, 1e-14, "df/dx[%d] at x = %.3f (%s)", i,
          x[i], "reverse");
  /* 9 ints overflow the 6 integer registers, 9 doubles the 8 vector registers. */
  double w = weighted(9, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5);
  double want = 1 * 1.5 + 2 * 2.5 + 3 * 3.5 + 4 * 4.5 + 5 * 5.5 + 6 * 6.5 + 7 * 7.5 + 8 * 8.5 +
                9 * 9.5 + 45;
  check(w, want, 0, 0, "weighted(%d terms) %c= %ld", 9, '=', (long)want);
  printf("%d check(s) failed\n", failures);
  return failures != 0;
}
