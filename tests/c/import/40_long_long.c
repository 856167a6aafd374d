// 64-bit arithmetic: hashing with wrap-around, mixed signedness, 32x32->64 products.
#include <stdint.h>
#include <stdio.h>

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ull; }
    return h;
}
static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(void) {
    uint64_t st = 42, x = 0;
    for (int i = 0; i < 100; i++) x ^= splitmix(&st);
    int64_t m = (int64_t)(int32_t)0x89abcdef * 0x12345;
    uint32_t p = 0xfffffff1u;
    uint64_t wide = (uint64_t)p * p;
    printf("%llu %llu %lld %llu\n", (unsigned long long)fnv1a("adc"), (unsigned long long)x, (long long)m,
           (unsigned long long)wide);
    return 0;
}
