/* Split mode applied directly to functions with registered rules: __enzyme_augmentfwd runs
 * the registered augmented forward function (its tape lives inside the split-mode tape,
 * here adc-allocated and in caller memory sized by __enzyme_augmentsize), and
 * __enzyme_reverse runs the registered reverse function with that tape. A function
 * registered with __enzyme_function_like is split with its library rule.
 *
 * scaled_norm(v, w, c) writes w[i] = c v[i] / |v| (n = 3) and returns |v|; the registered
 * rule keeps |v| in a heap tape it frees in the reverse call. */
#include <stdlib.h>

#include "../reverse/enzyme.h"

typedef struct {
  void *tape;
  double primal;
} tape_and_primal;
tape_and_primal __enzyme_augmentfwd(void *, ...);
size_t __enzyme_augmentsize(void *, ...);
double __enzyme_reverse(void *, ...);
/* With the tape in caller memory the augmented forward call returns the primal alone: a
 * second prototype (API names are matched as substrings, as Enzyme does). */
extern int enzyme_allocated, enzyme_tape;
double __enzyme_augmentfwd_allocated(void *, ...);

#define N 3

static int augmented, reversed;

__attribute__((noinline)) double scaled_norm(const double *v, double *w, double c) {
  double s = 0;
  for (int i = 0; i < N; i++)
    s += v[i] * v[i];
  double norm = sqrt(s);
  for (int i = 0; i < N; i++)
    w[i] = c * v[i] / norm;
  return norm;
}

typedef struct {
  double *norm;
  double primal;
} aug_result;

aug_result scaled_norm_aug(const double *v, double *d_v, double *w, double *d_w, double c) {
  (void)d_v;
  (void)d_w;
  augmented++;
  double *kept = malloc(sizeof(double));
  *kept = scaled_norm(v, w, c);
  return (aug_result){kept, *kept};
}

/* dL/dv_j = d_ret v_j/|v| + sum_i d_w_i c (delta_ij/|v| - v_i v_j/|v|^3);
 * dL/dc = sum_i d_w_i v_i/|v|. */
double scaled_norm_rev(const double *v, double *d_v, double *w, double *d_w, double c,
                       double d_ret, double *norm_tape) {
  (void)w;
  reversed++;
  double norm = *norm_tape;
  free(norm_tape);
  double dot = 0, d_c = 0;
  for (int i = 0; i < N; i++) {
    dot += d_w[i] * v[i];
    d_c += d_w[i] * v[i] / norm;
  }
  for (int j = 0; j < N; j++)
    d_v[j] += d_ret * v[j] / norm + c * (d_w[j] / norm - dot * v[j] / (norm * norm * norm));
  for (int i = 0; i < N; i++)
    d_w[i] = 0;
  return d_c;
}

void *__enzyme_register_gradient_scaled_norm[3] = {
    (void *)scaled_norm, (void *)scaled_norm_aug, (void *)scaled_norm_rev};

/* log1p under another name: differentiated with log1p's rule. */
__attribute__((noinline)) double my_log1p(double x) { return log1p(x); }
void *__enzyme_function_like[2] = {(void *)my_log1p, "log1p"};

/* The loss L = d_ret * |v| + sum_i seed_i w_i, by finite differences in v_j and c. */
static double loss(const double *v, double c, const double *seed, double d_ret) {
  double w[N];
  double norm = scaled_norm(v, w, c);
  double l = d_ret * norm;
  for (int i = 0; i < N; i++)
    l += seed[i] * w[i];
  return l;
}

static void check_against_fd(const char *what, const double *v, const double *d_v, double c,
                             double d_c, const double *seed, double d_ret) {
  const double h = 1e-6;
  for (int j = 0; j < N; j++) {
    double vp[N], vm[N];
    for (int i = 0; i < N; i++)
      vp[i] = vm[i] = v[i];
    vp[j] += h;
    vm[j] -= h;
    double fd = (loss(vp, c, seed, d_ret) - loss(vm, c, seed, d_ret)) / (2 * h);
    check(what, d_v[j], fd, 1e-7);
  }
  double fd = (loss(v, c + h, seed, d_ret) - loss(v, c - h, seed, d_ret)) / (2 * h);
  check(what, d_c, fd, 1e-7);
}

int main(void) {
  double v[N] = {0.6, -1.2, 2.0}, c = 1.7;
  const double seed[N] = {0.5, -0.25, 1.5};

  /* adc-allocated tape. */
  double w[N], d_v[N] = {0, 0, 0}, d_w[N];
  for (int i = 0; i < N; i++)
    d_w[i] = seed[i];
  tape_and_primal fwd = __enzyme_augmentfwd((void *)scaled_norm, v, d_v, w, d_w, c);
  check("primal |v|", fwd.primal, sqrt(0.36 + 1.44 + 4.0), EXACT_TOL);
  check("primal w[0]", w[0], c * v[0] / fwd.primal, EXACT_TOL);
  check("the registered augmented forward ran", augmented, 1, 0);
  double d_c = __enzyme_reverse((void *)scaled_norm, v, d_v, w, d_w, c, 0.75, fwd.tape);
  check("the registered reverse ran", reversed, 1, 0);
  check_against_fd("adc-allocated tape: dL/dv, dL/dc", v, d_v, c, d_c, seed, 0.75);

  /* The tape in caller memory. */
  size_t size = __enzyme_augmentsize((void *)scaled_norm, enzyme_dup, enzyme_dup, enzyme_out);
  check("the tape has room for the registered tape", size >= sizeof(void *), 1, 0);
  void *mem = malloc(size);
  double d_v2[N] = {0, 0, 0};
  for (int i = 0; i < N; i++)
    d_w[i] = seed[i];
  double norm = __enzyme_augmentfwd_allocated((void *)scaled_norm, enzyme_allocated, size,
                                               enzyme_tape, mem, v, d_v2, w, d_w, c);
  check("caller-memory tape: primal |v|", norm, fwd.primal, EXACT_TOL);
  double d_c2 = __enzyme_reverse((void *)scaled_norm, enzyme_allocated, size, enzyme_tape, mem,
                                 v, d_v2, w, d_w, c, -1.25);
  free(mem);
  check_against_fd("caller-memory tape: dL/dv, dL/dc", v, d_v2, c, d_c2, seed, -1.25);
  check("augmented forward ran twice", augmented, 2, 0);
  check("reverse ran twice", reversed, 2, 0);

  /* function_like: the library rule of log1p. */
  tape_and_primal lf = __enzyme_augmentfwd((void *)my_log1p, 0.3);
  check("primal log1p", lf.primal, log1p(0.3), EXACT_TOL);
  double dl = __enzyme_reverse((void *)my_log1p, 0.3, 2.0, lf.tape);
  check("d log1p(x)/dx * 2", dl, 2.0 / 1.3, 1e-14);
  return check_done();
}
