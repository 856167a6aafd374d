/* Test model: a one-layer tanh regression, several array arguments (one of them 2-D), an
 * active scalar and a scalar return. */
#include <math.h>

double model_loss(const double *x, const double *w, const double *y, double b, int m, int n) {
  double loss = 0.0;
  for (int i = 0; i < m; i++) {
    double z = b;
    for (int j = 0; j < n; j++) z += w[i * n + j] * x[j];
    double r = tanh(z) - y[i];
    loss += r * r;
  }
  return 0.5 * loss + 0.01 * exp(b);
}
