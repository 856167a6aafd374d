/* Enzyme's C++ style of declaring the API, a function template whose mangled name
 * contains `__enzyme_autodiff` / `__enzyme_fwddiff`, on code with a lambda passed to a
 * template and a std::vector scratch buffer. Forward mode (one tangent direction) and
 * reverse mode of the same function agree with each other and with finite differences. */
#include <cmath>
#include <vector>

#include "enzyme.h"

template <typename Return, typename... Args> Return __enzyme_autodiff(Args...);
template <typename Return, typename... Args> Return __enzyme_fwddiff(Args...);

template <typename F> static double reduce(const std::vector<double> &v, F combine) {
  double acc = 0;
  for (double e : v)
    acc = combine(acc, e);
  return acc;
}

static double softplus_sum(const double *x, int n) {
  std::vector<double> scaled(n);
  for (int i = 0; i < n; i++)
    scaled[i] = 0.5 * x[i] * (i + 1);
  return reduce(scaled, [](double acc, double e) { return acc + std::log1p(std::exp(e)); });
}

int main() {
  const int n = 5;
  double x[n] = {0.2, -0.7, 1.1, 0.05, -1.3}, dx[n] = {0};
  __enzyme_autodiff<void>((void *)softplus_sum, enzyme_dup, x, dx, enzyme_const, n);
  check_fd_gradient(softplus_sum, x, dx, n);
  /* The directional derivative along v equals dx . v. */
  double v[n] = {1.0, -0.5, 0.25, 2.0, 0.75}, along = 0;
  for (int i = 0; i < n; i++)
    along += dx[i] * v[i];
  double tangent =
      __enzyme_fwddiff<double>((void *)softplus_sum, enzyme_dup, x, v, enzyme_const, n);
  check("forward tangent vs reverse gradient", tangent, along, EXACT_TOL);
  return check_done();
}
