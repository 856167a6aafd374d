/* BA: ADBench bundle adjustment. Each observation projects a 3-D point through a camera
 * (Rodrigues rotation, center, focal length, principal point, two radial distortion
 * coefficients); the objective is the summed squared weighted reprojection error plus the
 * summed squared weight error (1 - w^2). Gradient with respect to every camera, point and
 * weight, held in one array params = [cams (11n) | points (3m) | weights (p)].
 * Input: an ADBench ba file (see bench.h for the command line). */
#include "bench.h"

enum { CAM = 11, ROT = 0, CENTER = 3, FOCAL = 6, PRINCIPAL = 7, RADIAL = 9 };

/* Scratch-free: every intermediate is a local scalar, so the whole loop body stays in
 * registers after mem2reg. */
double ba_objective(int n, int m, int p, const double *params, const int *obs,
                    const double *feats) {
  const double *cams = params, *points = params + CAM * n, *weights = params + CAM * n + 3 * m;
  double total = 0.0;
  for (int k = 0; k < p; k++) {
    const double *cam = cams + CAM * obs[2 * k], *X = points + 3 * obs[2 * k + 1];
    double w = weights[k];
    double x0 = X[0] - cam[CENTER], x1 = X[1] - cam[CENTER + 1], x2 = X[2] - cam[CENTER + 2];
    double r0 = cam[ROT], r1 = cam[ROT + 1], r2 = cam[ROT + 2];
    double sqtheta = r0 * r0 + r1 * r1 + r2 * r2, y0, y1, y2;
    if (sqtheta != 0.0) {
      double theta = sqrt(sqtheta), c = cos(theta), s = sin(theta), inv = 1.0 / theta;
      double w0 = r0 * inv, w1 = r1 * inv, w2 = r2 * inv;
      double cx0 = w1 * x2 - w2 * x1, cx1 = w2 * x0 - w0 * x2, cx2 = w0 * x1 - w1 * x0;
      double tmp = (w0 * x0 + w1 * x1 + w2 * x2) * (1.0 - c);
      y0 = x0 * c + cx0 * s + w0 * tmp;
      y1 = x1 * c + cx1 * s + w1 * tmp;
      y2 = x2 * c + cx2 * s + w2 * tmp;
    } else {
      y0 = x0 + (r1 * x2 - r2 * x1);
      y1 = x1 + (r2 * x0 - r0 * x2);
      y2 = x2 + (r0 * x1 - r1 * x0);
    }
    double u = y0 / y2, v = y1 / y2;
    double rsq = u * u + v * v;
    double distort = 1.0 + cam[RADIAL] * rsq + cam[RADIAL + 1] * rsq * rsq;
    double e0 = w * (u * distort * cam[FOCAL] + cam[PRINCIPAL] - feats[2 * k]);
    double e1 = w * (v * distort * cam[FOCAL] + cam[PRINCIPAL + 1] - feats[2 * k + 1]);
    double we = 1.0 - w * w;
    total += e0 * e0 + e1 * e1 + we * we;
  }
  return total;
}

typedef struct {
  int n, m, p;
  int *obs;
  double *feats;
} Ba;

static double eval_ba(void *ctx, double *params) {
  Ba *b = ctx;
  return ba_objective(b->n, b->m, b->p, params, b->obs, b->feats);
}

static void gradient(Ba *b, double *params, double *dparams, int count) {
  memset(dparams, 0, count * sizeof(double));
  __enzyme_autodiff((void *)ba_objective, enzyme_const, b->n, enzyme_const, b->m, enzyme_const,
                    b->p, enzyme_dup, params, dparams, enzyme_const, b->obs, enzyme_const,
                    b->feats);
}

/* Fills a problem from one camera, point, weight and feature the way ADBench replicates
 * them: observation k uses camera k % n and point k % m. */
static double *replicate(Ba *b, const double *cam, const double *point, double weight,
                         const double *feat, int jitter) {
  int count = CAM * b->n + 3 * b->m + b->p;
  double *params = xcalloc(count, sizeof(double));
  for (int i = 0; i < b->n; i++)
    for (int j = 0; j < CAM; j++)
      params[CAM * i + j] = cam[j] + (jitter ? uniform(-0.05, 0.05) : 0.0);
  for (int i = 0; i < b->m; i++)
    for (int j = 0; j < 3; j++)
      params[CAM * b->n + 3 * i + j] = point[j] + (jitter ? uniform(-0.05, 0.05) : 0.0);
  for (int k = 0; k < b->p; k++)
    params[CAM * b->n + 3 * b->m + k] = weight + (jitter ? uniform(-0.05, 0.05) : 0.0);
  b->obs = xcalloc(2 * (size_t)b->p, sizeof(int));
  b->feats = xcalloc(2 * (size_t)b->p, sizeof(double));
  for (int k = 0; k < b->p; k++) {
    b->obs[2 * k] = k % b->n;
    b->obs[2 * k + 1] = k % b->m;
    b->feats[2 * k] = feat[0];
    b->feats[2 * k + 1] = feat[1];
  }
  return params;
}

static double *read_ba(const char *path, Ba *b) {
  Tokens t = read_tokens(path);
  b->n = (int)next_token(&t, path);
  b->m = (int)next_token(&t, path);
  b->p = (int)next_token(&t, path);
  if (b->n <= 0 || b->m <= 0 || b->p <= 0) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  double cam[CAM], point[3], feat[2];
  for (int j = 0; j < CAM; j++)
    cam[j] = next_token(&t, path);
  for (int j = 0; j < 3; j++)
    point[j] = next_token(&t, path);
  double weight = next_token(&t, path);
  feat[0] = next_token(&t, path);
  feat[1] = next_token(&t, path);
  free(t.values);
  return replicate(b, cam, point, weight, feat, 0);
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  Ba b;
  double *params;
  if (mode == MODE_CHECK) {
    /* ADBench's camera and point, perturbed per copy so every entry matters. */
    double cam[CAM] = {-0.758453, -1.109613, -0.845551, 34.556073, 39.676747, 53.881673,
                       419.194514, 5.864426, -8.518870, 0.087812, 0.002739};
    double point[3] = {7.203245, 0.001144, 3.023326}, feat[2] = {271.760969, 834.209256};
    b.n = 3, b.m = 5, b.p = 12;
    params = replicate(&b, cam, point, 0.417022, feat, 1);
  } else {
    if (argc < 4)
      usage(argv[0]);
    params = read_ba(argv[3], &b);
  }
  int count = CAM * b.n + 3 * b.m + b.p;
  double *dparams = xcalloc(count, sizeof(double));
  if (mode == MODE_CHECK) {
    gradient(&b, params, dparams, count);
    return finite_difference_check(eval_ba, &b, params, dparams, count, 1000);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_ba(&b, params);
    else
      gradient(&b, params, dparams, count);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_ba(&b, params), printf("gradsum %.12e\n", vector_sum(dparams, count));
  printf("value %.12e\n", value);
  return 0;
}
