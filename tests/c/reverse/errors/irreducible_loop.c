/* A cycle entered at two blocks (a `goto` into the loop): not a natural loop, so the
 * reverse pass cannot count it. It is refused; before, the gradient never returned (the
 * reverse pass took the cycle's merge for one reached once and looped forever). */
// expect-error: irreducible_loop.c:14: cannot differentiate irreducible control flow: the cycle through
double __enzyme_autodiff(void *, ...);

double f(double x, int n) {
  double s = x;
  int i = 0;
  if (x > 0)
    goto half;
again:
  s = s * x + 1.0;
  i++;
half:
  s = s * 0.5 + x;
  i++;
  if (i < n)
    goto again;
  return s;
}

int main(void) { return (int)__enzyme_autodiff((void *)f, 0.5, 7); }
