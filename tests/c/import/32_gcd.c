// Euclid's algorithm (recursive and iterative), lcm, modular exponentiation.
#include <stdio.h>

static unsigned long gcd(unsigned long a, unsigned long b) { return b ? gcd(b, a % b) : a; }
static long gcd_iter(long a, long b) { while (b) { long t = a % b; a = b; b = t; } return a < 0 ? -a : a; }
static unsigned long long powmod(unsigned long long b, unsigned long long e, unsigned long long m) {
    unsigned long long r = 1;
    b %= m;
    while (e) { if (e & 1) r = r * b % m; b = b * b % m; e >>= 1; }
    return r;
}

int main(void) {
    unsigned long g = 0, l = 1;
    for (unsigned long i = 1; i < 25; i++) { g += gcd(i * 84, 126); l = l / gcd(l, i) * i; }
    long gi = gcd_iter(-1071, 462);
    printf("g=%lu lcm=%lu gi=%ld pm=%llu\n", g, l, gi, powmod(7, 1000003, 1000000007));
    return 0;
}
