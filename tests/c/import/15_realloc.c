// A growable vector with realloc.
#include <stdio.h>
#include <stdlib.h>

typedef struct { double *data; int len, cap; } vec;

static void push(vec *v, double x) {
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->data = realloc(v->data, v->cap * sizeof(double));
    }
    v->data[v->len++] = x;
}

int main(void) {
    vec v = { 0, 0, 0 };
    for (int i = 0; i < 100; i++) push(&v, i * 1.25 - 30);
    double s = 0;
    for (int i = 0; i < v.len; i++) s += v.data[i] * (i % 2 ? -1 : 1);
    printf("len=%d cap=%d s=%.3f last=%.2f\n", v.len, v.cap, s, v.data[v.len - 1]);
    free(v.data);
    return 0;
}
