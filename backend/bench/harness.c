// Driver of backend/bench/run.sh: times the kernels of simd_kernels.adir (linked from an
// adc-built object) and checks them against the same arithmetic in C.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void fma8_stream(double a, const double *x, double *y, long n);
void horner8(const double *xs, const double *dxs, double *out, long n);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);  // CPU time: the machine is shared
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  long n = 512, reps = argc > 1 ? atol(argv[1]) : 20000;
  double *x = aligned_alloc(64, n * 64), *y = aligned_alloc(64, n * 64);
  double *xs = aligned_alloc(64, n * 8), *out = aligned_alloc(64, n * 64);
  for (long i = 0; i < 8 * n; i++) {
    x[i] = 1.0 + (i % 7) * 0.125;
    y[i] = 0.0;
  }
  for (long i = 0; i < n; i++) xs[i] = 0.001 * i;
  // Correctness first: one call of each against C.
  fma8_stream(0.5, x, y, n);
  horner8(xs, x, out, n);
  for (long i = 0; i < 8 * n; i++) {
    double xi = xs[i / 8], dp = 0.5 + xi * (2.0 / 3 + xi * (0.75 + xi * (0.8 + xi * (5.0 / 6))));
    if (y[i] != 0.5 * x[i] || fabs(out[i] - dp * x[i]) > 1e-12 * fabs(dp * x[i])) {
      printf("mismatch at %ld: %g %g (want %g)\n", i, y[i], out[i], dp * x[i]);
      return 1;
    }
  }
  double t0 = now();
  for (long r = 0; r < reps; r++) fma8_stream(1e-9, x, y, n);
  double t1 = now();
  for (long r = 0; r < reps; r++) horner8(xs, x, out, n);
  double t2 = now();
  printf("%.3f %.3f\n", (t1 - t0) * 1e9 / (reps * n), (t2 - t1) * 1e9 / (reps * n));
  return 0;
}
