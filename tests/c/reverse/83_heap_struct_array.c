/* A heap array of structs with integer and float fields, built and reduced inside the
 * differentiated function. */
#include <stdlib.h>
#include "enzyme.h"

#define N 5

struct sample {
  int label;
  double value;
  double weight;
};

double f(const double *x, int n) {
  struct sample *s = malloc(sizeof(struct sample) * n);
  for (int i = 0; i < n; i++) {
    s[i].label = i % 2;
    s[i].value = x[i] * x[i];
    s[i].weight = 1.0 + x[(i + 2) % n];
  }
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += (s[i].label ? 2.0 : -1.0) * s[i].value * s[i].weight;
  free(s);
  return r;
}

int main(void) {
  double x[N] = {0.6, -0.4, 1.2, 0.3, -0.8}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx, N);
  check_fd_gradient(f, x, dx, N);
  return check_done();
}
