// Sorting: quicksort (recursive) and insertion sort, with a checksum.
#include <stdio.h>

static void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }
static void quicksort(int *v, int lo, int hi) {
    if (lo >= hi) return;
    int p = v[(lo + hi) / 2], i = lo, j = hi;
    while (i <= j) {
        while (v[i] < p) i++;
        while (v[j] > p) j--;
        if (i <= j) swap(&v[i++], &v[j--]);
    }
    quicksort(v, lo, j);
    quicksort(v, i, hi);
}
static void insertion(double *v, int n) {
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
        v[j + 1] = x;
    }
}

int main(void) {
    int v[200];
    unsigned seed = 12345;
    for (int i = 0; i < 200; i++) { seed = seed * 1103515245u + 12345u; v[i] = (int)(seed >> 16) % 1000; }
    quicksort(v, 0, 199);
    double d[50];
    for (int i = 0; i < 50; i++) d[i] = ((i * 37) % 50) * 0.1;
    insertion(d, 50);
    unsigned long check = 0;
    int sorted = 1;
    for (int i = 0; i < 200; i++) { check = check * 7 + v[i]; if (i && v[i - 1] > v[i]) sorted = 0; }
    printf("sorted=%d check=%lu min=%d max=%d d=%.1f,%.1f\n", sorted, check % 1000000007, v[0], v[199], d[0], d[49]);
    return 0;
}
