/* Bruss: the 2-D Brusselator reaction-diffusion system on an N x N periodic grid,
 * discretized with the 5-point Laplacian and advanced STEPS explicit Euler steps; the loss
 * is sum(u^2 + v) of the final state, the gradient is with respect to the initial u and v
 * (one array of 2 N^2: u | v). Size argument: N. */
#include "bench.h"

enum { STEPS = 10 };
#define ALPHA 0.02
#define DT 0.01
#define BRUSS_A 1.0
#define BRUSS_B 3.4

/* state (2 N^2) and next (2 N^2) are scratch owned by the caller. */
double bruss_loss(const double *initial, int n, double *state, double *next) {
  int cells = n * n;
  for (int i = 0; i < 2 * cells; i++)
    state[i] = initial[i];
  for (int step = 0; step < STEPS; step++) {
    const double *u = state, *v = state + cells;
    double *un = next, *vn = next + cells;
    for (int i = 0; i < n; i++) {
      int up = i == 0 ? n - 1 : i - 1, down = i == n - 1 ? 0 : i + 1;
      for (int j = 0; j < n; j++) {
        int left = j == 0 ? n - 1 : j - 1, right = j == n - 1 ? 0 : j + 1;
        int c = i * n + j;
        double uc = u[c], vc = v[c];
        double lap_u = u[up * n + j] + u[down * n + j] + u[i * n + left] + u[i * n + right] - 4.0 * uc;
        double lap_v = v[up * n + j] + v[down * n + j] + v[i * n + left] + v[i * n + right] - 4.0 * vc;
        double reaction = uc * uc * vc;
        un[c] = uc + DT * (BRUSS_A + reaction - (BRUSS_B + 1.0) * uc + ALPHA * lap_u);
        vn[c] = vc + DT * (BRUSS_B * uc - reaction + ALPHA * lap_v);
      }
    }
    for (int i = 0; i < 2 * cells; i++)
      state[i] = next[i];
  }
  double loss = 0.0;
  for (int c = 0; c < cells; c++)
    loss += state[c] * state[c] + state[cells + c];
  return loss;
}

typedef struct {
  int n;
  double *state, *next;
} Bruss;

static double eval_bruss(void *ctx, double *initial) {
  Bruss *b = ctx;
  return bruss_loss(initial, b->n, b->state, b->next);
}

static void gradient(Bruss *b, double *initial, double *dinitial) {
  size_t size = 2 * (size_t)b->n * b->n;
  double *dstate = xcalloc(size, sizeof(double)), *dnext = xcalloc(size, sizeof(double));
  memset(dinitial, 0, size * sizeof(double));
  __enzyme_autodiff((void *)bruss_loss, enzyme_dup, initial, dinitial, enzyme_const, b->n,
                    enzyme_dup, b->state, dstate, enzyme_dup, b->next, dnext);
  free(dstate), free(dnext);
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  Bruss b = {mode == MODE_CHECK ? 6 : (argc > 3 ? atoi(argv[3]) : 64), 0, 0};
  if (b.n < 3) {
    fprintf(stderr, "the grid must be at least 3 x 3\n");
    return 2;
  }
  size_t size = 2 * (size_t)b.n * b.n;
  double *initial = xcalloc(size, sizeof(double)), *dinitial = xcalloc(size, sizeof(double));
  b.state = xcalloc(size, sizeof(double));
  b.next = xcalloc(size, sizeof(double));
  /* u near A, v near B / A (the steady state), perturbed. */
  for (size_t c = 0; c < size / 2; c++) {
    initial[c] = BRUSS_A + uniform(-0.3, 0.3);
    initial[size / 2 + c] = BRUSS_B / BRUSS_A + uniform(-0.3, 0.3);
  }
  if (mode == MODE_CHECK) {
    gradient(&b, initial, dinitial);
    return finite_difference_check(eval_bruss, &b, initial, dinitial, (int)size, 1000);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_bruss(&b, initial);
    else
      gradient(&b, initial, dinitial);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_bruss(&b, initial), printf("gradsum %.12e\n", vector_sum(dinitial, (int)size));
  printf("value %.12e\n", value);
  return 0;
}
