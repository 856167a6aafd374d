// Loops over arrays of structs of 7 doubles and 3 floats: at -O2 the loop vectorizer loads
// interleaved groups as <14 x double> and <12 x float> and splits them with shuffles.
#include <stdio.h>
struct P7 { double v[7]; };
struct P3 { float x, y, z; };
__attribute__((noinline)) double seven(struct P7 *p, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += p[i].v[0] * 1.5 + p[i].v[1] - p[i].v[2] * p[i].v[3] + p[i].v[4] + p[i].v[5] * 0.25 - p[i].v[6];
  return s;
}
__attribute__((noinline)) void three(struct P3 *p, int n, float k) {
  for (int i = 0; i < n; i++) { p[i].x *= k; p[i].y += p[i].x; p[i].z -= p[i].y * k; }
}
int main(void) {
  struct P7 a[37]; struct P3 b[29];
  for (int i = 0; i < 37; i++) for (int j = 0; j < 7; j++) a[i].v[j] = i * 0.5 + j * 0.125;
  for (int i = 0; i < 29; i++) { b[i].x = i; b[i].y = i * 0.5f; b[i].z = -i; }
  three(b, 29, 1.25f);
  float t = 0; for (int i = 0; i < 29; i++) t += b[i].x + b[i].y * 2 + b[i].z * 3;
  printf("%.17g %.9g\n", seven(a, 37), t);
  return 0;
}
