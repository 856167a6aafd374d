// Dense switches (jump tables / lookup tables) and sparse ones, with fallthrough.
#include <stdio.h>

static int dense(int x) {
    switch (x) {
    case 0: return 10;
    case 1: return 7;
    case 2: return -3;
    case 3: return 22;
    case 4: return 5;
    case 5: return 0;
    case 6: return 13;
    default: return -1;
    }
}
static int sparse(long x) {
    int r = 0;
    switch (x) {
    case -100: r += 1;
    case 7: r += 2; break;
    case 1000: r += 4; break;
    case 123456789: r += 8;
    default: r += 16;
    }
    return r;
}
static const char *name(char c) {
    switch (c) { case 'a': case 'e': case 'i': case 'o': case 'u': return "vowel"; case ' ': return "space"; default: return "other"; }
}

int main(void) {
    int s = 0;
    for (int i = -2; i < 10; i++) s = s * 3 + dense(i);
    long xs[] = { -100, 7, 1000, 123456789, 5 };
    for (int i = 0; i < 5; i++) printf("%d ", sparse(xs[i]));
    printf("| %d %s %s %s\n", s, name('e'), name(' '), name('z'));
    return 0;
}
