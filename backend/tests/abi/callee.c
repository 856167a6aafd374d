/* Functions with every argument kind; built by clang or by adc (see tests/abi.rs). */
#include <stdarg.h>
#include <stdio.h>
typedef struct { int a, b; } Small;          /* 8 bytes: one integer register */
typedef struct { double x, y; } Pair;        /* two SSE registers */
typedef struct { long a; double d; } Mixed;  /* rax + xmm0 */
typedef struct { double v[4]; int tag; } Big; /* > 16 bytes: byval on the stack / sret */

signed char i8f(signed char x) { return (signed char)(x * 3); }
unsigned short u16f(unsigned short x) { return (unsigned short)(x + 1000); }
int i32f(int a, int b, int c, int d, int e, int f, int g, int h) {
  return a - b + c - d + e - f + g - h; /* two of them on the stack */
}
long long i64f(long long x) { return x * -7; }
__int128 i128f(__int128 x, __int128 y) { return x * y + 1; }
_Bool boolf(_Bool b, int x) { return b ? x > 0 : x < 0; }
float f32f(float x, float y) { return x * y - 0.5f; }
double f64f(double a, double b, double c, double d, double e, double f, double g, double h,
            double i, double j) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}
double *ptrf(double *p, long i) { return p + i; }
Small smallf(Small s) { Small r = {s.a + s.b, s.a * s.b}; return r; }
Pair pairf(Pair p, double k) { Pair r = {p.x * k, p.y + k}; return r; }
Mixed mixedf(Mixed m) { Mixed r = {m.a + 1, m.d * 2}; return r; }
double bigf(Big b) { b.v[0] += 100; return b.v[0] + b.v[1] + b.v[2] + b.v[3] + b.tag; }
Big bigret(double x, int tag) { Big b = {{x, x + 1, x + 2, x + 3}, tag}; return b; }
double sumv(int n, ...) {
  /* adc cannot define variadic functions yet: this one stays with clang in both builds
     (see ABI_CLANG_ONLY in tests/abi.rs). */
  va_list ap;
  va_start(ap, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, double);
  va_end(ap);
  return s;
}
