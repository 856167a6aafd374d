/* A pointer that is either into an `enzyme_const` argument's memory or into a `enzyme_dup`
 * one's: which one only the run knows, so the derivative cannot tell where the adjoint
 * goes (Enzyme writes it into the constant argument's primal memory). */
// expect-error: mixed_activity_select.c:9: into inactive memory (such as an `enzyme_const` argument's)
extern int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);

void f(double *a, double *b, double *out, double c) {
  double *p = c > 0.1 ? a : b + 3;
  *out = *p * 2.0;
}

void df(double *a, double *b, double *db, double *out, double *dout, double c) {
  __enzyme_autodiff((void *)f, enzyme_const, a, enzyme_dup, b, db, enzyme_dup, out, dout, enzyme_const, c);
}
