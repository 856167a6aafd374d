/* One LSTM cell (ADBench-style): gates from weights, input and hidden state; the loss is
 * the sum of the new hidden state. Gradients for the weights are checked against central
 * finite differences. */
#include "enzyme.h"

#define H 3

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* w holds 4 gates x H x (input weight, hidden weight, bias). */
double lstm(const double *w, const double *x, const double *h, const double *c) {
  double loss = 0.0;
  for (int k = 0; k < H; k++) {
    double g[4];
    for (int q = 0; q < 4; q++) {
      const double *p = w + 3 * (q * H + k);
      g[q] = p[0] * x[k] + p[1] * h[k] + p[2];
    }
    double in = sigmoid(g[0]), forget = sigmoid(g[1]), out = sigmoid(g[2]);
    double change = tanh(g[3]);
    double cell = c[k] * forget + in * change;
    loss += out * tanh(cell);
  }
  return loss;
}

int main(void) {
  double w[4 * H * 3], dw[4 * H * 3] = {0};
  double x[H] = {0.5, -0.3, 0.8}, h[H] = {0.1, 0.2, -0.4}, c[H] = {0.3, -0.1, 0.6};
  for (int i = 0; i < 4 * H * 3; i++)
    w[i] = 0.3 * sin(0.7 * i + 0.1);
  __enzyme_autodiff((void *)lstm, enzyme_dup, w, dw, enzyme_const, x, enzyme_const, h,
                    enzyme_const, c);
  for (int i = 0; i < 4 * H * 3; i++) {
    double save = w[i];
    w[i] = save + FD_STEP;
    double fp = lstm(w, x, h, c);
    w[i] = save - FD_STEP;
    double fm = lstm(w, x, h, c);
    w[i] = save;
    check("dloss/dw_i", dw[i], (fp - fm) / (2.0 * FD_STEP), FD_TOL);
  }
  return check_done();
}
