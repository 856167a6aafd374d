// libm on doubles.
#include <math.h>
#include <stdio.h>

int main(void) {
    double s = 0;
    for (int i = 1; i <= 20; i++) {
        double x = i * 0.3;
        s += sin(x) * cos(x / 2) + exp(-x) + log(x + 1) + sqrt(x) + pow(x, 1.5) + tanh(x / 4);
    }
    printf("%.9f %.9f %.9f %.9f %.9f\n", s, atan2(1.0, 2.0), log10(12345.0), exp2(3.3), log2(10.0));
    printf("%.6f %.6f %.6f\n", fabs(-2.5), hypot(3.0, 4.0), cbrt(27.0));
    return 0;
}
