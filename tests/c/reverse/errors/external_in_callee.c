/* An external function without a derivative rule called with an active value inside a
 * non-inlined callee: the error names the external and the call site in the callee. */
// expect-error: external_in_callee.c:8: no derivative is known for the external function @warp
extern int enzyme_out;
double __enzyme_autodiff(void *, ...);
double warp(double);

__attribute__((noinline)) double helper(double x) { return warp(x) + x; }

double f(double x) { return helper(x * x) * x; }

int main(void) {
  return (int)__enzyme_autodiff((void *)f, enzyme_out, 1.5);
}
