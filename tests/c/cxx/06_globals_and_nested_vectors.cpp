/* A whole C++ program as it comes: <iostream> (whose header constructs a global),
 * global objects with constructors and destructors, __attribute__((constructor(N))) with
 * a priority, and a std::vector<std::vector<double>> weight matrix, whose copies run
 * through libstdc++'s `catch (...) { destroy; throw; }`. The constructors must have run
 * before main (adc writes them to .init_array), and the gradient of a sigmoid layer with
 * respect to the nested vector's elements must match finite differences. */
#include <cmath>
#include <iostream>
#include <vector>

#include "enzyme.h"

using Matrix = std::vector<std::vector<double>>;

static int startup_order; /* 10 * first + second */

__attribute__((constructor(200))) static void early() { startup_order = startup_order * 10 + 1; }

struct Layer {
  Matrix weights;
  Layer() : weights(3, std::vector<double>(4)) {
    startup_order = startup_order * 10 + 2;
    int k = 0;
    for (auto &row : weights)
      for (auto &w : row)
        w = std::sin(0.7 * k++);
  }
};

static Layer layer; /* default priority: after `early` */
static const std::vector<double> input = {0.5, -1.0, 0.25, 2.0};

__attribute__((noinline)) double activation_energy(const Matrix &weights,
                                                   const std::vector<double> &x) {
  std::vector<double> h(weights.size());
  for (size_t i = 0; i < weights.size(); i++) {
    double a = 0;
    for (size_t j = 0; j < x.size(); j++)
      a += weights[i][j] * x[j];
    h[i] = 1.0 / (1.0 + std::exp(-a));
  }
  double energy = 0;
  for (double v : h)
    energy += v * v;
  return energy;
}

static double energy_of(const double *w, int n) {
  Matrix weights = layer.weights;
  int k = 0;
  for (auto &row : weights)
    for (auto &e : row)
      e = w[k++];
  (void)n;
  return activation_energy(weights, input);
}

int main() {
  check("constructors ran before main, by priority", startup_order, 12, 0);
  Matrix d_weights(3, std::vector<double>(4, 0.0));
  std::vector<double> x = input;
  __enzyme_autodiff((void *)activation_energy, enzyme_dup, &layer.weights, &d_weights,
                    enzyme_const, &x);
  double w[12], dw[12];
  int k = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++, k++) {
      w[k] = layer.weights[i][j];
      dw[k] = d_weights[i][j];
    }
  check_fd_gradient(energy_of, w, dw, 12);
  std::cout << "energy " << activation_energy(layer.weights, input) << "\n";
  return check_done();
}
