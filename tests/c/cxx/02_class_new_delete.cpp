/* A class that owns `new double[]` storage (freed by `delete[]` in its destructor), a
 * member function, a template, and an over-aligned object from the aligned `operator new`
 * (`alignas(64)`, released by the aligned `operator delete`). Reverse mode with respect
 * to the coefficients (through memory) and to x (an active return). */
#include <cmath>

#include "enzyme.h"

class Polynomial {
public:
  explicit Polynomial(int degree) : n_(degree + 1), coef_(new double[degree + 1]) {}
  ~Polynomial() { delete[] coef_; }
  Polynomial(const Polynomial &) = delete;
  Polynomial &operator=(const Polynomial &) = delete;
  double &operator[](int i) { return coef_[i]; }
  double eval(double x) const {
    double y = 0;
    for (int i = n_ - 1; i >= 0; i--)
      y = y * x + coef_[i];
    return y;
  }

private:
  int n_;
  double *coef_;
};

struct alignas(64) Accumulator {
  double lanes[8];
};

template <typename T> static T squared(T v) { return v * v; }

__attribute__((noinline)) double fit(const double *c, int degree, double x) {
  Polynomial p(degree);
  for (int i = 0; i <= degree; i++)
    p[i] = std::sin(c[i]) + c[i];
  Accumulator *acc = new Accumulator;
  for (int k = 0; k < 8; k++)
    acc->lanes[k] = p.eval(x + 0.1 * k);
  double total = 0;
  for (int k = 0; k < 8; k++)
    total += squared(acc->lanes[k]);
  delete acc;
  return total;
}

static double fit_of_coefficients(const double *c, int n) { return fit(c, n - 1, 0.3); }

int main() {
  const int degree = 4;
  double c[degree + 1] = {0.5, -0.2, 0.3, 0.1, -0.4}, dc[degree + 1] = {0};
  double x = 0.3;
  double dx = __enzyme_autodiff((void *)fit, enzyme_dup, c, dc, enzyme_const, degree,
                                enzyme_out, x);
  check_fd_gradient(fit_of_coefficients, c, dc, degree + 1);
  double fd = (fit(c, degree, x + FD_STEP) - fit(c, degree, x - FD_STEP)) / (2 * FD_STEP);
  check("d fit / dx", dx, fd, FD_TOL);
  return check_done();
}
