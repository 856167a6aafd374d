// A generic sort taking a comparator, over ints, doubles and structs.
#include <stdio.h>
#include <string.h>

typedef int (*cmp_fn)(const void *, const void *);

static void gsort(void *base, int n, int size, cmp_fn cmp) {
    char tmp[64];
    char *b = base;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cmp(b + (j - 1) * size, b + j * size) > 0; j--) {
            memcpy(tmp, b + j * size, size);
            memcpy(b + j * size, b + (j - 1) * size, size);
            memcpy(b + (j - 1) * size, tmp, size);
        }
}
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static int cmp_dbl_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}
struct rec { int key; char label[12]; };
static int cmp_rec(const void *a, const void *b) { return ((const struct rec *)a)->key - ((const struct rec *)b)->key; }

int main(void) {
    int v[] = { 9, -2, 7, 7, 0, 3, -8 };
    double d[] = { 0.5, 2.25, -1.0, 3.5, 2.0 };
    struct rec r[] = { { 3, "three" }, { 1, "one" }, { 2, "two" } };
    gsort(v, 7, sizeof(int), cmp_int);
    gsort(d, 5, sizeof(double), cmp_dbl_desc);
    gsort(r, 3, sizeof(struct rec), cmp_rec);
    for (int i = 0; i < 7; i++) printf("%d ", v[i]);
    for (int i = 0; i < 5; i++) printf("%.2f ", d[i]);
    printf("%s %s %s\n", r[0].label, r[1].label, r[2].label);
    return 0;
}
