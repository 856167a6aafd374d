// Integer loops that vectorize without fast-math: sums, min/max, conditional counts.
#include <stdio.h>

#define N 777
int v[N];
short sh[N];
unsigned char bytes[N];

int main(void) {
    for (int i = 0; i < N; i++) { v[i] = (i * 7919) % 1000 - 500; sh[i] = (short)(i * 3 - 1000); bytes[i] = (unsigned char)(i * 31); }
    long sum = 0;
    int mn = v[0], mx = v[0], pos = 0;
    for (int i = 0; i < N; i++) {
        sum += v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        pos += v[i] > 0;
    }
    int ssum = 0;
    unsigned bx = 0;
    for (int i = 0; i < N; i++) { ssum += sh[i] * 2; bx ^= bytes[i]; }
    for (int i = 0; i < N; i++) v[i] = v[i] * 3 + (v[i] >> 2);
    long check = 0;
    for (int i = 0; i < N; i++) check += (long)v[i] * (i & 15);
    printf("%ld %d %d %d %d %u %ld\n", sum, mn, mx, pos, ssum, bx, check);
    return 0;
}
