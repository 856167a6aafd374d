// Structs passed by value whose size is not a multiple of 8 (20 and 28 bytes, and a packed
// 13-byte one): x86-64 passes them in the stack's argument area, rounded up to eightbytes.
#include <stdio.h>

struct Five { int a[5]; };
struct Seven { long x, y, z; int w; } __attribute__((packed));
struct Thirteen { char c; long l; int i; } __attribute__((packed));

static long five(struct Five f, int k, struct Five g) {
    long s = k;
    for (int i = 0; i < 5; i++) s = s * 3 + f.a[i] - g.a[i];
    return s;
}

static long seven(struct Seven s, struct Thirteen t) {
    return s.x * 2 + s.y * 3 + s.z * 5 + s.w + t.c * 7 + t.l * 11 + t.i;
}

int main(void) {
    struct Five f = {{1, 2, 3, 4, 5}}, g = {{10, 20, 30, 40, 50}};
    struct Seven s = {100, 200, 300, 7};
    struct Thirteen t = {3, 1000, 9};
    printf("%ld %ld\n", five(f, 42, g), seven(s, t));
    return 0;
}
