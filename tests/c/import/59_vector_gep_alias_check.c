// clang -O2 vectorizes a loop that writes through one struct's pointer field and reads
// another's; its runtime alias checks compare vectors of field addresses built by vector
// GEPs (`getelementptr i8, <2 x ptr> %p, <2 x i64> <i64 24, i64 16>`). Found by the
// gradient fuzzer (seed 90212); the output must match clang's own build at every level.
#include <stdio.h>
typedef struct { int n; double *coef; double s; } M;
__attribute__((noinline)) void copy_tail(M *m1, M *m2, int n) {
  for (int i = 0; i < n; i++) {
    m1->coef[i] = m2->coef[3] + m2->s;
    m1->s = m2->coef[i];
  }
}
int main(void) {
  double a[9], b[9];
  M m1 = {9, a, 0.0}, m2 = {9, b, 0.25};
  for (int i = 0; i < 9; i++) { a[i] = i; b[i] = 0.5 * i - 1.0; }
  copy_tail(&m1, &m2, 9);
  double sum = m1.s;
  for (int i = 0; i < 9; i++) sum += a[i] * (i + 1);
  // The same struct both ways: the alias check must send this through the scalar loop.
  M self = {9, b, 1.5};
  copy_tail(&self, &self, 9);
  for (int i = 0; i < 9; i++) sum += b[i] * (i + 2);
  printf("%.6f %.6f\n", sum, self.s);
  return 0;
}
