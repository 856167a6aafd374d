// libc string functions next to memcpy/memset builtins.
#include <stdio.h>
#include <string.h>

int main(void) {
    char a[32], b[32];
    memset(a, 'x', sizeof a);
    a[31] = 0;
    strcpy(b, "hello, world");
    memcpy(a + 2, b, 5);
    size_t n = strlen(a);
    int c = strcmp(b, "hello") > 0;
    printf("%s %zu %d %s\n", a, n, c, b + 7);
    return 0;
}
