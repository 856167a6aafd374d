/* An external function without a derivative rule that receives active memory (a buffer
 * the result depends on): the derivative cannot know what it does to the data. */
// expect-error: external_writes_active.c:11: no derivative is known for the external function @smooth_inplace
extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);
void smooth_inplace(double *v, int n);

double f(double *v, int n) {
  for (int i = 0; i < n; i++)
    v[i] = v[i] * v[i];
  smooth_inplace(v, n);
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

int main(void) {
  double v[3] = {1, 2, 3}, dv[3] = {0};
  return (int)__enzyme_autodiff((void *)f, enzyme_dup, v, dv, 3);
}
