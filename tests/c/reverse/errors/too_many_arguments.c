/* One argument more than the differentiated function takes. */
// expect-error: too_many_arguments.c:8: too many arguments: @square has 1 parameter;
double __enzyme_autodiff(void *, ...);

double square(double x) { return x * x; }

int main(void) {
  return (int)__enzyme_autodiff((void *)square, 2.0, 3.0);
}
