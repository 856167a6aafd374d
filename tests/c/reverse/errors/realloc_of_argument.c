/* realloc of a caller's buffer that carries derivatives: the size of its shadow (the
 * caller's) is unknown, so growing it alongside is refused, naming the call. */
// expect-error: realloc_of_argument.c:9: a realloc of memory that carries derivatives and was not allocated in the differentiated function
#include <stdlib.h>
extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);

double f(double *v, int n) {
  double *w = realloc(v, sizeof(double) * 2 * n);
  for (int i = n; i < 2 * n; i++)
    w[i] = w[i - n] * w[i - n];
  double s = 0.0;
  for (int i = 0; i < 2 * n; i++)
    s += w[i];
  free(w);
  return s;
}

int main(void) {
  double *v = malloc(sizeof(double) * 3), dv[6] = {0};
  return (int)__enzyme_autodiff((void *)f, enzyme_dup, v, dv, 3);
}
