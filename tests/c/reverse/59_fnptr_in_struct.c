/* A function pointer stored in a struct next to active data: the struct is passed with
 * a shadow (enzyme_dup) whose function-pointer field the caller leaves zero; the call
 * dispatches on the primal pointer. */
#include "enzyme.h"

typedef struct Model {
  double (*link)(double);
  double weight, bias;
} Model;

__attribute__((noinline)) double softplus(double z) { return log1p(exp(z)); }
__attribute__((noinline)) double cubic(double z) { return z * z * z - z; }

double predict(const Model *m, const double *x, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; i++)
    acc += m->link(m->weight * x[i] + m->bias);
  return acc;
}

static volatile int which = 1;

int main(void) {
  double x[4] = {0.2, -0.4, 0.9, 1.3}, dx[4] = {0};
  Model m = {which ? softplus : cubic, 0.7, -0.2}, dm = {0, 0.0, 0.0};
  __enzyme_autodiff((void *)predict, enzyme_dup, &m, &dm, enzyme_dup, x, dx, enzyme_const, 4);
  double h = FD_STEP;
  Model up = m, down = m;
  up.weight += h, down.weight -= h;
  check("d/dweight", dm.weight, (predict(&up, x, 4) - predict(&down, x, 4)) / (2 * h), FD_TOL);
  up = m, down = m;
  up.bias += h, down.bias -= h;
  check("d/dbias", dm.bias, (predict(&up, x, 4) - predict(&down, x, 4)) / (2 * h), FD_TOL);
  for (int i = 0; i < 4; i++) {
    double saved = x[i];
    x[i] = saved + h;
    double u = predict(&m, x, 4);
    x[i] = saved - h;
    double d = predict(&m, x, 4);
    x[i] = saved;
    check("d/dx[i]", dx[i], (u - d) / (2 * h), FD_TOL);
  }
  return check_done();
}
