// Straight-line code the SLP vectorizer packs (struct fields, unrolled updates).
#include <stdio.h>

typedef struct { double x, y, z, w; } quad;

static quad axpy4(double s, quad a, quad b) {
    quad r;
    r.x = s * a.x + b.x;
    r.y = s * a.y + b.y;
    r.z = s * a.z + b.z;
    r.w = s * a.w + b.w;
    return r;
}
static void update(double *restrict p, const double *restrict q) {
    p[0] = p[0] * 0.5 + q[0];
    p[1] = p[1] * 0.5 + q[1];
    p[2] = p[2] * 0.5 + q[2];
    p[3] = p[3] * 0.5 + q[3];
}

int main(void) {
    quad a = { 1, 2, 3, 4 }, b = { 0.5, -0.5, 0.25, -0.25 };
    for (int i = 0; i < 10; i++) a = axpy4(0.9, a, b);
    double p[4] = { 1, 1, 1, 1 }, q[4] = { 0.1, 0.2, 0.3, 0.4 };
    for (int i = 0; i < 20; i++) update(p, q);
    printf("%.9f %.9f %.9f %.9f | %.9f %.9f %.9f %.9f\n", a.x, a.y, a.z, a.w, p[0], p[1], p[2], p[3]);
    return 0;
}
