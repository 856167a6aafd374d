/* An array of function pointers selected by index inside the differentiated function:
 * a three-stage pipeline whose stages are picked by integer codes. */
#include "enzyme.h"

typedef double (*Stage)(double, double);

__attribute__((noinline)) static double scale(double x, double p) { return p * x; }
__attribute__((noinline)) static double bend(double x, double p) { return sin(x) + p * x * x; }
__attribute__((noinline)) static double squash(double x, double p) { return x / (1.0 + p * x * x); }

static Stage const stages[3] = {scale, bend, squash};

double pipeline(double x, double p, const int *codes, int n) {
  for (int i = 0; i < n; i++)
    x = stages[codes[i]](x, p);
  return x;
}

typedef struct { double dx, dp; } Pair;
Pair __enzyme_autodiff_pair(void *, ...);

int main(void) {
  const int codes[5] = {1, 0, 2, 1, 2};
  double x = 0.6, p = 0.7, h = FD_STEP;
  Pair g = __enzyme_autodiff_pair((void *)pipeline, x, p, enzyme_const, codes, enzyme_const, 5);
  check("d/dx", g.dx,
        (pipeline(x + h, p, codes, 5) - pipeline(x - h, p, codes, 5)) / (2 * h), FD_TOL);
  check("d/dp", g.dp,
        (pipeline(x, p + h, codes, 5) - pipeline(x, p - h, codes, 5)) / (2 * h), FD_TOL);
  return check_done();
}
