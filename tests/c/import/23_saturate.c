// Clamping and saturating arithmetic patterns (min/max/abs idioms).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t sat_add_u8(uint8_t a, uint8_t b) { unsigned s = a + b; return s > 255 ? 255 : s; }
static int16_t sat_sub_i16(int16_t a, int16_t b) {
    int s = a - b;
    return s > INT16_MAX ? INT16_MAX : s < INT16_MIN ? INT16_MIN : s;
}
static int clamp(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

int main(void) {
    unsigned total = 0;
    long sum = 0;
    for (int i = 0; i < 300; i += 7) {
        total += sat_add_u8((uint8_t)i, (uint8_t)(i * 3));
        sum += sat_sub_i16((int16_t)(i * 200 - 30000), (int16_t)(15000 - i * 150));
        sum += clamp(i * 13 - 1000, -500, 700) + abs(i - 150) + labs(-(long)i * 1000);
    }
    printf("total=%u sum=%ld\n", total, sum);
    return 0;
}
