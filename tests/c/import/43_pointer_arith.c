// Pointer arithmetic: walking arrays of strings, pointer differences, pointers to pointers.
#include <stddef.h>
#include <stdio.h>

static const char *words[] = { "alpha", "beta", "gamma", "delta", "epsilon", 0 };

int main(void) {
    size_t total = 0;
    const char **w;
    for (w = words; *w; w++) {
        const char *p = *w;
        while (*p) p++;
        total += (size_t)(p - *w);
    }
    ptrdiff_t count = w - words;
    int arr[10];
    for (int i = 0; i < 10; i++) arr[i] = i * i;
    int *mid = arr + 5;
    int *end = &arr[10];
    int back = *(mid - 2) + mid[3] + (int)(end - mid);
    printf("total=%zu count=%td back=%d third=%s\n", total, count, back, *(words + 2) + 1);
    return 0;
}
