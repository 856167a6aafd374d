/* The registered reverse function must take the arguments, the differential of the float
 * result and the tape (here: none) and return the adjoint of x; this one forgets the
 * differential of the result. */
// expect-error: custom_reverse_wrong_signature.c:17: the reverse function @g_rev has the signature (f64) -> f64
double __enzyme_autodiff(void *, ...);

__attribute__((noinline)) double g(double x) { return x * x; }
double g_aug(double x) { return x * x; }
double g_rev(double x) { return 2 * x; }

void *__enzyme_register_gradient_g[3] = {(void *)g, (void *)g_aug, (void *)g_rev};

double f(double x) { return g(x) + x; }

int main(void) {
  double d =
      __enzyme_autodiff((void *)f, 2.0);
  return d > 0.0;
}
