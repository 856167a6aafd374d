/* A call to an external float function with no known derivative. */
// expect-error: unknown_external.c:8: no derivative is known for the external function @mystery
extern int enzyme_out;
double __enzyme_autodiff(void *, ...);
double mystery(double);

double f(double x) {
  return mystery(x) * x;
}

int main(void) {
  return (int)__enzyme_autodiff((void *)f, enzyme_out, 1.0);
}
