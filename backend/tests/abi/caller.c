/* Calls every function of callee.c and prints the results, including varargs printf. */
#include <stdio.h>
typedef struct { int a, b; } Small;
typedef struct { double x, y; } Pair;
typedef struct { long a; double d; } Mixed;
typedef struct { double v[4]; int tag; } Big;
signed char i8f(signed char);
unsigned short u16f(unsigned short);
int i32f(int, int, int, int, int, int, int, int);
long long i64f(long long);
__int128 i128f(__int128, __int128);
_Bool boolf(_Bool, int);
float f32f(float, float);
double f64f(double, double, double, double, double, double, double, double, double, double);
double *ptrf(double *, long);
Small smallf(Small);
Pair pairf(Pair, double);
Mixed mixedf(Mixed);
double bigf(Big);
Big bigret(double, int);
double sumv(int, ...);
long sumi(int, ...);
double mixv(const char *, ...);
double copyv(int, ...);
long stackv(int, int, int, int, int, int, int, double, ...);
double fpv(double, double, double, double, double, double, double, double, double, int, ...);
double bigv(Big, int, ...);
Big bigretv(int, ...);
int formatv(char *, int, const char *, ...);
int main(void) {
  double arr[5] = {1, 2, 3, 4, 5};
  __int128 w = i128f((__int128)1 << 70, 3);
  printf("i8 %d u16 %u i32 %d i64 %lld\n", i8f(-50), u16f(65000), i32f(1, 2, 3, 4, 5, 6, 7, 8),
         i64f(123456789));
  printf("i128 %llx %llx\n", (unsigned long long)(w >> 64), (unsigned long long)w);
  printf("bool %d %d f32 %.3f f64 %.3f\n", boolf(1, 5), boolf(0, 5), f32f(1.5f, 3.0f),
         f64f(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  printf("ptr %.1f\n", *ptrf(arr, 3));
  Small s = smallf((Small){6, 7});
  Pair p = pairf((Pair){1.5, 2.5}, 4.0);
  Mixed m = mixedf((Mixed){41, 1.25});
  Big b = {{1, 2, 3, 4}, 5};
  double bs = bigf(b);
  Big r = bigret(10.0, 9);
  printf("small %d %d pair %.2f %.2f mixed %ld %.2f\n", s.a, s.b, p.x, p.y, m.a, m.d);
  printf("big %.1f (caller copy kept %.1f) ret %.1f %.1f %d\n", bs, b.v[0], r.v[0], r.v[3], r.tag);
  printf("varargs %.2f\n", sumv(3, 1.25, 2.5, 3.75));
  printf("sumi %ld %ld\n", sumi(3, 1, -2, 3), sumi(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  double cell = 0.5;
  printf("mixv %.3f\n", mixv("idlpsdidddddddddii", 7, 2.5, -3LL, &cell, "A", 0.25, 9, 1.0, 2.0,
                              3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 11, 12));
  printf("copyv %.3f\n", copyv(10, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0));
  printf("stackv %ld\n", stackv(1, 2, 3, 4, 5, 6, 7, 0.5, 3, 4, 5, 6, 2.25));
  printf("fpv %.3f\n", fpv(1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 0.5, 0.25, 0.125));
  printf("bigv %.3f\n", bigv(b, 2, 1.5, 2.5));
  Big rv = bigretv(3, 1.5, 2.5, 3.5);
  printf("bigretv %.1f %.1f %.1f %.1f %d\n", rv.v[0], rv.v[1], rv.v[2], rv.v[3], rv.tag);
  char text[16];
  int len = formatv(text, sizeof text, "%s-%d-%.2f-%c%c", "abc", 42, 3.14159, 'x', 'y');
  printf("formatv %d [%s]\n", len, text);
  return 0;
}
