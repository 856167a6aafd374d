/* The norm example of the Enzyme paper (and of /work/shared/DESIGN.md): `mag` is O(n), and
   calling it in `norm`'s loop makes `norm` O(n^2) unless LICM hoists the call. Compiled by
   clang at -O0, then by adc with and without licm (see norm.sh); main prints, for each n,
   the best time of norm at n and at 2n and their ratio (~2 when mag is hoisted, ~4 when
   not), on stdout, and a checksum line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef RESTRICT
#define R __restrict__
#else
#define R
#endif

double mag(const double *x, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; i++) sum += x[i] * x[i];
  return sqrt(sum);
}

/* Built twice: as the task states it (no restrict: the store to out[i] may clobber in[],
   so mag(in, n) is not invariant for an alias-aware LICM), and with -DRESTRICT. */
void norm(double *R out, const double *R in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Best of `reps` runs of norm at size n; adds out[] to *checksum. */
static double time_norm(int n, int reps, double *checksum) {
  double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  for (int i = 0; i < n; i++) in[i] = 1.0 + (i % 13) * 0.25;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = now();
    norm(out, in, n);
    t = now() - t;
    if (t < best) best = t;
  }
  for (int i = 0; i < n; i++) *checksum += out[i];
  free(in);
  free(out);
  return best;
}

int main(int argc, char **argv) {
  int sizes[] = {1000, 2000, 4000, 8000};
  double checksum = 0.0;
  printf("%8s %12s %12s %8s\n", "n", "t(n) s", "t(2n) s", "ratio");
  for (int k = 0; k < 4; k++) {
    int n = sizes[k];
    double t1 = time_norm(n, 5, &checksum);
    double t2 = time_norm(2 * n, 5, &checksum);
    printf("%8d %12.6f %12.6f %8.2f\n", n, t1, t2, t2 / t1);
  }
  printf("checksum %.6e\n", checksum);
  return 0;
}
