/* enzyme_allocated gives fewer bytes than the tape needs: a compile-time error naming the
 * sizes, never a write past the caller's memory. */
// expect-error: split_tape_too_small.c:16: enzyme_allocated gives 8 bytes, but the tape of @f needs
extern int enzyme_allocated, enzyme_tape;
void __enzyme_augmentfwd(void *, ...);

double f(double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
  return s;
}

int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0}, mem[1];
  __enzyme_augmentfwd((void *)f, enzyme_allocated, 8, enzyme_tape, mem, x, dx, 3);
  return 0;
}
