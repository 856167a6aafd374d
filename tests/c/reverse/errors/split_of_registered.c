/* Split mode of a function that has a registered gradient is refused (its registered
 * augmented forward and reverse functions already are its split form). */
// expect-error: split_of_registered.c:13: @g has a registered custom derivative; split mode of it is not supported
void *__enzyme_augmentfwd(void *, ...);

__attribute__((noinline)) double g(double x) { return x * x; }
double g_rev(double x, double d_ret) { return 2 * x * d_ret; }

void *__enzyme_register_gradient_g[3] = {(void *)g, (void *)g, (void *)g_rev};

int main(void) {
  void *tape =
      __enzyme_augmentfwd((void *)g, 2.0);
  return tape != 0;
}
