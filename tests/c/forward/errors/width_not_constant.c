/* enzyme_width must be a compile-time constant: the derivative's signature depends on it. */
// expect-error: width_not_constant.c:13: malformed call to __enzyme_fwddiff: enzyme_width must be followed by a compile-time constant
extern int enzyme_width;
typedef struct {
  double d[2];
} pair;
pair __enzyme_fwddiff(void *, ...);

double square(double x) { return x * x; }

pair tangents(double x, int width) {
  return
      __enzyme_fwddiff((void *)square, enzyme_width, width, x, 1.0, 2.0);
}

int main(int argc, char **argv) { return (int)tangents(3.0, argc + 1).d[0]; }
