/* GMM: the ADBench Gaussian-mixture objective (log-sum-exp over K components with
 * d-dimensional means, the triangular inverse-covariance parameterization `icf` and a
 * Wishart prior); gradient with respect to alphas, means and icf, which the program keeps
 * in one array params = [alphas (K) | means (K*d) | icf (K*d*(d+1)/2)].
 *
 * The objective has the structure of ADBench's C version (the source Enzyme's GMM numbers
 * are measured on): its array arguments are `restrict`, the result is written through
 * `err`, and the scratch arrays (Qdiags, sum_qs, xcentered, Qxcentered, main_term) are
 * malloc'd and freed inside the differentiated function. Only the Wishart normalizing
 * constant (which needs lgamma and does not depend on the parameters) is computed once by
 * the caller. Input: an ADBench gmm file (see bench.h for the command line). */
#include "bench.h"

static double arr_max(int n, const double *restrict x) {
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (m < x[i])
      m = x[i];
  return m;
}

static double sqnorm(int n, const double *restrict x) {
  double res = x[0] * x[0];
  for (int i = 1; i < n; i++)
    res = res + x[i] * x[i];
  return res;
}

static void subtract(int d, const double *restrict x, const double *restrict y,
                     double *restrict out) {
  for (int id = 0; id < d; id++)
    out[id] = x[id] - y[id];
}

static double log_sum_exp(int n, const double *restrict x) {
  double mx = arr_max(n, x);
  double semx = 0.0;
  for (int i = 0; i < n; i++)
    semx = semx + exp(x[i] - mx);
  return log(semx) + mx;
}

/* sum_qs[k] = sum of the diagonal icf entries, Qdiags = exp of them. */
static void preprocess_qs(int d, int k, const double *restrict icf, double *restrict sum_qs,
                          double *restrict Qdiags) {
  int icf_sz = d * (d + 1) / 2;
  for (int ik = 0; ik < k; ik++) {
    sum_qs[ik] = 0.;
    for (int id = 0; id < d; id++) {
      double q = icf[ik * icf_sz + id];
      sum_qs[ik] = sum_qs[ik] + q;
      Qdiags[ik * d + id] = exp(q);
    }
  }
}

/* out = L * x, L lower triangular: diagonal Qdiag, strictly-lower entries ltri column by
 * column. */
static void Qtimesx(int d, const double *restrict Qdiag, const double *restrict ltri,
                    const double *restrict x, double *restrict out) {
  for (int id = 0; id < d; id++)
    out[id] = Qdiag[id] * x[id];
  int Lparamsidx = 0;
  for (int i = 0; i < d; i++) {
    for (int j = i + 1; j < d; j++) {
      out[j] = out[j] + ltri[Lparamsidx] * x[i];
      Lparamsidx++;
    }
  }
}

/* The Wishart prior without its constant term (wishart_const, added by the caller's
 * objective below). */
static double log_wishart_prior(int p, int k, double gamma, int m, const double *restrict sum_qs,
                                const double *restrict Qdiags, const double *restrict icf) {
  int icf_sz = p * (p + 1) / 2;
  double out = 0;
  for (int ik = 0; ik < k; ik++) {
    double frobenius = sqnorm(p, &Qdiags[ik * p]) + sqnorm(icf_sz - p, &icf[ik * icf_sz + p]);
    out = out + 0.5 * gamma * gamma * frobenius - m * sum_qs[ik];
  }
  return out;
}

/* wishart_const = K * C of ADBench's prior: it depends on d, m, gamma only (and needs
 * lgamma), so the caller computes it once. */
void gmm_objective(int d, int k, int n, const double *restrict alphas,
                   const double *restrict means, const double *restrict icf,
                   const double *restrict x, double gamma, int m, double wishart_const,
                   double *restrict err) {
  const double CONSTANT = -n * d * 0.5 * log(2 * M_PI);
  int icf_sz = d * (d + 1) / 2;
  double *Qdiags = malloc(d * k * sizeof(double));
  double *sum_qs = malloc(k * sizeof(double));
  double *xcentered = malloc(d * sizeof(double));
  double *Qxcentered = malloc(d * sizeof(double));
  double *main_term = malloc(k * sizeof(double));
  preprocess_qs(d, k, icf, sum_qs, Qdiags);
  double slse = 0.;
  for (int ix = 0; ix < n; ix++) {
    for (int ik = 0; ik < k; ik++) {
      subtract(d, &x[ix * d], &means[ik * d], xcentered);
      Qtimesx(d, &Qdiags[ik * d], &icf[ik * icf_sz + d], xcentered, Qxcentered);
      main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sqnorm(d, Qxcentered);
    }
    slse = slse + log_sum_exp(k, main_term);
  }
  double lse_alphas = log_sum_exp(k, alphas);
  *err = CONSTANT + slse - n * lse_alphas +
         log_wishart_prior(d, k, gamma, m, sum_qs, Qdiags, icf) - wishart_const;
  free(Qdiags);
  free(sum_qs);
  free(xcentered);
  free(Qxcentered);
  free(main_term);
}

typedef struct {
  int d, k, n, m;
  double gamma, wishart_const;
  double *x;
} Gmm;

static double wishart_constant(int d, int k, int m, double gamma) {
  int n_ = d + m + 1;
  double lgd = 0.25 * d * (d - 1) * log(M_PI);
  for (int j = 1; j <= d; j++)
    lgd += lgamma(0.5 * n_ + 0.5 * (1 - j));
  return k * (n_ * d * (log(gamma) - 0.5 * log(2.0)) - lgd);
}


static int param_count(const Gmm *g) { return g->k + g->k * g->d + g->k * g->d * (g->d + 1) / 2; }

static double eval_gmm(void *ctx, double *params) {
  Gmm *g = ctx;
  const double *means = params + g->k, *icf = means + g->k * g->d;
  double err = 0.0;
  gmm_objective(g->d, g->k, g->n, params, means, icf, g->x, g->gamma, g->m, g->wishart_const,
                &err);
  return err;
}

static void gradient(Gmm *g, double *params, double *dparams, int count) {
  const double *means = params + g->k, *icf = means + g->k * g->d;
  double *dmeans = dparams + g->k, *dicf = dmeans + g->k * g->d;
  double err = 0.0, derr = 1.0;
  memset(dparams, 0, count * sizeof(double));
  __enzyme_autodiff((void *)gmm_objective, enzyme_const, g->d, enzyme_const, g->k, enzyme_const,
                    g->n, enzyme_dup, params, dparams, enzyme_dup, means, dmeans, enzyme_dup, icf,
                    dicf, enzyme_const, g->x, enzyme_const, g->gamma, enzyme_const, g->m,
                    enzyme_const, g->wishart_const, enzyme_dupnoneed, &err, &derr);
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
  g.wishart_const = wishart_constant(g.d, g.k, g.m, g.gamma);
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
