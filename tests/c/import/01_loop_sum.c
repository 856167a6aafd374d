// Counted loops over integers and doubles.
#include <stdio.h>

int main(void) {
    long sum = 0;
    for (int i = 1; i <= 1000; i++) sum += i * (i % 7);
    double h = 0.0;
    for (int k = 1; k <= 200; k++) h += 1.0 / k;
    printf("sum=%ld harmonic=%.10f\n", sum, h);
    return 0;
}
