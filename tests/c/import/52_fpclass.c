// Floating-point classification: clang lowers isnan/isinf/isfinite/isnormal/fpclassify
// and signbit to llvm.is.fpclass or bit tests depending on the level.
#include <float.h>
#include <math.h>
#include <stdio.h>

static volatile double sources[] = {0.0, -0.0, 1.5, -2.25, 1e-310, -1e-310, 1e308};

static int classify(double x) {
    return (isnan(x) ? 1 : 0) | (isinf(x) ? 2 : 0) | (isfinite(x) ? 4 : 0) |
           (isnormal(x) ? 8 : 0) | (signbit(x) ? 16 : 0) | (fpclassify(x) == FP_SUBNORMAL ? 32 : 0) |
           (fpclassify(x) == FP_ZERO ? 64 : 0);
}

static int classify_f(float x) {
    return (isnan(x) ? 1 : 0) | (isinf(x) ? 2 : 0) | (isnormal(x) ? 8 : 0) |
           (fpclassify(x) == FP_SUBNORMAL ? 32 : 0);
}

int main(void) {
    double values[11];
    for (int i = 0; i < 7; i++) values[i] = sources[i];
    values[7] = sources[6] * 10.0;   /* +inf */
    values[8] = -values[7];          /* -inf */
    values[9] = values[7] - values[7]; /* NaN */
    values[10] = -values[9];
    unsigned sum = 0;
    for (int i = 0; i < 11; i++) {
        int c = classify(values[i]);
        int f = classify_f((float)values[i]);
        printf("%d %d %d\n", i, c & ~16, f);
        sum = sum * 31 + (unsigned)(c & ~16) * 7 + (unsigned)f;
    }
    printf("%u\n", sum);
    return 0;
}
