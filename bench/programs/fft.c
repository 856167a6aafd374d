/* FFT: a recursive radix-2 decimation-in-time FFT of n = 2^k complex points; the loss is a
 * frequency-weighted energy of the spectrum, sum_k |X_k|^2 / (1 + k), and the gradient is
 * taken with respect to the input (real and imaginary parts, one array of 2n: re | im).
 * Size argument: n (a power of two). */
#include "bench.h"

/* out = DFT of in[0], in[stride], in[2 stride], ... (n of them). */
static void fft_rec(const double *in_re, const double *in_im, int stride, int n, double *out_re,
                    double *out_im) {
  if (n == 1) {
    out_re[0] = in_re[0];
    out_im[0] = in_im[0];
    return;
  }
  int half = n / 2;
  fft_rec(in_re, in_im, 2 * stride, half, out_re, out_im);
  fft_rec(in_re + stride, in_im + stride, 2 * stride, half, out_re + half, out_im + half);
  for (int k = 0; k < half; k++) {
    double angle = -2.0 * M_PI * k / n, c = cos(angle), s = sin(angle);
    double odd_re = out_re[k + half], odd_im = out_im[k + half];
    double t_re = c * odd_re - s * odd_im, t_im = c * odd_im + s * odd_re;
    out_re[k + half] = out_re[k] - t_re;
    out_im[k + half] = out_im[k] - t_im;
    out_re[k] += t_re;
    out_im[k] += t_im;
  }
}

/* `spectrum` (2n) is scratch owned by the caller. */
double fft_loss(const double *signal, int n, double *spectrum) {
  fft_rec(signal, signal + n, 1, n, spectrum, spectrum + n);
  double loss = 0.0;
  for (int k = 0; k < n; k++)
    loss += (spectrum[k] * spectrum[k] + spectrum[n + k] * spectrum[n + k]) / (1.0 + k);
  return loss;
}

typedef struct {
  int n;
  double *spectrum;
} Fft;

static double eval_fft(void *ctx, double *signal) {
  Fft *f = ctx;
  return fft_loss(signal, f->n, f->spectrum);
}

static void gradient(Fft *f, double *signal, double *dsignal) {
  double *dspectrum = xcalloc(2 * (size_t)f->n, sizeof(double));
  memset(dsignal, 0, 2 * (size_t)f->n * sizeof(double));
  __enzyme_autodiff((void *)fft_loss, enzyme_dup, signal, dsignal, enzyme_const, f->n,
                    enzyme_dup, f->spectrum, dspectrum);
  free(dspectrum);
}

int main(int argc, char **argv) {
  int reps;
  Mode mode = parse_mode(argc, argv, &reps);
  Fft f = {mode == MODE_CHECK ? 16 : (argc > 3 ? atoi(argv[3]) : 4096), 0};
  if (f.n <= 0 || (f.n & (f.n - 1)) != 0) {
    fprintf(stderr, "the size must be a power of two\n");
    return 2;
  }
  double *signal = xcalloc(2 * (size_t)f.n, sizeof(double));
  double *dsignal = xcalloc(2 * (size_t)f.n, sizeof(double));
  f.spectrum = xcalloc(2 * (size_t)f.n, sizeof(double));
  for (int i = 0; i < 2 * f.n; i++)
    signal[i] = uniform(-1.0, 1.0);
  if (mode == MODE_CHECK) {
    gradient(&f, signal, dsignal);
    return finite_difference_check(eval_fft, &f, signal, dsignal, 2 * f.n, 1000);
  }
  double value = 0.0;
  for (int r = 0; r < reps; r++) {
    double t0 = start_rep();
    if (mode == MODE_PRIMAL)
      value = eval_fft(&f, signal);
    else
      gradient(&f, signal, dsignal);
    report_time(cpu_seconds() - t0);
  }
  if (mode == MODE_GRAD)
    value = eval_fft(&f, signal), printf("gradsum %.12e\n", vector_sum(dsignal, 2 * f.n));
  printf("value %.12e\n", value);
  return 0;
}
