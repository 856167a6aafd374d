/* Forward mode through calls on structs: a helper returns a small struct by value, another
 * updates a struct through a pointer; tangents of the fields are checked against finite
 * differences. */
#include "fwd.h"

typedef struct {
  double re, im;
} cplx;

__attribute__((noinline)) static cplx cmul(cplx a, cplx b) {
  cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

__attribute__((noinline)) static void cacc(cplx *acc, cplx v) {
  acc->re += v.re;
  acc->im += v.im;
}

double f(double t) {
  cplx z = {cos(t), sin(2.0 * t)};
  cplx acc = {0.0, 0.0};
  cplx p = z;
  for (int k = 0; k < 4; k++) {
    cacc(&acc, p);
    p = cmul(p, z);
  }
  return acc.re * acc.re + acc.im;
}

int main(void) {
  double t = 0.6;
  double got = __enzyme_fwddiff((void *)f, t, 1.0);
  double e = FD_STEP;
  check("df/dt vs FD", got, (f(t + e) - f(t - e)) / (2.0 * e), FD_TOL);
  return check_done();
}
