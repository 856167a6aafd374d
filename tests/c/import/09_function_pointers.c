// Function pointers: tables, callbacks, pointers stored in structs and globals.
#include <stdio.h>

typedef int (*binop)(int, int);
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int maxi(int a, int b) { return a > b ? a : b; }
static const binop table[] = { add, sub, mul, maxi };
struct op { const char *name; binop f; };
static struct op ops[] = { { "add", add }, { "mul", mul } };

static int fold(const int *xs, int n, binop f, int init) {
    for (int i = 0; i < n; i++) init = f(init, xs[i]);
    return init;
}
static double apply(double (*g)(double), double x) { return g(g(x)); }
static double half(double x) { return x / 2; }

int main(int argc, char **argv) {
    int xs[] = { 3, -1, 4, 1, -5, 9, 2, -6 };
    for (int k = 0; k < 4; k++) printf("table[%d] -> %d\n", k, fold(xs, 8, table[k], k));
    binop chosen = argc > 5 ? sub : ops[1].f;
    printf("%s %d %s %.3f\n", ops[1].name, chosen(6, 7), ops[0].name, apply(half, 10.0));
    return 0;
}
