/* GMM: the ADBench Gaussian-mixture objective (log-sum-exp over K components with
 * d-dimensional means, the triangular inverse-covariance parameterization `icf` and a
 * Wishart prior); gradient with respect to alphas, means and icf, which lie in one array
 * params = [alphas (K) | means (K*d) | icf (K*d*(d+1)/2)].
 * Input: an ADBench gmm file (see bench.h for the command line). */
#include "bench.h"

static double log_sum_exp(const double *v, int n) {
  double mx = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] > mx)
      mx = v[i];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += exp(v[i] - mx);
  return log(s) + mx;
}

/* wishart_const = K * C of ADBench's prior: it depends on d, m, gamma only (and needs
 * lgamma), so the caller computes it once. Scratch: centered (d), qcentered (d),
 * main_term (k), sum_qs (k). */
double gmm_objective(int d, int k, int n, const double *params, const double *x, double gamma,
                     int m, double wishart_const, double *centered, double *qcentered,
                     double *main_term, double *sum_qs) {
  const double *alphas = params, *means = params + k, *icf = params + k + k * d;
  int icf_size = d * (d + 1) / 2;
  for (int c = 0; c < k; c++) {
    double s = 0.0;
    for (int j = 0; j < d; j++)
      s += icf[c * icf_size + j];
    sum_qs[c] = s;
  }
  double slse = 0.0;
  for (int i = 0; i < n; i++) {
    for (int c = 0; c < k; c++) {
      const double *mu = means + c * d, *q = icf + c * icf_size;
      for (int j = 0; j < d; j++)
        centered[j] = x[i * d + j] - mu[j];
      /* L * centered, L lower triangular: diagonal exp(q[0..d]), then column-major
       * strictly-lower entries q[d..]. */
      for (int j = 0; j < d; j++)
        qcentered[j] = exp(q[j]) * centered[j];
      int lower = d;
      for (int col = 0; col < d; col++)
        for (int row = col + 1; row < d; row++)
          qcentered[row] += q[lower++] * centered[col];
      double sq = 0.0;
      for (int j = 0; j < d; j++)
        sq += qcentered[j] * qcentered[j];
      main_term[c] = alphas[c] + sum_qs[c] - 0.5 * sq;
    }
    slse += log_sum_exp(main_term, k);
  }
  double prior = 0.0;
  for (int c = 0; c < k; c++) {
    const double *q = icf + c * icf_size;
    double frob = 0.0;
    for (int j = 0; j < d; j++)
      frob += exp(2.0 * q[j]);
    for (int j = d; j < icf_size; j++)
      frob += q[j] * q[j];
    prior += 0.5 * gamma * gamma * frob - m * sum_qs[c];
  }
  double constant = -n * d * 0.5 * log(2.0 * M_PI);
  return constant + slse - n * log_sum_exp(alphas, k) + prior - wishart_const;
}

typedef struct {
  int d, k, n, m;
  double gamma, wishart_const;
  double *x, *centered, *qcentered, *main_term, *sum_qs;
} Gmm;

static double wishart_constant(int d, int k, int m, double gamma) {
  int n_ = d + m + 1;
  double lgd = 0.25 * d * (d - 1) * log(M_PI);
  for (int j = 1; j <= d; j++)
    lgd += lgamma(0.5 * n_ + 0.5 * (1 - j));
  return k * (n_ * d * (log(gamma) - 0.5 * log(2.0)) - lgd);
}

static void gmm_scratch(Gmm *g) {
  g->centered = xcalloc(g->d, sizeof(double));
  g->qcentered = xcalloc(g->d, sizeof(double));
  g->main_term = xcalloc(g->k, sizeof(double));
  g->sum_qs = xcalloc(g->k, sizeof(double));
  g->wishart_const = wishart_constant(g->d, g->k, g->m, g->gamma);
}

static int param_count(const Gmm *g) { return g->k + g->k * g->d + g->k * g->d * (g->d + 1) / 2; }

static double eval_gmm(void *ctx, double *params) {
  Gmm *g = ctx;
  return gmm_objective(g->d, g->k, g->n, params, g->x, g->gamma, g->m, g->wishart_const,
                       g->centered, g->qcentered, g->main_term, g->sum_qs);
}

static void gradient(Gmm *g, double *params, double *dparams, int count) {
  /* Shadows of the scratch arrays: AD accumulates into them, the caller owns them. */
  double *dc = xcalloc(g->d, sizeof(double)), *dq = xcalloc(g->d, sizeof(double));
  double *dm = xcalloc(g->k, sizeof(double)), *ds = xcalloc(g->k, sizeof(double));
  memset(dparams, 0, count * sizeof(double));
  __enzyme_autodiff((void *)gmm_objective, enzyme_const, g->d, enzyme_const, g->k, enzyme_const,
                    g->n, enzyme_dup, params, dparams, enzyme_const, g->x, enzyme_const, g->gamma,
                    enzyme_const, g->m, enzyme_const, g->wishart_const, enzyme_dup, g->centered, dc,
                    enzyme_dup, g->qcentered, dq, enzyme_dup, g->main_term, dm, enzyme_dup,
                    g->sum_qs, ds);
  free(dc), free(dq), free(dm), free(ds);
}

/* Reads an ADBench gmm file; points missing from the file repeat the last one read. */
static double *read_gmm(const char *path, Gmm *g) {
  Tokens t = read_tokens(path);
  g->d = (int)next_token(&t, path);
  g->k = (int)next_token(&t, path);
  g->n = (int)next_token(&t, path);
  if (g->d <= 0 || g->k <= 0 || g->n <= 0) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  double *params = xcalloc(param_count(g), sizeof(double));
  for (int i = 0; i < param_count(g); i++)
    params[i] = next_token(&t, path);
  size_t rest = t.count - t.next;
  if (rest < (size_t)g->d + 2) {
    fprintf(stderr, "%s: no points or no prior\n", path);
    exit(2);
  }
  size_t stored = (rest - 2) / g->d;
  g->x = xcalloc((size_t)g->n * g->d, sizeof(double));
  for (int i = 0; i < g->n; i++)
    for (int j = 0; j < g->d; j++)
      g->x[(size_t)i * g->d + j] =
          t.values[t.next + ((size_t)i < stored ? (size_t)i : stored - 1) * g->d + j];
  t.next += stored * g->d;
  g->gamma = next_token(&t, path);
  g->m = (int)next_token(&t, path);
  free(t.values);
  return params;
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  Gmm g;
  double *params;
  if (mode == MODE_CHECK) {
    g.d = 3, g.k = 4, g.n = 10, g.m = 0, g.gamma = 1.0;
    params = xcalloc(param_count(&g), sizeof(double));
    for (int i = 0; i < param_count(&g); i++)
      params[i] = uniform(-1.0, 1.0);
    g.x = xcalloc(g.n * g.d, sizeof(double));
    for (int i = 0; i < g.n * g.d; i++)
      g.x[i] = uniform(-2.0, 2.0);
  } else {
    if (argc < 4)
      usage(argv[0]);
    params = read_gmm(argv[3], &g);
  }
  gmm_scratch(&g);
  int count = param_count(&g);
  double *dparams = xcalloc(count, sizeof(double));
  if (mode == MODE_CHECK) {
    gradient(&g, params, dparams, count);
    return finite_difference_check(eval_gmm, &g, params, dparams, count, 1000);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_gmm(&g, params);
    else
      gradient(&g, params, dparams, count);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_gmm(&g, params), printf("gradsum %.12e\n", vector_sum(dparams, count));
  printf("value %.12e\n", value);
  return 0;
}
