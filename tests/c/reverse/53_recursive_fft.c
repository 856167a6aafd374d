/* A recursive radix-2 decimation-in-time FFT (out of place, interleaved complex data,
 * scratch passed down the recursion); the loss is a weighted sum of the spectrum's
 * squared magnitudes. Gradient with respect to the input signal against central finite
 * differences. */
#include "enzyme.h"

enum { N = 8 };

__attribute__((noinline)) static void fft(const double *in, double *out, double *scratch,
                                          int n, int stride) {
  if (n == 1) {
    out[0] = in[0];
    out[1] = in[1];
    return;
  }
  int h = n / 2;
  double *even = scratch, *odd = scratch + 2 * h, *deeper = scratch + 4 * h;
  fft(in, even, deeper, h, 2 * stride);
  fft(in + 2 * stride, odd, deeper, h, 2 * stride);
  for (int k = 0; k < h; k++) {
    double angle = -2.0 * M_PI * k / n;
    double c = cos(angle), s = sin(angle);
    double ore = odd[2 * k] * c - odd[2 * k + 1] * s;
    double oim = odd[2 * k] * s + odd[2 * k + 1] * c;
    out[2 * k] = even[2 * k] + ore;
    out[2 * k + 1] = even[2 * k + 1] + oim;
    out[2 * (k + h)] = even[2 * k] - ore;
    out[2 * (k + h) + 1] = even[2 * k + 1] - oim;
  }
}

double loss(const double *signal, double *spectrum, double *scratch) {
  fft(signal, spectrum, scratch, N, 1);
  double l = 0.0;
  for (int k = 0; k < N; k++)
    l += (1.0 + 0.1 * k) * (spectrum[2 * k] * spectrum[2 * k] +
                            spectrum[2 * k + 1] * spectrum[2 * k + 1]);
  return l;
}

static double primal(const double *signal) {
  double spectrum[2 * N], scratch[8 * N];
  return loss(signal, spectrum, scratch);
}

int main(void) {
  double signal[2 * N], dsignal[2 * N] = {0};
  double spectrum[2 * N], dspectrum[2 * N] = {0}, scratch[8 * N], dscratch[8 * N] = {0};
  for (int i = 0; i < 2 * N; i++)
    signal[i] = sin(0.7 * i) + 0.1 * i;
  __enzyme_autodiff((void *)loss, enzyme_dup, signal, dsignal, enzyme_dup, spectrum,
                    dspectrum, enzyme_dup, scratch, dscratch);
  for (int i = 0; i < 2 * N; i++) {
    double saved = signal[i];
    signal[i] = saved + FD_STEP;
    double up = primal(signal);
    signal[i] = saved - FD_STEP;
    double down = primal(signal);
    signal[i] = saved;
    char what[32];
    snprintf(what, sizeof what, "dloss/dsignal[%d]", i);
    check(what, dsignal[i], (up - down) / (2 * FD_STEP), FD_TOL);
  }
  return check_done();
}
