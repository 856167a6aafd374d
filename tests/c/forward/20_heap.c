/* Forward mode with heap temporaries: malloc'd work arrays carry tangents (their shadow
 * blocks are allocated, zeroed and freed next to them), realloc grows one. */
#include <stdlib.h>
#include "fwd.h"

double f(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++)
    t[i] = x[i] * x[i];
  t = realloc(t, 2 * n * sizeof(double));
  for (int i = 0; i < n; i++)
    t[n + i] = sin(t[i]);
  double s = 0.0;
  for (int i = 0; i < 2 * n; i++)
    s += t[i];
  free(t);
  return s;
}

int main(void) {
  double x[4] = {0.1, 0.5, -0.3, 1.2}, dx[4] = {1.0, 0.5, 0.25, -1.0};
  double got = __enzyme_fwddiff((void *)f, x, dx, 4);
  double want = 0.0;
  for (int i = 0; i < 4; i++)
    want += (2.0 * x[i] + cos(x[i] * x[i]) * 2.0 * x[i]) * dx[i];
  check("df along dx vs analytic", got, want, 1e-12);
  return check_done();
}
