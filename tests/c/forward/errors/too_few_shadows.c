/* With enzyme_width 3 every duplicated argument takes three shadows; two are too few. */
// expect-error: too_few_shadows.c:13: too few shadows
extern int enzyme_width, enzyme_dup;
typedef struct {
  double d[3];
} triple;
triple __enzyme_fwddiff(void *, ...);

double sum(const double *x) { return x[0] + x[1]; }

triple tangents(double *x, double *d0, double *d1) {
  return
      __enzyme_fwddiff((void *)sum, enzyme_width, 3, enzyme_dup, x, d0,
                       d1);
}

int main(void) {
  double x[2] = {1, 2}, a[2] = {1, 0}, b[2] = {0, 1};
  return (int)tangents(x, a, b).d[0];
}
