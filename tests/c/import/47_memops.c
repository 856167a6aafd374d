// memcpy/memset/memmove on arrays and structs (become llvm.mem* intrinsics).
#include <stdio.h>
#include <string.h>

struct s { int a[8]; double d; };

int main(void) {
    struct s x, y;
    memset(&x, 0, sizeof x);
    for (int i = 0; i < 8; i++) x.a[i] = i * i;
    x.d = 2.5;
    y = x;
    memmove(y.a + 1, y.a, 6 * sizeof(int));
    char buf[40];
    memset(buf, '-', 39);
    buf[39] = 0;
    memcpy(buf + 10, "overlap", 7);
    memmove(buf + 12, buf + 10, 7);
    int s = 0;
    for (int i = 0; i < 8; i++) s += y.a[i] * (i + 1);
    printf("%d %.1f %s\n", s, y.d, buf);
    return 0;
}
