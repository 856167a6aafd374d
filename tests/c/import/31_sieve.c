// Sieve of Eratosthenes on a byte array.
#include <stdio.h>
#include <string.h>

#define LIMIT 20000
static char composite[LIMIT + 1];

int main(void) {
    memset(composite, 0, sizeof composite);
    for (int i = 2; i * i <= LIMIT; i++)
        if (!composite[i])
            for (int j = i * i; j <= LIMIT; j += i) composite[j] = 1;
    int count = 0;
    long sum = 0;
    int last = 0;
    for (int i = 2; i <= LIMIT; i++) if (!composite[i]) { count++; sum += i; last = i; }
    printf("primes=%d sum=%ld last=%d\n", count, sum, last);
    return 0;
}
