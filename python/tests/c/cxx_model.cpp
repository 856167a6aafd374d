// A C++ source: templates and std::vector inside, C linkage outside.
#include <cmath>
#include <vector>

template <typename T> static T softplus(T v) { return std::log1p(std::exp(v)); }

extern "C" double cxx_energy(const double *q, int n) {
  std::vector<double> d(n > 1 ? n - 1 : 0);
  for (int i = 0; i + 1 < n; i++) d[i] = q[i + 1] - q[i];
  double e = 0.0;
  for (double v : d) e += softplus(v) + 0.5 * v * v;
  return e;
}
