// goto-based control flow: irreducible-looking jumps, retry loops, cleanup labels.
#include <stdio.h>

static int search(const int *v, int n, int key) {
    int i = 0;
again:
    if (i >= n) goto missing;
    if (v[i] == key) goto found;
    i++;
    goto again;
found:
    return i;
missing:
    return -1;
}

int main(void) {
    int v[] = { 5, 3, 8, 1, 9, 2 };
    int total = 0, tries = 0;
    for (int k = 0; k < 10; k++) total += search(v, 6, k);
retry:
    tries++;
    if (tries < 5) goto retry;
    printf("total=%d tries=%d\n", total, tries);
    return 0;
}
