// Binary search and lower_bound on sorted arrays.
#include <stdio.h>

static int bsearch_i(const int *v, int n, int key) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (v[mid] == key) return mid;
        if (v[mid] < key) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}
static int lower_bound(const double *v, int n, double x) {
    int lo = 0, len = n;
    while (len > 0) { int half = len / 2; if (v[lo + half] < x) { lo += half + 1; len -= half + 1; } else len = half; }
    return lo;
}

int main(void) {
    int v[100];
    double d[64];
    for (int i = 0; i < 100; i++) v[i] = i * 3 + 1;
    for (int i = 0; i < 64; i++) d[i] = i * i * 0.5;
    int found = 0, pos = 0;
    for (int k = 0; k < 320; k++) { int r = bsearch_i(v, 100, k); found += r >= 0; pos += r; }
    int lb = 0;
    for (int k = 0; k < 50; k++) lb += lower_bound(d, 64, k * 13.7);
    printf("found=%d pos=%d lb=%d\n", found, pos, lb);
    return 0;
}
