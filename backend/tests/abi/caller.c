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
  return 0;
}
