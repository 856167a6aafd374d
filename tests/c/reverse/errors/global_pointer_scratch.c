/* Scratch memory reached through a pointer kept in a global: main points it at a buffer
 * before the derivative runs, so nothing tells adc where that buffer's shadow is. The
 * error says how to pass the memory instead. */
// expect-error: global_pointer_scratch.c:10: pass the memory it points to as an argument (`enzyme_dup`)
double __enzyme_autodiff(void *, ...);

static double *scratch;

double f(double x) {
  scratch[0] = x * x;
  return scratch[0] * 3.0;
}

double df(double x) { return __enzyme_autodiff((void *)f, x); }

int main(void) {
  double buffer[1];
  scratch = buffer;
  return df(1.5) > 0 ? 0 : 1;
}
