// Rounding, min/max, copysign and classification functions.
#include <math.h>
#include <stdio.h>

int main(void) {
    double xs[] = { -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, -3.7, 7.2 };
    double acc = 0;
    for (int i = 0; i < 9; i++) {
        double x = xs[i];
        acc += floor(x) * 1 + ceil(x) * 10 + trunc(x) * 100 + round(x) * 1000 + rint(x) * 10000 + nearbyint(x) * 3;
    }
    double m = fmin(3.0, -1.0) + fmax(2.0, 8.0) + copysign(3.0, -0.0) + fabs(-4.0);
    int cls = isnan(NAN) + 2 * isinf(INFINITY) + 4 * (signbit(-0.0) != 0) + 8 * isfinite(1.0);
    printf("acc=%.1f m=%.1f cls=%d lround=%ld\n", acc, m, cls, lround(-2.5));
    return 0;
}
