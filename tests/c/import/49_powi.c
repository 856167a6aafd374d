// Integer powers: __builtin_powi (llvm.powi) and pow with small integer exponents.
#include <math.h>
#include <stdio.h>

int main(void) {
    double acc = 0;
    for (int n = -4; n <= 9; n++) acc += __builtin_powi(1.1, n) + __builtin_powi(0.9, n * 2);
    float accf = 0;
    for (int n = 0; n < 6; n++) accf += __builtin_powif(1.5f, n);
    double p = 0;
    for (int i = 1; i <= 10; i++) p += pow(i * 0.5, 2.0) + pow(i, 3.0);
    printf("%.10f %.5f %.6f\n", acc, accf, p);
    return 0;
}
