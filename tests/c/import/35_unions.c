// Unions for type punning: float/double bits, byte views.
#include <stdint.h>
#include <stdio.h>

typedef union { float f; uint32_t u; unsigned char b[4]; } fbits;
typedef union { double d; uint64_t u; struct { uint32_t lo, hi; } w; } dbits;

int main(void) {
    fbits x = { .f = -1.5f };
    dbits y = { .d = 3.141592653589793 };
    unsigned sum = 0;
    for (int i = 0; i < 4; i++) sum += x.b[i];
    y.u ^= 1ull << 63;
    float back;
    x.u += 1;
    back = x.f;
    printf("%08x %u %08x%08x %.15f %.9g\n", (unsigned)(x.u - 1), sum, (unsigned)y.w.hi, (unsigned)y.w.lo, y.d, back);
    return 0;
}
