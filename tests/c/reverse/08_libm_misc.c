/* Two-argument and piecewise libm functions: fabs fmin fmax hypot fmod copysign fma erf,
 * analytic derivatives away from the kinks. */
#include "enzyme.h"

typedef struct { double da, db; } Pair;
typedef struct { double da, db, dc; } Triple;
Pair __enzyme_autodiff_pair(void *, ...);
Triple __enzyme_autodiff_triple(void *, ...);

double f_fabs(double x) { return fabs(x) * 3.0; }
double f_fmin(double a, double b) { return fmin(a * a, b); }
double f_fmax(double a, double b) { return fmax(a * a, b); }
double f_hypot(double a, double b) { return hypot(a, b); }
double f_fmod(double a, double b) { return fmod(a, b); }
double f_copysign(double a, double b) { return copysign(a, b); }
double f_fma(double a, double b, double c) { return fma(a, b, c); }
double f_erf(double x) { return erf(x); }

int main(void) {
  check("fabs' (x<0)", __enzyme_autodiff((void *)f_fabs, -2.0), -3.0, EXACT_TOL);
  check("fabs' (x>0)", __enzyme_autodiff((void *)f_fabs, 0.5), 3.0, EXACT_TOL);
  Pair g = __enzyme_autodiff_pair((void *)f_fmin, 1.5, 4.0); /* a*a = 2.25 wins */
  check("fmin d/da", g.da, 3.0, EXACT_TOL);
  check("fmin d/db", g.db, 0.0, EXACT_TOL);
  g = __enzyme_autodiff_pair((void *)f_fmax, 1.5, 4.0); /* b wins */
  check("fmax d/da", g.da, 0.0, EXACT_TOL);
  check("fmax d/db", g.db, 1.0, EXACT_TOL);
  g = __enzyme_autodiff_pair((void *)f_hypot, 3.0, 4.0);
  check("hypot d/da", g.da, 0.6, 1e-12);
  check("hypot d/db", g.db, 0.8, 1e-12);
  g = __enzyme_autodiff_pair((void *)f_fmod, 7.5, 2.0); /* 7.5 - 3*2 */
  check("fmod d/da", g.da, 1.0, EXACT_TOL);
  check("fmod d/db", g.db, -3.0, EXACT_TOL);
  g = __enzyme_autodiff_pair((void *)f_copysign, 2.0, -1.0);
  check("copysign d/da", g.da, -1.0, EXACT_TOL);
  check("copysign d/db", g.db, 0.0, EXACT_TOL);
  Triple t = __enzyme_autodiff_triple((void *)f_fma, 2.0, 3.0, 4.0);
  check("fma d/da", t.da, 3.0, EXACT_TOL);
  check("fma d/db", t.db, 2.0, EXACT_TOL);
  check("fma d/dc", t.dc, 1.0, EXACT_TOL);
  double x = 0.3;
  check("erf'", __enzyme_autodiff((void *)f_erf, x), 2.0 / sqrt(M_PI) * exp(-x * x), 1e-12);
  return check_done();
}
