/* A gradient registration must list {f, augmented forward, reverse}: two entries are an
 * error naming the global, reported at the API call. */
// expect-error: register_wrong_shape.c:15: @__enzyme_register_gradient_g has 2 entries where 3 functions are expected
double __enzyme_autodiff(void *, ...);

__attribute__((noinline)) double g(double x) { return x * x; }
double g_rev(double x, double d_ret) { return 2 * x * d_ret; }

void *__enzyme_register_gradient_g[2] = {(void *)g, (void *)g_rev};

double f(double x) { return g(x) + x; }

int main(void) {
  double d =
      __enzyme_autodiff((void *)f, 2.0);
  return d > 0.0;
}
