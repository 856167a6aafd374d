/* A callee with local arrays carrying derivatives, called in a loop of the differentiated
 * function: each dynamic call has its own frame and its own shadow of the locals, freed
 * by its reverse phase. A 3-point moving average applied repeatedly. */
#include "enzyme.h"

enum { N = 6 };

__attribute__((noinline)) void blur(double *x, double strength) {
  double copy[N], weights[3] = {0.25, 0.5, 0.25};
  for (int i = 0; i < N; i++)
    copy[i] = x[i];
  for (int i = 1; i + 1 < N; i++) {
    double avg = 0.0;
    for (int k = 0; k < 3; k++)
      avg += weights[k] * copy[i + k - 1];
    x[i] = (1.0 - strength) * copy[i] + strength * tanh(avg);
  }
}

double f(double *x, double strength, int rounds) {
  for (int r = 0; r < rounds; r++)
    blur(x, strength);
  double acc = 0.0;
  for (int i = 0; i < N; i++)
    acc += (i + 1) * x[i];
  return acc;
}

static double run(const double *x0, double s) {
  double x[N];
  for (int i = 0; i < N; i++)
    x[i] = x0[i];
  return f(x, s, 4);
}

int main(void) {
  const double x0[N] = {0.3, -0.2, 0.9, 0.4, -0.7, 0.1};
  double x[N], dx[N] = {0}, s = 0.6, h = FD_STEP;
  for (int i = 0; i < N; i++)
    x[i] = x0[i];
  double ds = __enzyme_autodiff((void *)f, enzyme_dup, x, dx, s, enzyme_const, 4);
  check("d/dstrength", ds, (run(x0, s + h) - run(x0, s - h)) / (2 * h), FD_TOL);
  for (int i = 0; i < N; i++) {
    double up[N], down[N];
    for (int j = 0; j < N; j++)
      up[j] = down[j] = x0[j];
    up[i] += h, down[i] -= h;
    check("d/dx[i]", dx[i], (run(up, s) - run(down, s)) / (2 * h), FD_TOL);
  }
  return check_done();
}
