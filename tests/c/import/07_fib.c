// Recursion: naive and memoised Fibonacci, mutual recursion.
#include <stdio.h>

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static long memo[90];
static long fib_memo(int n) {
    if (n < 2) return n;
    if (memo[n]) return memo[n];
    return memo[n] = fib_memo(n - 1) + fib_memo(n - 2);
}
static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void) {
    printf("fib(22)=%d fib(80)=%ld even(77)=%d odd(77)=%d\n", fib(22), fib_memo(80), is_even(77), is_odd(77));
    return 0;
}
