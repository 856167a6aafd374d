// clang -O2 vectorizes "any lane" and masked-count loops over floats into <4 x i1>
// compares that it reduces with `bitcast <4 x i1> to i4` (an odd width); the output must
// match clang's own build at every level.
#include <stdio.h>
static int any_above(const float *a, int n, float t) {
  int found = 0;
  for (int i = 0; i < n; i++)
    if (a[i] > t) found = 1;
  return found;
}
static int count_both(const float *a, const float *b, int n) {
  int c = 0;
  for (int i = 0; i < n; i++) c += (a[i] > 0.0f) & (b[i] < 1.0f);
  return c;
}
int main(void) {
  float a[37], b[37];
  for (int i = 0; i < 37; i++) { a[i] = (float)((i * 7) % 11) - 5.0f; b[i] = (float)(i % 5) * 0.4f; }
  int r = 0;
  for (int n = 0; n <= 37; n++) r = r * 3 + any_above(a, n, 4.5f) + count_both(a, b, n);
  printf("%d %d %d\n", any_above(a, 37, 5.5f), any_above(a, 37, 4.5f), r);
  return 0;
}
