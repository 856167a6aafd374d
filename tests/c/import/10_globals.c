// Globals: counters, static locals, const tables, pointers to globals in initializers.
#include <stdio.h>

int counter;
static int hidden = 41;
const int primes[8] = { 2, 3, 5, 7, 11, 13, 17, 19 };
int *const hidden_ptr = &hidden;
const int *mid = &primes[4];
double weights[5] = { 0.5, 0.25, 0.125 };
struct cfg { int level; const char *name; double scale; } config = { 3, "adc", 1.5 };

static int next_id(void) { static int id = 100; return id++; }

int main(void) {
    for (int i = 0; i < 5; i++) counter += primes[i] * next_id();
    *hidden_ptr += 1;
    double w = 0;
    for (int i = 0; i < 5; i++) w += weights[i] * (i + 1);
    printf("counter=%d hidden=%d mid=%d mid[2]=%d w=%.4f cfg=%d/%s/%.2f next=%d\n", counter, hidden, *mid,
           mid[2], w, config.level, config.name, config.scale, next_id());
    return 0;
}
