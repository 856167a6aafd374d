// char/short arithmetic: promotions, truncation, sign and zero extension.
#include <stdint.h>
#include <stdio.h>

int main(void) {
    int8_t a = 100;
    uint8_t b = 200;
    int16_t s = -30000;
    uint16_t us = 60000;
    int32_t acc = 0;
    for (int i = 0; i < 50; i++) {
        a = (int8_t)(a + 7);
        b = (uint8_t)(b * 3 + 1);
        s = (int16_t)(s - 1234);
        us = (uint16_t)(us + 4321);
        acc += a + b + s + us + (int8_t)b + (uint8_t)a;
    }
    char c = (char)0xF0;
    printf("%d %u %d %u %d %d\n", a, b, s, us, acc, c >> 2);
    return 0;
}
