/* Virtual calls on objects the caller declares constant (enzyme_const), with the active
 * data in a std::vector passed by reference (enzyme_dup of the vector object: its shadow
 * is a second vector whose storage receives the gradient). The call through the vtable
 * may reach every override of its type; none writes through `this`, so the objects need
 * no shadow. std::max and std::pow of an active value on the way. */
#include <algorithm>
#include <cmath>
#include <vector>

#include "enzyme.h"

struct Shape {
  virtual ~Shape() {}
  virtual double area(double size) const = 0;
};

struct Square : Shape {
  double area(double size) const override { return size * size; }
};

struct Circle : Shape {
  double area(double size) const override { return 3.14159 * size * size; }
};

__attribute__((noinline)) double total_area(const std::vector<double> &sizes,
                                            const Shape *const *shapes) {
  double total = 0;
  for (size_t i = 0; i < sizes.size(); i++)
    total += shapes[i % 2]->area(sizes[i]) + std::max(sizes[i], 0.5) * std::pow(sizes[i], 3);
  return total;
}

static double total_of(const double *p, int n) {
  std::vector<double> sizes(p, p + n);
  Square square;
  Circle circle;
  const Shape *shapes[2] = {&square, &circle};
  return total_area(sizes, shapes);
}

int main() {
  std::vector<double> sizes = {0.3, 0.9, -0.4, 1.2}, d_sizes(4, 0.0);
  Square square;
  Circle circle;
  const Shape *shapes[2] = {&square, &circle};
  __enzyme_autodiff((void *)total_area, enzyme_dup, &sizes, &d_sizes, enzyme_const, shapes);
  check_fd_gradient(total_of, sizes.data(), d_sizes.data(), 4);
  return check_done();
}
