/* Split mode of a function with only a forward-mode registration and no body: nothing
 * can stand in for its reverse pass. */
// expect-error: split_of_forward_registered.c:18: @g is only declared here (defined elsewhere); its body must be in this module
void *__enzyme_augmentfwd(void *, ...);

double g(double x);
typedef struct {
  double primal, tangent;
} pair;
pair g_fwd(double x, double dx) { return (pair){x * x, 2 * x * dx}; }

void *__enzyme_register_derivative_g[2] = {(void *)g, (void *)g_fwd};

double (*volatile keep)(double) = g;

int main(void) {
  void *tape =
      __enzyme_augmentfwd((void *)g, 2.0);
  return tape != 0;
}
