// Strings by hand: length, copy, reverse, compare, search.
#include <stdio.h>

static int my_strlen(const char *s) { int n = 0; while (s[n]) n++; return n; }
static void my_strcpy(char *d, const char *s) { while ((*d++ = *s++)) {} }
static void reverse(char *s) {
    int n = my_strlen(s);
    for (int i = 0, j = n - 1; i < j; i++, j--) { char t = s[i]; s[i] = s[j]; s[j] = t; }
}
static int my_strcmp(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return (unsigned char)*a - (unsigned char)*b;
}
static const char *find(const char *hay, const char *needle) {
    for (; *hay; hay++) {
        const char *h = hay, *n = needle;
        while (*n && *h == *n) { h++; n++; }
        if (!*n) return hay;
    }
    return 0;
}

int main(void) {
    char buf[64];
    my_strcpy(buf, "automatic differentiation");
    reverse(buf);
    const char *hit = find("the quick brown fox", "brown");
    printf("%s|%d|%d|%d|%s\n", buf, my_strlen(buf), my_strcmp("abc", "abd") < 0, my_strcmp("b", "a") > 0, hit);
    return 0;
}
