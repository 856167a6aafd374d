// Large structs by value (byval) and returned (sret), arrays inside, nested calls.
#include <stdio.h>

typedef struct { int id; double v[6]; char name[10]; } rec;

static rec make(int id) {
    rec r;
    r.id = id;
    for (int i = 0; i < 6; i++) r.v[i] = id * 1.5 + i;
    for (int i = 0; i < 9; i++) r.name[i] = (char)('A' + (id + i) % 26);
    r.name[9] = 0;
    return r;
}
static double norm1(rec r) { double s = 0; for (int i = 0; i < 6; i++) s += r.v[i] < 0 ? -r.v[i] : r.v[i]; return s; }
static rec scale(rec r, double k) { for (int i = 0; i < 6; i++) r.v[i] *= k; r.id += 100; return r; }

int main(void) {
    rec a = make(3);
    rec b = scale(a, -2.0);
    rec c = scale(scale(make(7), 0.5), 3.0);
    printf("%d %.2f %d %.2f %s %d %.2f %s\n", a.id, norm1(a), b.id, norm1(b), b.name, c.id, c.v[5], c.name);
    return 0;
}
