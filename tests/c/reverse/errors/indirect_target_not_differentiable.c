/* An indirect call whose only possible target calls an external function without a
 * derivative: the split function of that target cannot be synthesized. */
// expect-error: indirect_target_not_differentiable.c:9: no derivative is known for the external function @mystery
extern int enzyme_out;
double __enzyme_autodiff(void *, ...);
double mystery(double);
typedef double (*Unary)(double);

__attribute__((noinline)) double opaque(double x) { return mystery(x) + x; }

Unary table[1] = {opaque};

double f(double x, int which) {
  Unary g = table[which];
  return g(x) * x;
}

int main(void) {
  return (int)__enzyme_autodiff((void *)f, enzyme_out, 1.0, 0);
}
