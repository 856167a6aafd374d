/* enzyme_out belongs to reverse mode: forward mode passes a tangent after the value. */
// expect-error: enzyme_out.c:10: malformed call to __enzyme_fwddiff: parameter 0 (f64) of @square: enzyme_out is a reverse-mode marker
extern int enzyme_out;
double __enzyme_fwddiff(void *, ...);

double square(double x) { return x * x; }

double tangent(double x) {
  return
      __enzyme_fwddiff((void *)square, enzyme_out, x);
}

int main(void) { return (int)tangent(3.0); }
