// do-while loops, digit manipulation, early exits.
#include <stdio.h>

static int digit_sum(unsigned x) {
    int s = 0;
    do { s += x % 10; x /= 10; } while (x);
    return s;
}

static unsigned reverse_digits(unsigned x) {
    unsigned r = 0;
    do { r = r * 10 + x % 10; x /= 10; } while (x != 0);
    return r;
}

int main(void) {
    unsigned total = 0;
    int count = 0;
    for (unsigned x = 0; x < 5000; x += 37) {
        total += digit_sum(x);
        if (reverse_digits(x) == x) count++;
    }
    int i = 0;
    do { i += 3; if (i * i > 500) break; } while (1);
    printf("total=%u palindromes=%d i=%d\n", total, count, i);
    return 0;
}
