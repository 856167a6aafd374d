// Integer bit tricks: popcount, leading/trailing zeros, byte swaps, rotates.
#include <stdint.h>
#include <stdio.h>

static int popcount_loop(uint32_t x) { int c = 0; while (x) { x &= x - 1; c++; } return c; }
static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> ((32 - r) & 31)); }
static uint64_t rotr64(uint64_t x, int r) { return (x >> r) | (x << ((64 - r) & 63)); }
static uint32_t bswap_manual(uint32_t x) { return (x >> 24) | ((x >> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24); }
static uint32_t next_pow2(uint32_t v) { v--; v |= v >> 1; v |= v >> 2; v |= v >> 4; v |= v >> 8; v |= v >> 16; return v + 1; }

int main(void) {
    uint32_t acc = 0;
    uint64_t acc64 = 0x0123456789abcdefull;
    int pc = 0, lz = 0, tz = 0;
    for (uint32_t x = 1; x < 5000; x = x * 3 + 1) {
        pc += __builtin_popcount(x) + popcount_loop(x);
        lz += __builtin_clz(x);
        tz += __builtin_ctz(x);
        acc ^= rotl(x, x % 32) + bswap_manual(x) + __builtin_bswap32(x);
        acc64 = rotr64(acc64, x % 64) ^ __builtin_bswap64(acc64 + x);
    }
    printf("%d %d %d %u %llu %u %d\n", pc, lz, tz, acc, (unsigned long long)acc64, next_pow2(1000),
           __builtin_popcountll(acc64));
    return 0;
}
