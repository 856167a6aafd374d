/* std::vector in the differentiated function: its storage comes from `operator new` and
 * goes back through the sized `operator delete`, so the vector's elements get a shadow
 * block like a malloc'd array. At -O0 the vector's constructor is an `invoke` with a
 * cleanup landing pad (compiled with exceptions on, as C++ is by default). Checked with
 * central finite differences. */
#include <cmath>
#include <vector>

#include "enzyme.h"

static double ring_energy(const double *x, int n) {
  std::vector<double> h(x, x + n);
  for (double &v : h)
    v = std::tanh(v);
  double energy = 0;
  for (size_t i = 0; i < h.size(); i++)
    energy += h[i] * h[(i + 1) % h.size()];
  return energy;
}

int main() {
  double x[6] = {0.1, 0.4, -0.3, 0.9, -1.2, 0.7}, dx[6] = {0};
  __enzyme_autodiff((void *)ring_energy, enzyme_dup, x, dx, enzyme_const, 6);
  check_fd_gradient(ring_energy, x, dx, 6);
  return check_done();
}
