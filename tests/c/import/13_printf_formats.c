// printf conversions the interpreter has to reproduce byte for byte.
#include <stdio.h>

int main(void) {
    int i = -42;
    unsigned u = 3000000000u;
    long l = -1234567890123L;
    unsigned long long ull = 18446744073709551615ull;
    printf("[%d] [%5d] [%-5d] [%05d] [%+d]\n", i, i, i, 42, 42);
    printf("[%u] [%x] [%X] [%o] [%#x]\n", u, 255u, 48879u, 8u, 255u);
    printf("[%ld] [%llu] [%lld]\n", l, ull, (long long)l);
    printf("[%c%c%c] [%s] [%10s] [%-10s] [%.3s]\n", 'a', 'd', 'c', "str", "right", "left", "truncate");
    printf("[%f] [%.2f] [%10.4f] [%-10.1f] [%e] [%g] [%g] [%g]\n", 3.14159, 2.71828, -1.5, 0.25, 12345.678,
           0.0001, 1e20, 100.0);
    printf("[%%] [%hd] [%hhu] [%zu]\n", (short)-7, (unsigned char)250, sizeof(double));
    return 0;
}
