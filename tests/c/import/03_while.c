// While loops with data-dependent trip counts (Collatz).
#include <stdio.h>

static int collatz(unsigned long n) {
    int steps = 0;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        steps++;
    }
    return steps;
}

int main(void) {
    int best = 0, arg = 0;
    unsigned long n = 1;
    while (n < 3000) {
        int s = collatz(n);
        if (s > best) { best = s; arg = (int)n; }
        n++;
    }
    printf("longest below 3000: %d steps from %d\n", best, arg);
    return 0;
}
