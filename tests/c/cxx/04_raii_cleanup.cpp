/* Exceptions enabled, none thrown: a local with a destructor around a call that may throw
 * (an `invoke` whose landing pad runs the destructor), and a `noexcept` function calling a
 * function that may throw (clang's terminate handler). adc drops both unwind edges; the
 * derivatives are those of the normal path. */
#include <cmath>

#include "enzyme.h"

static int scopes_closed;

struct Scope {
  ~Scope() { scopes_closed++; }
};

__attribute__((noinline)) double may_throw(double v) {
  if (std::isnan(v))
    throw 1;
  return std::exp(-v * v);
}

__attribute__((noinline)) double gaussian_mix(const double *x, int n) {
  double total = 0;
  for (int i = 0; i < n; i++) {
    Scope scope;
    total += may_throw(x[i] - 0.5 * i) * x[(i + 1) % n];
  }
  return total;
}

static double wrapped(const double *x, int n) noexcept { return gaussian_mix(x, n) * 2.0; }

int main() {
  const int n = 4;
  double x[n] = {0.3, 0.8, -0.4, 1.5}, dx[n] = {0};
  __enzyme_autodiff((void *)wrapped, enzyme_dup, x, dx, enzyme_const, n);
  check_fd_gradient(wrapped, x, dx, n);
  check("destructors ran", scopes_closed > 0, 1, 0);
  return check_done();
}
