/* The gradient of the norm example (issue 7's benchmark): d/d in of sum_i w_i out_i where
   out = norm(in), through Enzyme's C API. With `restrict`, adc's pre-AD pipeline hoists
   mag(in, n) out of norm's loop before AD, so the gradient is O(n): t(2n)/t(n) ~ 2. With
   `--ad-before-opt` the derivative of the unhoisted loop calls mag's derivative per
   iteration: O(n^2), ratio ~ 4. Built by grad_norm.sh from clang -O0 bitcode. main prints
   n, the best gradient time at n and 2n, their ratio, and a checksum line; the gradient is
   checked against central finite differences at n = 16 first (exit 1 on a mismatch). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

double mag(const double *x, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; i++) sum += x[i] * x[i];
  return sqrt(sum);
}

void norm(double *__restrict__ out, const double *__restrict__ in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

static void gradient(double *out, double *d_out, const double *in, double *d_in, int n) {
  __enzyme_autodiff((void *)norm, enzyme_dup, out, d_out, enzyme_dup, in, d_in,
                    enzyme_const, n);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double weight(int i) { return 1.0 + 0.5 * (i % 7); }

/* sum_i w_i norm(in)_i, the scalar whose gradient is checked. */
static double loss(const double *in, int n) {
  double *out = malloc(n * sizeof *out), s = 0.0;
  norm(out, in, n);
  for (int i = 0; i < n; i++) s += weight(i) * out[i];
  free(out);
  return s;
}

static int check(int n) {
  double *in = malloc(n * sizeof *in), *d_in = calloc(n, sizeof *d_in);
  double *out = malloc(n * sizeof *out), *d_out = malloc(n * sizeof *d_out);
  for (int i = 0; i < n; i++) in[i] = 1.0 + (i % 13) * 0.25, d_out[i] = weight(i);
  gradient(out, d_out, in, d_in, n);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double h = 1e-6, keep = in[i];
    in[i] = keep + h;
    double up = loss(in, n);
    in[i] = keep - h;
    double down = loss(in, n);
    in[i] = keep;
    double fd = (up - down) / (2 * h);
    if (fabs(fd - d_in[i]) > 1e-6 * (1.0 + fabs(fd))) {
      printf("d/d in[%d]: adc %.12g, finite differences %.12g\n", i, d_in[i], fd);
      bad = 1;
    }
  }
  free(in), free(d_in), free(out), free(d_out);
  return bad;
}

static double time_gradient(int n, int reps, double *checksum) {
  double *in = malloc(n * sizeof *in), *d_in = malloc(n * sizeof *d_in);
  double *out = malloc(n * sizeof *out), *d_out = malloc(n * sizeof *d_out);
  for (int i = 0; i < n; i++) in[i] = 1.0 + (i % 13) * 0.25;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < n; i++) d_in[i] = 0.0, d_out[i] = weight(i);
    double t = now();
    gradient(out, d_out, in, d_in, n);
    t = now() - t;
    if (t < best) best = t;
  }
  for (int i = 0; i < n; i++) *checksum += d_in[i];
  free(in), free(d_in), free(out), free(d_out);
  return best;
}

int main(void) {
  if (check(16)) return 1;
  int sizes[] = {1000, 2000, 4000, 8000};
  double checksum = 0.0;
  printf("%8s %12s %12s %8s\n", "n", "t(n) s", "t(2n) s", "ratio");
  for (int k = 0; k < 4; k++) {
    int n = sizes[k];
    double t1 = time_gradient(n, 5, &checksum);
    double t2 = time_gradient(2 * n, 5, &checksum);
    printf("%8d %12.6f %12.6f %8.2f\n", n, t1, t2, t2 / t1);
  }
  printf("checksum %.6e\n", checksum);
  return 0;
}
