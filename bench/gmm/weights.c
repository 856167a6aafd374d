/* bench/gmm/weights.c: how many (point, component) pairs of an ADBench GMM input have a
 * posterior weight w = exp(main_term - lse) that is zero, denormal, tiny or normal, and
 * how many entries of the reversed triangle's adjoint d_Qx = -w * Qx come out denormal.
 * Those decide how many multiplies of the gradient take denormal assists under IEEE
 * arithmetic (docs/src/gradient-performance.md, session 8). Uses the objective's own
 * helpers (it includes bench/programs/gmm.c).
 *
 *   clang-19 -O2 -w bench/gmm/weights.c -lm -o weights
 *   ./weights ../shared/data/adbench/gmm/1k/gmm_d64_K25.txt */
#define main gmm_main
#include "../programs/gmm.c"
#undef main
#include <float.h>

/* gmm.c's gradient and timing code is not used here; these satisfy the linker. */
double __enzyme_autodiff(void *f, ...) { return f == NULL; }
int enzyme_const, enzyme_dup, enzyme_dupnoneed;
void heap_meter_mark(void) {}
long long heap_meter_peak_above_mark(void) { return 0; }

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s gmm_file\n", argv[0]);
    return 2;
  }
  Gmm g;
  double *params = read_gmm(argv[1], &g);
  int d = g.d, k = g.k, icf_sz = d * (d + 1) / 2;
  const double *alphas = params, *means = params + k, *icf = means + k * d;
  double *qdiags = xcalloc(d * k, sizeof(double)), *sum_qs = xcalloc(k, sizeof(double));
  double *xc = xcalloc(d, sizeof(double)), *main_term = xcalloc(k, sizeof(double));
  double *qx = xcalloc((size_t)k * d, sizeof(double));
  preprocess_qs(d, k, icf, sum_qs, qdiags);
  long zero = 0, denormal = 0, tiny = 0, normal = 0, denormal_adjoints = 0;
  for (int ix = 0; ix < g.n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      subtract(d, &g.x[(size_t)ix * d], &means[ik * d], xc);
      Qtimesx(d, &qdiags[ik * d], &icf[ik * icf_sz + d], xc, &qx[(size_t)ik * d]);
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sqnorm(d, &qx[(size_t)ik * d]);
    }
    double lse = log_sum_exp(k, main_term);
    for (int ik = 0; ik < k; ik++) {
      double w = exp(main_term[ik] - lse);
      zero += w == 0;
      denormal += w > 0 && w < DBL_MIN;
      tiny += w >= DBL_MIN && w < 1e-290;
      normal += w >= 1e-290;
      for (int id = 0; id < d; id++) {
        double adjoint = -w * qx[(size_t)ik * d + id];
        denormal_adjoints += adjoint != 0 && fabs(adjoint) < DBL_MIN;
      }
    }
  }
  printf("pairs %ld: w = 0 %ld, denormal %ld, below 1e-290 %ld, normal %ld; "
         "denormal d_Qx entries %ld of %ld\n",
         (long)g.n * k, zero, denormal, tiny, normal, denormal_adjoints, (long)g.n * k * d);
  return 0;
}
