/* The function to differentiate is only declared in this translation unit: its body is
 * not available to synthesize a derivative from. */
// expect-error: declared_only.c:9: is only declared here (defined elsewhere)
double __enzyme_autodiff(void *, ...);
double elsewhere(double);

int main(void) {
  double d =
      __enzyme_autodiff((void *)elsewhere, 2.0);
  return d > 0.0;
}
