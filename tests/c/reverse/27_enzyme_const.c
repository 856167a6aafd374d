/* enzyme_const on a double (no adjoint returned for it) and on a pointer (no shadow
 * passed). f(a, b, w) = a * b * sum w; with b and w constant, df/da = b * sum w. */
#include "enzyme.h"

typedef struct { double da, dc; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

double f(double a, double b, const double *w, double c) {
  double s = 0.0;
  for (int i = 0; i < 3; i++)
    s += w[i];
  return a * b * s + c * c * b;
}

int main(void) {
  double w[3] = {0.5, 1.5, -1.0};
  double a = 2.0, b = 3.0, c = -0.5;
  double s = 1.0;
  Pair g = __enzyme_autodiff_pair((void *)f, a, enzyme_const, b, enzyme_const, w, c);
  check("df/da", g.da, b * s, EXACT_TOL);
  check("df/dc", g.dc, 2.0 * c * b, EXACT_TOL);
  double only_a = __enzyme_autodiff((void *)f, enzyme_out, a, enzyme_const, b, enzyme_const, w,
                                    enzyme_const, c);
  check("df/da, c const", only_a, b * s, EXACT_TOL);
  return check_done();
}
