// Signed and unsigned division, remainders and shifts, by constants and by variables.
#include <stdio.h>

int main(int argc, char **argv) {
    long acc = 0;
    unsigned long uacc = 0;
    int d = argc + 6;
    for (int i = -50; i <= 50; i++) {
        acc += i / 7 + i % 7 + i / d + i % d + (i >> 2) + (i / 4) + i / -3;
        unsigned u = (unsigned)i;
        uacc += u / 10 + u % 10 + (u >> 3) + u / (unsigned)d;
    }
    long long big = -9000000000000000000LL;
    printf("%ld %lu %lld %lld %llu\n", acc, uacc, big / 7, big % 1000, (unsigned long long)big >> 5);
    return 0;
}
