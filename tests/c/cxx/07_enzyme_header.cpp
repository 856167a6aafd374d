/* adc's own C++ header (include/enzyme/enzyme): reverse mode with per-argument result
 * slots (Active adjoints, Const and Duplicated slots between them), the primal result
 * with ReverseWithPrimal, forward mode returning the tangent or {primal, tangent},
 * Duplicated std::vector references, a struct passed by value, a struct returned by
 * value (through sret) in forward mode, and a callable object. */
#include <enzyme/enzyme>
#include <vector>

#include "enzyme.h"

static double square(double x) { return x * x; }
static double scaled(double x, const double *y) { return x * *y * *y; }
static double product3(double a, double b, double c) { return a * b * c; }
static double sum_of_squares(const std::vector<double> &v) {
  double s = 0;
  for (double e : v)
    s += e * e;
  return s;
}
struct point {
  double x, y;
};
static double cross(point p) { return p.x * p.y; }
struct box {
  double lo, hi, width, unused;
};
static box widen(double lo, double hi) { return box{lo - 1, hi * hi, hi * hi - lo, 0}; }

int main() {
  using namespace enzyme;
  check("reverse, Active", get<0>(get<0>(autodiff<Reverse>(square, Active{3.0}))), 6.0,
        EXACT_TOL);

  double y = 5, dy = 0;
  auto r = autodiff<Reverse>(scaled, Active{2.0}, Duplicated<const double *>{&y, &dy});
  check("reverse, Active then Duplicated: dx", get<0>(get<0>(r)), 25.0, EXACT_TOL);
  check("reverse, Active then Duplicated: dy", dy, 20.0, EXACT_TOL);

  auto slots = autodiff<Reverse>(product3, Const{2.0}, Active{3.0}, Active{4.0});
  check("reverse, slot of the second argument", get<1>(get<0>(slots)), 8.0, EXACT_TOL);
  check("reverse, slot of the third argument", get<2>(get<0>(slots)), 6.0, EXACT_TOL);

  auto with_primal = autodiff<ReverseWithPrimal>(product3, Active{2.0}, Const{3.0}, Active{4.0});
  check("ReverseWithPrimal, primal", get<1>(with_primal), 24.0, EXACT_TOL);
  check("ReverseWithPrimal, da", get<0>(get<0>(with_primal)), 12.0, EXACT_TOL);
  check("ReverseWithPrimal, dc", get<2>(get<0>(with_primal)), 6.0, EXACT_TOL);

  check("forward, tangent", get<0>(autodiff<Forward>(square, Duplicated{3.0, 2.0})), 12.0,
        EXACT_TOL);
  auto both = autodiff<Forward, Duplicated<double>>(square, Duplicated{3.0, 1.0});
  check("forward, primal", get<0>(both), 9.0, EXACT_TOL);
  check("forward, tangent with primal", get<1>(both), 6.0, EXACT_TOL);

  std::vector<double> v{1, 2, 3}, dv(3, 0.0);
  autodiff<Reverse>(sum_of_squares, Duplicated<const std::vector<double> &>(v, dv));
  for (int i = 0; i < 3; i++)
    check("reverse, Duplicated std::vector", dv[i], 2.0 * v[i], EXACT_TOL);
  std::vector<double> tv{1, 0, 1};
  check("forward, Duplicated std::vector",
        get<0>(autodiff<Forward>(sum_of_squares, Duplicated<const std::vector<double> &>(v, tv))),
        8.0, EXACT_TOL);

  check("forward, struct by value",
        get<0>(autodiff<Forward>(cross, Duplicated{point{2, 3}, point{1, 0}})), 3.0, EXACT_TOL);

  auto widened = autodiff<Forward, Duplicated<box>>(widen, Duplicated{1.0, 0.0},
                                                     Duplicated{3.0, 1.0});
  check("forward, struct result: primal", get<0>(widened).hi, 9.0, EXACT_TOL);
  check("forward, struct result: tangent", get<1>(widened).width, 6.0, EXACT_TOL);
  check("forward, struct result: tangent of lo", get<1>(widened).lo, 0.0, EXACT_TOL);

  double k = 3;
  auto cubic = [k](double x) { return k * x * x * x; };
  check("reverse, callable object", get<0>(get<0>(autodiff<Reverse>(cubic, Active{2.0}))),
        36.0, EXACT_TOL);
  return check_done();
}
