// 128-bit integers: products, division, shifts.
#include <stdio.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

int main(void) {
    u128 x = (u128)0xfedcba9876543210ull * 0x123456789abcdefull;
    i128 y = -(i128)x / 12345;
    u128 z = x >> 17 ^ (x << 9);
    unsigned long long hi = (unsigned long long)(x >> 64), lo = (unsigned long long)x;
    printf("%llx %llx %lld %llx %d\n", hi, lo, (long long)(y % 1000000007), (unsigned long long)(z >> 60),
           (int)(x % 97));
    return 0;
}
