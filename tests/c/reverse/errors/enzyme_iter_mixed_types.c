/* `__enzyme_iter`'s count and step are added in every derivative's copy: they must be
 * integers of one type. */
// expect-error: enzyme_iter_mixed_types.c:9: malformed call to __enzyme_iter: its count and step must be integers of one type
double __enzyme_autodiff(void *, ...);
long long __enzyme_iter(int, long long);

double series(double x) {
  double r = 0;
  long long n = __enzyme_iter(3, 1);
  for (long long i = 0; i <= n; i++) r = r * x + 1;
  return r;
}

double dseries(double x) { return __enzyme_autodiff((void *)series, x); }
