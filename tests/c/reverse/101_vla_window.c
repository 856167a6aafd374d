/* A variable-length array inside a loop of the differentiated function: a dynamic alloca
 * that runs once per iteration (stacksave/stackrestore at -O0). Its memory and its
 * shadow's are released when the function returns (the leak check runs this under
 * valgrind), and the window's derivatives flow through it. */
#include "enzyme.h"

__attribute__((noinline)) double window_energy(const double *x, int n, int w) {
  double total = 0.0;
  for (int start = 0; start + w <= n; start++) {
    double win[w];
    for (int i = 0; i < w; i++)
      win[i] = x[start + i] * (1.0 + 0.1 * i);
    double s = 0.0;
    for (int i = 0; i < w; i++)
      s += sin(win[i]) * win[(i + 1) % w];
    total += s / w;
  }
  return total;
}

double f(double *x, int n, int w) { return window_energy(x, n, w); }

int main(int argc, char **argv) {
  (void)argv;
  enum { N = 9 };
  int w = 3 + argc; /* not a constant: a true VLA */
  double x[N], dx[N] = {0};
  for (int i = 0; i < N; i++)
    x[i] = 0.3 * i - 1.1 + 0.05 * i * i;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N, enzyme_const, w);
  for (int i = 0; i < N; i++) {
    double saved = x[i];
    x[i] = saved + FD_STEP;
    double up = f(x, N, w);
    x[i] = saved - FD_STEP;
    double down = f(x, N, w);
    x[i] = saved;
    check("df/dx[i]", dx[i], (up - down) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
