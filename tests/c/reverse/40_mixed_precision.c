/* Mixed float/double arithmetic with fpext/fptrunc on the active path; a float array
 * reduced in double precision. f = sum (double)v_i * x + (float)(x * x). */
#include "enzyme.h"

double f(const float *v, int n, double x) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += (double)v[i] * x;
  float sq = (float)(x * x);
  return s + (double)sq;
}

int main(void) {
  float v[4] = {1.0f, 2.0f, -0.5f, 0.25f}, dv[4] = {0};
  double x = 1.5;
  double dx = __enzyme_autodiff((void *)f, enzyme_dup, v, dv, 4, enzyme_out, x);
  check("df/dx", dx, 1.0 + 2.0 - 0.5 + 0.25 + 2.0 * x, 1e-6);
  for (int i = 0; i < 4; i++)
    check("df/dv_i", dv[i], x, 1e-6);
  return check_done();
}
