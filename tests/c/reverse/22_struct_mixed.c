/* A struct with mixed fields (int, double, float, pointer) passed by pointer with a
 * shadow struct: only the float fields and the pointed-to doubles receive adjoints. */
#include "enzyme.h"

typedef struct {
  int n;
  double scale;
  float bias;
  double *data;
} Model;

double f(const Model *m) {
  double s = 0.0;
  for (int i = 0; i < m->n; i++)
    s += m->scale * m->data[i] * m->data[i];
  return s + (double)m->bias * m->scale;
}

int main(void) {
  double data[3] = {1.0, -2.0, 0.5}, ddata[3] = {0};
  Model m = {3, 1.5, 0.25f, data};
  Model dm = {0, 0.0, 0.0f, ddata};
  __enzyme_autodiff((void *)f, enzyme_dup, &m, &dm);
  double sumsq = 1.0 + 4.0 + 0.25;
  check("d/dscale", dm.scale, sumsq + 0.25, 1e-12);
  check("d/dbias", dm.bias, 1.5, 1e-6);
  for (int i = 0; i < 3; i++)
    check("d/ddata_i", ddata[i], 2.0 * 1.5 * data[i], 1e-12);
  check("integer field untouched", (double)dm.n, 0.0, EXACT_TOL);
  return check_done();
}
