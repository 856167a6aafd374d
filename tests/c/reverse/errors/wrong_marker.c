/* A marker with nothing after it: enzyme_dup must be followed by the pointer and its
 * shadow. */
// expect-error: wrong_marker.c:11: malformed call to __enzyme_autodiff: parameter 0 (ptr) of @sum: duplicated, but the argument list ends before its shadow
extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);

double sum(const double *x) { return x[0] + x[1]; }

double grad(double *x) {
  return
      __enzyme_autodiff((void *)sum, enzyme_dup, x);
}

int main(void) {
  double x[2] = {1.0, 2.0};
  return (int)grad(x);
}
