/* enzyme_dup followed by a pointer and then a double where its shadow should be. */
// expect-error: shadow_not_pointer.c:9: its shadow has type f64, not a pointer
extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);

double first(const double *x) { return x[0] * x[0]; }

int main(void) {
  double x[1] = {3.0}, d = __enzyme_autodiff((void *)first, enzyme_dup, x, 1.0);
  return d > 0.0;
}
