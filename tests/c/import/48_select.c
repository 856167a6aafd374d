// Branchless code: ternaries that become selects, boolean arithmetic.
#include <stdio.h>

static int sign(int x) { return (x > 0) - (x < 0); }
static double relu(double x) { return x > 0 ? x : 0; }
static unsigned absdiff(unsigned a, unsigned b) { return a > b ? a - b : b - a; }

int main(void) {
    long s = 0;
    double r = 0;
    unsigned d = 0;
    for (int i = -20; i <= 20; i++) {
        s += sign(i * 3 - 7) * i;
        r += relu(i * 0.75 - 3);
        d += absdiff((unsigned)(i * i), 150u);
        s += (i & 1) ? i : -i;
    }
    printf("s=%ld r=%.3f d=%u\n", s, r, d);
    return 0;
}
