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
  va_list ap;
  va_start(ap, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, double);
  va_end(ap);
  return s;
}
/* Variadic definitions (the entry thunk and va_start of the adc backend): ints, mixed
   kinds, more arguments than registers, va_copy, named parameters on the stack and in
   vector registers, a byval named parameter, an sret return, vsnprintf. */
long sumi(int n, ...) {
  va_list ap;
  va_start(ap, n);
  long s = 0;
  for (int i = 0; i < n; i++) s = s * 3 + va_arg(ap, int);
  va_end(ap);
  return s;
}
double mixv(const char *kinds, ...) {
  va_list ap;
  va_start(ap, kinds);
  double s = 0;
  for (const char *k = kinds; *k; k++) {
    switch (*k) {
    case 'i': s = s * 2 + va_arg(ap, int); break;
    case 'l': s = s * 2 + (double)va_arg(ap, long long); break;
    case 'd': s = s * 2 + va_arg(ap, double); break;
    case 'p': s = s * 2 + *va_arg(ap, double *); break;
    case 's': s = s * 2 + va_arg(ap, const char *)[0]; break;
    }
  }
  va_end(ap);
  return s;
}
double copyv(int n, ...) {
  va_list ap, aq;
  va_start(ap, n);
  va_copy(aq, ap);
  double first = 0, second = 0;
  for (int i = 0; i < n; i++) first += va_arg(ap, double) * (i + 1);
  for (int i = 0; i < n; i++) second += va_arg(aq, double);
  va_end(aq);
  va_end(ap);
  return first * 1000 + second;
}
long stackv(int a, int b, int c, int d, int e, int f, int g, double x, ...) {
  /* g is the first stack argument; the variable ones follow it there and in registers. */
  va_list ap;
  va_start(ap, x);
  long s = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + (long)(x * 10);
  int n = va_arg(ap, int);
  for (int i = 0; i < n; i++) s = s * 5 + va_arg(ap, int);
  double y = va_arg(ap, double);
  va_end(ap);
  return s + (long)(y * 100);
}
double fpv(double a, double b, double c, double d, double e, double f, double g, double h,
           double i, int n, ...) {
  /* the nine named doubles take every vector register and one stack slot */
  va_list ap;
  va_start(ap, n);
  double s = a + b + c + d + e + f + g + h + i;
  for (int k = 0; k < n; k++) s = s * 2 + va_arg(ap, double);
  va_end(ap);
  return s;
}
double bigv(Big b, int n, ...) {
  va_list ap;
  va_start(ap, n);
  double s = b.v[0] + b.v[3] + b.tag;
  for (int i = 0; i < n; i++) s = s * 2 + va_arg(ap, double);
  va_end(ap);
  return s;
}
Big bigretv(int n, ...) {
  va_list ap;
  va_start(ap, n);
  Big b = {{0, 0, 0, 0}, n};
  for (int i = 0; i < n && i < 4; i++) b.v[i] = va_arg(ap, double);
  va_end(ap);
  return b;
}
int formatv(char *buf, int size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}
