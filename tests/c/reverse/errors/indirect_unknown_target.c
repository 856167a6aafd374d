/* An indirect call with active operands through a pointer that comes from another object
 * file: no function of this type has its address taken in the module, so no split
 * function can be chosen. */
// expect-error: indirect_unknown_target.c:12: an indirect call whose target cannot be known
extern int enzyme_out;
double __enzyme_autodiff(void *, ...);
typedef double (*Unary)(double);
Unary lookup_operator(const char *name);

double f(double x) {
  Unary g = lookup_operator("square");
  return g(x) * x;
}

int main(void) {
  return (int)__enzyme_autodiff((void *)f, enzyme_out, 1.0);
}
