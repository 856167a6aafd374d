/* Forward over reverse on a small neural-network loss: L(w) = 1/2 sum_k (w2 . tanh(W1 x_k)
 * - y_k)^2 over a fixed data set, with the weights in one array. The gradient comes from
 * __enzyme_autodiff, the Hessian-vector product from __enzyme_fwddiff of the gradient.
 * Checked against the analytic Hessian of the loss (second derivatives of tanh written
 * out by hand). */
#include "fwd.h"

#define H 3 /* hidden units */
#define D 2 /* inputs */
#define K 4 /* samples */
#define P (H * D + H)

static const double xs[K][D] = {{0.5, -0.2}, {1.0, 0.3}, {-0.7, 0.8}, {0.1, 0.1}};
static const double ys[K] = {0.3, -0.1, 0.5, 0.0};

double loss(const double *w) {
  double l = 0.0;
  for (int k = 0; k < K; k++) {
    double out = 0.0;
    for (int h = 0; h < H; h++) {
      double z = 0.0;
      for (int d = 0; d < D; d++)
        z += w[h * D + d] * xs[k][d];
      out += w[H * D + h] * tanh(z);
    }
    double r = out - ys[k];
    l += 0.5 * r * r;
  }
  return l;
}

void grad(const double *w, double *g) {
  for (int i = 0; i < P; i++)
    g[i] = 0.0;
  __enzyme_autodiff((void *)loss, w, g);
}

/* The analytic Hessian: with t_h = tanh(z_h), r = out - y, for each sample
 * d out / d w1[h][d] = w2[h] (1 - t_h^2) x_d, d out / d w2[h] = t_h, and
 * H = sum_k (J^T J + r * d2 out), with d2 out:
 *   w1[h][d], w1[h][e]: w2[h] * (-2 t_h (1 - t_h^2)) x_d x_e
 *   w1[h][d], w2[h]:   (1 - t_h^2) x_d                                          */
static void hessian(const double *w, double hess[P][P]) {
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++)
      hess[i][j] = 0.0;
  for (int k = 0; k < K; k++) {
    double t[H], out = 0.0, jac[P];
    for (int h = 0; h < H; h++) {
      double z = 0.0;
      for (int d = 0; d < D; d++)
        z += w[h * D + d] * xs[k][d];
      t[h] = tanh(z);
      out += w[H * D + h] * t[h];
    }
    double r = out - ys[k];
    for (int h = 0; h < H; h++) {
      for (int d = 0; d < D; d++)
        jac[h * D + d] = w[H * D + h] * (1.0 - t[h] * t[h]) * xs[k][d];
      jac[H * D + h] = t[h];
    }
    for (int i = 0; i < P; i++)
      for (int j = 0; j < P; j++)
        hess[i][j] += jac[i] * jac[j];
    for (int h = 0; h < H; h++) {
      double s = 1.0 - t[h] * t[h];
      for (int d = 0; d < D; d++) {
        for (int e = 0; e < D; e++)
          hess[h * D + d][h * D + e] += r * w[H * D + h] * (-2.0 * t[h] * s) * xs[k][d] * xs[k][e];
        hess[h * D + d][H * D + h] += r * s * xs[k][d];
        hess[H * D + h][h * D + d] += r * s * xs[k][d];
      }
    }
  }
}

int main(void) {
  double w[P] = {0.4, -0.3, 0.2, 0.6, -0.5, 0.1, 0.7, -0.4, 0.9};
  double hess[P][P];
  hessian(w, hess);
  for (int j = 0; j < P; j++) {
    double v[P], g[P], hv[P];
    for (int i = 0; i < P; i++)
      v[i] = i == j;
    __enzyme_fwddiff((void *)grad, w, v, g, hv);
    for (int i = 0; i < P; i++)
      check("H[:, j] vs analytic", hv[i], hess[i][j], 1e-10);
  }
  return check_done();
}
