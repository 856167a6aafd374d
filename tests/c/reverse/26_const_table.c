/* A constant global table of coefficients (read-only, inactive memory):
 * p(x) = sum c_k x^k by Horner, p'(x) = sum k c_k x^(k-1). */
#include "enzyme.h"

static const double coeff[6] = {1.0, -2.0, 0.5, 3.0, -0.25, 0.125};

double poly(double x) {
  double r = 0.0;
  for (int k = 5; k >= 0; k--)
    r = r * x + coeff[k];
  return r;
}

int main(void) {
  double x = -0.9;
  double want = 0.0, p = 1.0;
  for (int k = 1; k < 6; k++) {
    want += k * coeff[k] * p;
    p *= x;
  }
  check("p'(x) with a const table", __enzyme_autodiff((void *)poly, x), want, 1e-12);
  return check_done();
}
