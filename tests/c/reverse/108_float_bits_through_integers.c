/* Doubles copied through integers, as clang emits for memcpy and struct copies at -O1 and
 * above (`load i64` / `store i64`, and a bitcast back to double): the copy moves the
 * adjoint. The reverse pass once dropped the adjoint of an integer that holds float
 * bits, so the derivative through such a copy was zero, with no error. Also Enzyme's
 * subdoublestore pattern (a double stored into integer-typed memory, read back as a
 * double), written in one function. Checked against analytic derivatives. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enzyme.h"

typedef struct {
  double a;
  long n;
  double b;
} Record;

/* out[0] = in[0] (bits through a uint64_t), out[1] = in[0] in[1]. */
__attribute__((noinline)) static void copy_bits(const double *in, double *out) {
  uint64_t bits;
  memcpy(&bits, in, sizeof bits);
  memcpy(out, &bits, sizeof bits);
  out[1] = in[0] * in[1];
}

/* A struct copied whole, then one field scaled by another. */
__attribute__((noinline)) static void copy_record(const Record *in, Record *out) {
  *out = *in;
  out->b *= in->a;
}

static double through_copy(double x) {
  double in[2] = {x, x}, out[2];
  copy_bits(in, out);
  return out[0] * out[1];
}

static double through_record(double x) {
  Record in = {x, 3, 2 * x}, out;
  copy_record(&in, &out);
  return out.a * out.b;
}

/* The double goes into integer-typed heap memory and is read back as a double. (Through a
 * call that is not inlined, the i64 argument carrying it is still a clear error.) */
static double subdoublestore(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  uint64_t *data = malloc(2 * sizeof(uint64_t));
  double as_double;
  memcpy(&as_double, &bits, sizeof as_double);
  *(double *)data = as_double;
  data[1] = 3;
  double y = ((double *)data)[0];
  free(data);
  return y * y;
}

int main(void) {
  double in[2] = {3.0, 4.0}, din[2] = {0.5, 0.0}, out[2] = {9.0, 9.0}, dout[2] = {1.0, 2.0};
  __enzyme_autodiff((void *)copy_bits, enzyme_dup, in, din, enzyme_dup, out, dout);
  check("copy_bits: d/din_0", din[0], 0.5 + 1.0 + 2.0 * 4.0, EXACT_TOL);
  check("copy_bits: d/din_1", din[1], 2.0 * 3.0, EXACT_TOL);
  check("copy_bits: overwritten out_0's shadow", dout[0], 0.0, 0.0);
  check("copy_bits: overwritten out_1's shadow", dout[1], 0.0, 0.0);
  /* x^3 and 2x^3. */
  check("through_copy", __enzyme_autodiff((void *)through_copy, 1.5), 3 * 1.5 * 1.5, EXACT_TOL);
  check("through_record", __enzyme_autodiff((void *)through_record, 1.5), 6 * 1.5 * 1.5,
        EXACT_TOL);
  check("subdoublestore", __enzyme_autodiff((void *)subdoublestore, -0.7), 2 * -0.7, EXACT_TOL);
  return check_done();
}
