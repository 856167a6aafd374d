// Structs passed and returned by value (byval/sret at the ABI level), nested structs.
#include <stdio.h>

typedef struct { double x, y; } vec2;
typedef struct { vec2 min, max; int id; } box;
typedef struct { double m[4][4]; char tag[8]; } big;

static vec2 add(vec2 a, vec2 b) { vec2 r = { a.x + b.x, a.y + b.y }; return r; }
static box grow(box b, double d) {
    b.min.x -= d; b.min.y -= d; b.max.x += d; b.max.y += d; b.id++;
    return b;
}
static big make_big(int k) {
    big b;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) b.m[i][j] = k * i + j;
    for (int i = 0; i < 7; i++) b.tag[i] = 'a' + (k + i) % 26;
    b.tag[7] = 0;
    return b;
}
static double trace(big b) { return b.m[0][0] + b.m[1][1] + b.m[2][2] + b.m[3][3]; }

int main(void) {
    vec2 p = { 1.5, -2.0 }, q = { 0.25, 4.0 };
    vec2 s = add(p, q);
    box b = { { 0, 0 }, { 1, 2 }, 7 };
    box g = grow(b, 0.5);
    big bb = make_big(3);
    printf("%.3f %.3f | %.2f %.2f %.2f %.2f %d | %.1f %s\n", s.x, s.y, g.min.x, g.min.y,
           g.max.x, g.max.y, g.id, trace(bb), bb.tag);
    return 0;
}
