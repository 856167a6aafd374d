/* LSTM: ADBench's multi-layer LSTM loss over a character sequence (l layers, alphabet of b
 * characters, c characters). Gradient with respect to the main parameters (2l rows of 4b:
 * per layer a weight row and a bias row) and the extra parameters (3 rows of b: input
 * weights, output weights, output bias), held in one array params = [main | extra].
 * Input: an ADBench lstm file (see bench.h for the command line). */
#include "bench.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* The state is copied into `state` (scratch) first so that every evaluation starts from
 * state_in; `input` (b) and `ypred` (b) are scratch too. ADBench's cell: the forget and
 * output gates read the input, the input gate and the candidate read the hidden state. */
double lstm_objective(int l, int c, int b, const double *params, const double *state_in,
                      const double *sequence, double *state, double *input, double *ypred) {
  const double *main_params = params, *extra = params + 2 * l * 4 * b;
  for (int i = 0; i < 2 * l * b; i++)
    state[i] = state_in[i];
  double total = 0.0;
  for (int t = 0; t < c - 1; t++) {
    const double *x = sequence + t * b;
    for (int j = 0; j < b; j++)
      input[j] = x[j] * extra[j];
    for (int layer = 0; layer < l; layer++) {
      const double *weight = main_params + 2 * layer * 4 * b, *bias = weight + 4 * b;
      double *hidden = state + 2 * layer * b, *cell = hidden + b;
      for (int j = 0; j < b; j++) {
        double forget = sigmoid(input[j] * weight[j] + bias[j]);
        double ingate = sigmoid(hidden[j] * weight[b + j] + bias[b + j]);
        double outgate = sigmoid(input[j] * weight[2 * b + j] + bias[2 * b + j]);
        double change = tanh(hidden[j] * weight[3 * b + j] + bias[3 * b + j]);
        cell[j] = cell[j] * forget + ingate * change;
        hidden[j] = outgate * tanh(cell[j]);
      }
      for (int j = 0; j < b; j++)
        input[j] = hidden[j];
    }
    double mx = -INFINITY;
    for (int j = 0; j < b; j++) {
      ypred[j] = input[j] * extra[b + j] + extra[2 * b + j];
      if (ypred[j] > mx)
        mx = ypred[j];
    }
    double s = 0.0;
    for (int j = 0; j < b; j++)
      s += exp(ypred[j] - mx);
    double lse = log(s) + mx;
    const double *gold = sequence + (t + 1) * b;
    for (int j = 0; j < b; j++)
      total += gold[j] * (ypred[j] - lse);
  }
  return -total / ((c - 1) * b);
}

typedef struct {
  int l, c, b;
  double *state_in, *sequence, *state, *input, *ypred;
} Lstm;

static int param_count(const Lstm *s) { return 2 * s->l * 4 * s->b + 3 * s->b; }

static double eval_lstm(void *ctx, double *params) {
  Lstm *s = ctx;
  return lstm_objective(s->l, s->c, s->b, params, s->state_in, s->sequence, s->state, s->input,
                        s->ypred);
}

static void gradient(Lstm *s, double *params, double *dparams, int count) {
  double *dstate = xcalloc(2 * s->l * s->b, sizeof(double));
  double *dinput = xcalloc(s->b, sizeof(double)), *dypred = xcalloc(s->b, sizeof(double));
  memset(dparams, 0, count * sizeof(double));
  __enzyme_autodiff((void *)lstm_objective, enzyme_const, s->l, enzyme_const, s->c, enzyme_const,
                    s->b, enzyme_dup, params, dparams, enzyme_const, s->state_in, enzyme_const,
                    s->sequence, enzyme_dup, s->state, dstate, enzyme_dup, s->input, dinput,
                    enzyme_dup, s->ypred, dypred);
  free(dstate), free(dinput), free(dypred);
}

static void lstm_scratch(Lstm *s) {
  s->state = xcalloc(2 * s->l * s->b, sizeof(double));
  s->input = xcalloc(s->b, sizeof(double));
  s->ypred = xcalloc(s->b, sizeof(double));
}

static double *read_lstm(const char *path, Lstm *s) {
  Tokens t = read_tokens(path);
  s->l = (int)next_token(&t, path);
  s->c = (int)next_token(&t, path);
  s->b = (int)next_token(&t, path);
  if (s->l <= 0 || s->c <= 1 || s->b <= 0) {
    fprintf(stderr, "%s: bad header\n", path);
    exit(2);
  }
  double *params = xcalloc(param_count(s), sizeof(double));
  for (int i = 0; i < param_count(s); i++)
    params[i] = next_token(&t, path);
  s->state_in = xcalloc(2 * s->l * s->b, sizeof(double));
  for (int i = 0; i < 2 * s->l * s->b; i++)
    s->state_in[i] = next_token(&t, path);
  s->sequence = xcalloc((size_t)s->c * s->b, sizeof(double));
  for (int i = 0; i < s->c * s->b; i++)
    s->sequence[i] = next_token(&t, path);
  free(t.values);
  return params;
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  Lstm s;
  double *params;
  if (mode == MODE_CHECK) {
    s.l = 2, s.c = 6, s.b = 5;
    params = xcalloc(param_count(&s), sizeof(double));
    for (int i = 0; i < param_count(&s); i++)
      params[i] = uniform(-1.0, 1.0);
    s.state_in = xcalloc(2 * s.l * s.b, sizeof(double));
    for (int i = 0; i < 2 * s.l * s.b; i++)
      s.state_in[i] = uniform(-1.0, 1.0);
    s.sequence = xcalloc(s.c * s.b, sizeof(double));
    for (int i = 0; i < s.c * s.b; i++)
      s.sequence[i] = uniform(0.0, 1.0);
  } else {
    if (argc < 4)
      usage(argv[0]);
    params = read_lstm(argv[3], &s);
  }
  lstm_scratch(&s);
  int count = param_count(&s);
  double *dparams = xcalloc(count, sizeof(double));
  if (mode == MODE_CHECK) {
    gradient(&s, params, dparams, count);
    return finite_difference_check(eval_lstm, &s, params, dparams, count, 1000);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_lstm(&s, params);
    else
      gradient(&s, params, dparams, count);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_lstm(&s, params), printf("gradsum %.12e\n", vector_sum(dparams, count));
  printf("value %.12e\n", value);
  return 0;
}
